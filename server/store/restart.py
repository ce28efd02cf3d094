"""What a start reads back: the open tables' journals, the sessions of the earlier run with the
server's HMAC key, and in a cluster the tables of members that are gone and a session of any member.

Each reads in a transaction of its own, through the async engine, before or beside the writer's
queue: none of them waits for it."""

from __future__ import annotations

import json
import os
from typing import Any

from sqlalchemy import and_, delete, func, or_, select, text, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import Session

from server.hub.model import ACCOUNT_MARK
from server.hub.persistence import Account, LiveSessions, SavedSession
from server.protocol.codec import nick_key
from server.store.accounts import account_of, ignored_by
from server.store.database import insert_with_on_conflict
from server.store.journalrows import journal_of, set_aside
from server.store.models import JournalEntry, LiveSession, LiveTable, Member, ServerState, User
from server.store.serverlock import MEMBER_LOCK_CLASS
from server.store.sessionrows import EVENT_MARK, HMAC_KEY, alive_at_key, saved_session

CHAT_JOURNAL_KEPT = 10_000  # newest entries kept of the lobby's and private chat's journals (uid <= 0)

Journals = dict[int, list[tuple[int, str, dict[str, Any]]]]  # entries (seq, kind, data) by table, in order


async def load_journal(maker: async_sessionmaker[AsyncSession], member: int) -> tuple[Journals, int]:
    """The journals of `member`'s tables still open and its own (chat, k), and the first table number
    never used; the chat journals are cut to their newest CHAT_JOURNAL_KEPT entries first."""
    async with maker.begin() as session:
        chats = select(JournalEntry.uid, func.max(JournalEntry.seq)).where(
            JournalEntry.uid <= 0, JournalEntry.member == member
        )
        for uid, newest in (await session.execute(chats.group_by(JournalEntry.uid))).all():
            await session.execute(
                delete(JournalEntry).where(
                    *journal_of(uid, member), JournalEntry.seq <= newest - CHAT_JOURNAL_KEPT
                )
            )
        owned = select(LiveTable.uid).where(LiveTable.owner == member)
        rows = await session.execute(
            select(JournalEntry.uid, JournalEntry.seq, JournalEntry.kind, JournalEntry.data)
            .where(
                or_(
                    and_(JournalEntry.uid <= 0, JournalEntry.member == member),
                    and_(JournalEntry.uid > 0, JournalEntry.uid.in_(owned)),
                )
            )
            .order_by(JournalEntry.uid, JournalEntry.seq)
        )
        journals = await _read_journals(session, rows, member)
        last_uid = await session.scalar(select(func.max(LiveTable.uid)))
    return journals, (last_uid or 0) + 1


async def load_sessions(maker: async_sessionmaker[AsyncSession], member: int) -> tuple[LiveSessions, bytes]:
    """`member`'s sessions of the earlier run, registered players' accounts, the event numbers reserved
    and the last heartbeat; and the server's HMAC key, made at the first start."""
    async with maker.begin() as session:
        state = dict((await session.execute(select(ServerState.name, ServerState.value))).all())
        if HMAC_KEY not in state:  # members of a cluster starting together on a new database: one key
            insert = insert_with_on_conflict(session.get_bind().dialect, ServerState.__table__)
            made = insert.values(name=HMAC_KEY, value=os.urandom(32).hex())
            await session.execute(made.on_conflict_do_nothing(index_elements=["name"]))
            state[HMAC_KEY] = (
                await session.scalars(select(ServerState.value).where(ServerState.name == HMAC_KEY))
            ).one()
        rows = (await session.scalars(select(LiveSession).where(LiveSession.owner == member))).all()
        keys = {nick_key(row.nick) for row in rows if row.registered}
        users = (await session.scalars(select(User).where(User.nick_key.in_(keys)))).all() if keys else []
        ignored = await ignored_by(session, [user.id for user in users])
    live = LiveSessions(
        sessions=[saved_session(row) for row in rows],
        accounts={user.nick_key: account_of(user, ignored[user.id]) for user in users},
        event_mark=int(state.get(EVENT_MARK, 0)),
        alive_at=float(alive) if (alive := state.get(alive_at_key(member))) is not None else None,
    )
    return live, bytes.fromhex(state[HMAC_KEY])


async def take_orphans(
    maker: async_sessionmaker[AsyncSession], me: int, alive: tuple[str, ...]
) -> tuple[Journals, bool]:
    """The open tables of members that are not alive become member `me`'s, with their journals
    (docs/cluster.md, "Take-over"). A member is taken from only while nobody holds its own lock
    (serverlock.hold_member): a live member, or one restarting and reading its tables back, holds
    it; and of several members taking over at once, the lock and the UPDATE give each table to one.
    Also whether a member not alive still held its lock (it is stopping or starting: look again)."""
    held = False
    async with maker.begin() as session:
        named = dict((await session.execute(select(Member.id, Member.name))).all())
        owners = await session.scalars(
            select(LiveTable.owner).where(LiveTable.closed_at.is_(None), LiveTable.owner != me).distinct()
        )
        uids: list[int] = []
        for owner in owners.all():
            if named.get(owner) in alive:
                continue
            locked = await session.scalar(
                text("SELECT pg_try_advisory_xact_lock(:kind, :number)"),
                {"kind": MEMBER_LOCK_CLASS, "number": owner},
            )
            if not locked:
                held = True
                continue
            taken = await session.scalars(
                update(LiveTable)
                .where(LiveTable.owner == owner, LiveTable.closed_at.is_(None))
                .values(owner=me)
                .returning(LiveTable.uid)
            )
            uids += taken.all()
        if not uids:
            return {}, held
        rows = await session.execute(
            select(JournalEntry.uid, JournalEntry.seq, JournalEntry.kind, JournalEntry.data)
            .where(JournalEntry.uid.in_(uids))
            .order_by(JournalEntry.uid, JournalEntry.seq)
        )
        journals = await _read_journals(session, rows, me)
    return {uid: journals.get(uid, []) for uid in uids}, held


async def session_of(
    maker: async_sessionmaker[AsyncSession], id_hmac: str
) -> tuple[str, SavedSession, Account | None] | None:
    """A live session of any member of a cluster: the name of the member serving it, the session as
    that member last wrote it, and a registered player's account (docs/cluster.md, "Routing")."""
    async with maker.begin() as session:
        found = (
            await session.execute(
                select(LiveSession, Member.name)
                .join(Member, Member.id == LiveSession.owner)
                .where(LiveSession.id_hmac == id_hmac)
            )
        ).first()
        if found is None:
            return None
        row, owner = found
        account = None
        if row.registered:
            user = await session.scalar(select(User).where(User.nick_key == nick_key(row.nick)))
            if user is not None:
                account = account_of(user, (await ignored_by(session, [user.id]))[user.id])
    return owner, saved_session(row), account


async def _read_journals(session: AsyncSession, rows: Any, member: int) -> Journals:
    """Journal rows by table, in order; rows that do not parse are set aside, not replayed."""
    journals: Journals = {}
    unreadable: list[tuple[int, int, str, str, str]] = []
    for uid, seq, kind, data in rows:
        try:
            parsed = json.loads(data)
        except ValueError as error:
            unreadable.append((uid, seq, kind, data, f"not JSON: {error}"))
            continue
        if not isinstance(parsed, dict):
            unreadable.append((uid, seq, kind, data, f"not a JSON object: {type(parsed).__name__}"))
            continue
        journals.setdefault(uid, []).append((seq, kind, parsed))
    if unreadable:
        await session.run_sync(_set_aside_unreadable, unreadable, member)
    await _number_seats(session, journals)
    return journals


async def _number_seats(session: AsyncSession, journals: Journals) -> None:
    """A registered player's seat journalled before seats named the account's number (`@<nick key>`, by
    a version before 2026-12-02) is the account's whose nick it is now (hub.model.owns): it takes that
    number, here and in its row, as migration 0020 gave it to the rows then, so that the seat follows
    the account's renames (server/hub/seating.py). One whose nick no account has now follows nobody."""
    old = [
        (uid, seq, data)
        for uid, entries in journals.items()
        for seq, kind, data in entries
        if kind == "seat" and _unnumbered(data.get("owner"))
    ]
    keys = {data["owner"][1:] for _, _, data in old}
    if not keys:
        return
    numbers = dict(
        (await session.execute(select(User.nick_key, User.id).where(User.nick_key.in_(keys)))).all()
    )
    for uid, seq, data in old:
        number = numbers.get(data["owner"][1:])
        if number is not None:
            data["owner"] = f"{data['owner']}{ACCOUNT_MARK}{number}"
            await session.execute(
                update(JournalEntry)
                .where(JournalEntry.uid == uid, JournalEntry.seq == seq, JournalEntry.kind == "seat")
                .values(data=json.dumps(data))
            )


def _unnumbered(owner: object) -> bool:
    """Whether `owner` is a registered player's seat key without its account's number."""
    return isinstance(owner, str) and owner.startswith("@") and ACCOUNT_MARK not in owner


def _set_aside_unreadable(session: Session, rows: list[tuple[int, int, str, str, str]], member: int) -> None:
    for uid, seq, kind, data, reason in rows:
        set_aside(session, member, uid, seq, reason, (kind, data))
