"""A session taken by the member its requests reach (docs/cluster.md, "Routing"): one owner at a time.

Two members serving one session answer its client with two numberings of its commands and hold its nick
twice (issue 44: commands "done" and dropped, `err.nickInUse` for a minute, a player's entry at a table
overwritten by their own copy). So a session changes owner in one statement that names the owner it is
taken from, and is taken from a member that did not hand it over only while nobody holds that member's
own lock (serverlock.hold_member): a member that is alive, or restarting and reading its sessions back,
keeps them; its sessions are asked for instead.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Literal

from sqlalchemy import or_, select, text, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from server.hub.persistence import Account, SavedSession
from server.protocol.codec import nick_key
from server.store.accounts import account_of, ignored_by
from server.store.models import JournalEntry, LiveSession, Member, User
from server.store.serverlock import MEMBER_LOCK_CLASS
from server.store.sessionrows import saved_session

HELD: Literal["held"] = "held"  # the member serving it holds its lock: alive, or starting


@dataclass(frozen=True)
class TakenSession:
    saved: SavedSession
    account: Account | None


class SessionTaker:
    def __init__(self, maker: async_sessionmaker[AsyncSession], member: int) -> None:
        self.sessions, self.member = maker, member

    async def take(
        self, id_hmac: str, owner: str, *, handed: bool, k_journal: int
    ) -> TakenSession | Literal["held"] | None:
        """The session `owner` serves becomes this member's, as the store has it.

        `handed`: the owner let it go and said so once its row was written. Otherwise the owner did not
        answer, and the session is taken only if the owner's lock is free (it is dead), with the k its
        journal of sessions' k (`k_journal`, that member's own) noted after the row was last written: the
        k its client was shown, so that no command it acknowledged is done twice. None: the session is no
        longer `owner`'s (ended, or taken by another member meanwhile): look again."""
        async with self.sessions.begin() as session:
            owner_id = await session.scalar(select(Member.id).where(Member.name == owner))
            if owner_id is None:
                return None
            if not handed:
                locked = await session.scalar(
                    text("SELECT pg_try_advisory_xact_lock(:kind, :number)"),
                    {"kind": MEMBER_LOCK_CLASS, "number": owner_id},
                )
                if not locked:
                    return HELD
            row = (
                await session.scalars(
                    update(LiveSession)
                    .where(LiveSession.id_hmac == id_hmac, LiveSession.owner == owner_id)
                    .values(owner=self.member)
                    .returning(LiveSession)
                )
            ).first()
            if row is None:
                return None
            saved = saved_session(row)
            if not handed:
                saved = await _with_noted_k(session, saved, owner_id, k_journal)
            account = None
            if saved.registered:
                user = await session.scalar(_account_of_session(saved.nick))
                if user is not None:
                    account = account_of(user, (await ignored_by(session, [user.id]))[user.id])
        return TakenSession(saved, account)


def _account_of_session(nick: str):
    """The account of a registered session: the one with its nick, else the one logging in with it (an
    admin renamed it while the session was live: it plays on under the old nick until its next login,
    as on the member it comes from; before, it came here as a guest's). No two accounts match: a nick
    some account logs in with is nobody else's (Accounts.register, Accounts.rename)."""
    key = nick_key(nick)
    return (
        select(User)
        .where(or_(User.nick_key == key, User.login_key == key))
        .order_by((User.nick_key == key).desc())
        .limit(1)
    )


async def _with_noted_k(
    session: AsyncSession, saved: SavedSession, owner: int, k_journal: int
) -> SavedSession:
    """With the newest k the owner's journal noted for the session (server/hub/saved.py) where that is
    larger: the row takes it only at the owner's heartbeat, which a member that died never wrote. The
    newest, not the largest: a login again notes k 0 there (server/hub/sessions.py)."""
    entries = await session.scalars(
        select(JournalEntry.data)
        .where(
            JournalEntry.uid == k_journal,
            JournalEntry.member == owner,
            JournalEntry.data.contains(saved.id_hmac),
        )
        .order_by(JournalEntry.seq.desc())
    )
    for data in entries:
        noted = json.loads(data)
        if isinstance(noted, dict) and noted.get("s") == saved.id_hmac and isinstance(noted.get("k"), int):
            return replace(saved, last_command=max(saved.last_command, noted["k"]))
    return saved
