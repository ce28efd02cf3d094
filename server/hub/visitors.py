"""People of other members of a cluster at this member's tables (docs/cluster.md, "Tables across
members"): the owner's side.

Each such person is a *visitor* here: a Player that sits at the table like anyone (its seat, its
presence, its `pa`/`pd`), in no roster (its own member logs it in and out and times it out), whose
lines go to its member (LocalBus.send). The table's events go to every member with people at it
(LocalBus.publish, `Channel.members`), and that member shows them to its people (server/hub/mirrors.py).
What visitors do at a table comes as actions, done here as if they had sent them to this member.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from server.hub.acknowledged import UNCONFIRMED_AT_MOST
from server.hub.actions import Action
from server.hub.bus import LocalBus
from server.hub.context import Context
from server.hub.lobby import Lobby
from server.hub.model import LOBBY, Player, table_number
from server.hub.persistence import StorageFailing
from server.hub.rates import Bucket
from server.hub.tables import Tables
from server.hub.visiting import visiting
from server.logs import Fields
from server.protocol.codec import ProtocolError

log = logging.getLogger(__name__)

# A visitor's actions remembered, so that one sent again is not done twice (Visitors.act): more than it
# may send while its member waits for an answer (10 a second and bursts of 30 for UNCONFIRMED_AT_MOST).
DONE_KEPT = 512


class Visitors:
    def __init__(
        self, ctx: Context, bus: LocalBus, tables: Tables, lobby: Lobby, actions: dict[str, Action]
    ) -> None:
        self.ctx, self.bus, self.tables, self.lobby = ctx, bus, tables, lobby
        self.actions = actions  # what a visitor may do at a table: what a person here may (actions.py)
        self.by_key: dict[tuple[str, str], Player] = {}  # (member, nick) -> the visitor
        # a visitor's last actions (_came_before), each with its refusal ([code, sentence]) or None
        self.done: dict[tuple[str, str], dict[tuple[Any, ...], list[str] | None]] = {}
        self.send: Callable[[str, dict[str, Any]], None] | None = None  # None: this server alone
        self._new_games: set[int] = set()
        # the game actions of visitors gone from every table here, until they could act a whole burst
        # again: one that sits down again goes on from there (_visitor)
        self.spent: dict[tuple[str, str], Bucket] = {}
        self._confirming: set[asyncio.Task[None]] = set()

    # --- what other members ask ---------------------------------------------------------------

    def enter(self, member: str, uid: int, person: dict[str, Any]) -> None:
        nick = person["nick"]
        table = self.tables.get(uid)
        if table is None or uid == LOBBY or table.room is None:
            self._tell(member, {"refused": [uid, nick, f"There is no table {uid}."]})
            return
        present = table.people.get(nick)
        if present is not None and present is not self.by_key.get((member, nick)):
            if not _left_behind(present, person):
                self._tell(member, {"refused": [uid, nick, f"{nick} is already at table {uid}."]})
                return
            log.info(
                "visitor in place of its copy %s",
                Fields(uid=uid, nick=nick, member=member, before=present.visiting_from),
            )
            self.tables.leave(present, uid)
        visitor = self._visitor(member, person)
        self.tables.seating.reclaim(table, visitor)  # a guest back with a new id takes its seat here too
        if uid not in visitor.tables:
            members = self.bus.channels[uid].members
            members[member] = members.get(member, 0) + 1  # before: its own `pa` goes there too
            self.tables.enter(visitor, uid)
        self._send_state(member, uid, "join", [nick])

    def renamed(self, member: str, person: dict[str, Any]) -> None:
        """A registered player of `member` logged in (Mirrors.follow_rename): the seats here that their
        account's number owns under an earlier nick become their nick's, as for a login here."""
        self.tables.seating.follow_rename(visiting(member, person))

    def leave(self, member: str, uid: int, nick: str, for_good: bool = False) -> None:
        visitor = self.by_key.get((member, nick))
        if visitor is not None and uid in visitor.tables:
            self.tables.leave(visitor, uid, for_good=for_good)

    def act(self, member: str, nick: str, action: str, table: str, *args: Any, ticket: Any = None) -> None:
        """Done as if the visitor had sent it here; its member hears `done` once it is stored (or
        refused), so that its client's k counts it processed only then (Stream.k_shown), or `undone`
        if it was taken back because storage failed first, so that its client sends it again. Each
        answer names the action's `ticket` (None from a member of an earlier version, which counts)."""
        visitor = self.by_key.get((member, nick))
        do = self.actions.get(action)
        persistence = self.ctx.persistence
        since = persistence.queued
        key = (ticket, action, table)
        again = visitor is not None and do is not None and self._came_before(member, nick, key)
        answer: dict[str, Any] = {"done": nick, "t": ticket}
        if visitor is None or do is None:
            log.info("action of a visitor not here %s", Fields(member=member, nick=nick, action=action))
            if visitor is None:  # refused, and told by the person's member: there is nobody here to tell
                answer.update(refused=["notAtTable", f"You are not at table {table}."], untold=True)
        elif again:  # one sent again after lost messages (Mirrors.send_again) is done once
            refusal = self.done[(member, nick)][key]
            if refusal is not None:
                answer["refused"] = refusal
        else:
            try:
                self.ctx.writable()
                do(visitor, table, *args)
            except ProtocolError as refused:
                self.tables.tell(visitor, table_number(table), refused.code, str(refused), **refused.values)
                # for the request that sent it, answered as if done there (Mirrors.outcome)
                answer["refused"] = [refused.code, str(refused)]
                if ticket is not None:  # kept with the action, for its answer if it comes again
                    self.done[(member, nick)][key] = answer["refused"]
        # stored: it wrote nothing; or, sent again, everything written so far is
        if (persistence.written >= persistence.queued) if again else (persistence.queued == since):
            self._tell(member, answer)
        else:
            task = asyncio.create_task(self._confirm(member, nick, ticket))
            self._confirming.add(task)
            task.add_done_callback(self._confirming.discard)

    def _came_before(self, member: str, nick: str, action: tuple[Any, ...]) -> bool:
        """Whether this action of the visitor (its ticket, what and where) was done already; kept for
        the last DONE_KEPT. Without a ticket (a member of an earlier version), never."""
        if action[0] is None:
            return False
        done = self.done.setdefault((member, nick), {})
        if action in done:
            return True
        done[action] = None
        if len(done) > DONE_KEPT:
            del done[next(iter(done))]
        return False

    async def _confirm(self, member: str, nick: str, ticket: Any) -> None:
        try:
            await self.ctx.persistence.flush(UNCONFIRMED_AT_MOST)
        except StorageFailing:
            log.warning("action of a visitor taken back: storage failed %s", Fields(member=member, nick=nick))
            self._tell(member, {"undone": nick, "t": ticket})
            return
        except TimeoutError:  # its member waits no longer either: its client's k goes on
            log.warning("action of a visitor not stored in time %s", Fields(member=member, nick=nick))
            return
        self._tell(member, {"done": nick, "t": ticket})

    def state_asked(self, member: str, uid: int) -> None:
        """A member's copy of a table grew long: it starts again from the table's whole state."""
        if self.bus.channels.get(uid) is not None and self.bus.channels[uid].members.get(member):
            self._send_state(member, uid, "quiet", [])

    def resync(self, member: str) -> None:
        """Lines to `member` may have been lost: its people get the whole state of every table here."""
        for uid, channel in self.bus.channels.items():
            if channel.members.get(member):
                self._send_state(member, uid, "refresh", [])

    def present(self, member: str, seated: list[list[Any]]) -> None:
        """`member` says who of its people sits at which table here (after lost messages): the
        visitors here are made exactly those."""
        wanted = {(uid, person["nick"]) for uid, person in seated}
        for (owner, nick), visitor in list(self.by_key.items()):
            if owner == member:
                for uid in [uid for uid in visitor.tables if uid != LOBBY and (uid, nick) not in wanted]:
                    self.tables.leave(visitor, uid)
        for uid, person in seated:
            visitor = self.by_key.get((member, person["nick"]))
            if visitor is None or uid not in visitor.tables:
                self.enter(member, uid, person)

    def member_gone(self, member: str) -> None:
        """`member` left the cluster: its people leave the tables here."""
        for (owner, _), visitor in list(self.by_key.items()):
            if owner == member:
                for uid in [uid for uid in reversed(visitor.tables) if uid != LOBBY]:
                    self.tables.leave(visitor, uid)

    def peers(self) -> set[str]:
        return {member for member, _ in self.by_key}

    # --- what the tables here tell (Tables.visiting) ------------------------------------------

    def left(self, visitor: Player, uid: int) -> None:
        """A visitor left a table here (asked by its member, or the table closed): its member is told."""
        member = visitor.visiting_from
        channel = self.bus.channels.get(uid)
        if channel is not None and member in channel.members:
            channel.members[member] -= 1
            if not channel.members[member]:
                del channel.members[member]
        if visitor.tables == [LOBBY]:
            self.by_key.pop((member, visitor.nick), None)
            self.done.pop((member, visitor.nick), None)
            now = self.ctx.timers.now()
            for key in [key for key, bucket in self.spent.items() if bucket.full(now)]:
                del self.spent[key]
            if not visitor.actions.full(now):
                self.spent[(member, visitor.nick)] = visitor.actions
        self._tell(member, {"left": [uid, visitor.nick]})

    def new_game(self, uid: int) -> None:
        """A new game at a table visitors follow: their members get its whole state once it is set up."""
        if self.bus.channels[uid].members and uid not in self._new_games:
            self._new_games.add(uid)
            asyncio.get_running_loop().call_soon(self._send_new_game, uid)

    # --- inside -------------------------------------------------------------------------------

    def _visitor(self, member: str, person: dict[str, Any]) -> Player:
        visitor = self.by_key.get((member, person["nick"]))
        if visitor is None:
            visitor = self.by_key[(member, person["nick"])] = visiting(member, person)
            # what it spent here before it left: a take-back of a long game counts as many game actions
            # (Limits.take_back), and a new account let a visitor leaving and sitting down again between
            # take-backs replay the game as often as its own member let it act (5 times a second)
            spent = self.spent.pop((member, person["nick"]), None)
            if spent is not None:
                visitor.actions = spent
        return visitor

    def _send_new_game(self, uid: int) -> None:
        self._new_games.discard(uid)
        channel = self.bus.channels.get(uid)
        if channel is not None:
            for member in list(channel.members):
                self._send_state(member, uid, "new", [])

    def _send_state(self, member: str, uid: int, how: str, newcomers: list[str]) -> None:
        self._tell(member, {"state": [uid, how, self.lobby.snapshot(uid), newcomers]})

    # --- what the bus hands on (LocalBus.table_listener, visitor_listener) ----------------------

    def table_line(self, uid: int, members: dict[str, int], line: str, b_only: bool) -> None:
        """An event at a table that people of other members follow: to each of those members."""
        for member in members:
            self._tell(member, {"line": [uid, line, b_only]})

    def player_line(self, visitor: Player, uid: int, line: str) -> None:
        """A line for one visitor alone: to its member."""
        self._tell(visitor.visiting_from, {"to": [visitor.nick, uid, line]})

    def _tell(self, member: str, message: dict[str, Any]) -> None:
        if self.send is not None:
            self.send(member, message)


def _left_behind(present: Player, person: dict[str, Any]) -> bool:
    """Whether `present` is a copy of `person` that another member left here: a visitor of the same
    session (a guest's) or account (a registered player's), by the seat key, or of a guest session of
    the nick from the network `person` comes from (docs/protocol.md, "A guest who comes back": its
    member ended that session for `person`, or it died). A session changes member only once its member
    let it go or died (server/cluster/sessions.py), and a nick is online on one member at a time
    (server/cluster/nicks.py), so the copy is of a member that died and whose death is not heard yet
    (its announcement lives 10 s), or whose leaving was lost. Refused, the person sat down at their game
    again only when their session moved once more (22 s later in benchmarks/chaos.py, seed 29)."""
    if not present.visiting_from:
        return False
    seat, network = person.get("seat"), person.get("network")
    guest_back = present.guest and bool(person.get("guest")) and bool(network) and present.network == network
    return (bool(seat) and present.seat_key == seat) or guest_back
