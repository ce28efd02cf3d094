"""The stream (`/a.kropki` polls): a poll's commands applied, and its reply built, in one place.

A poll is one call (`Stream.poll`): its commands applied (k journalled first), its writes stored before
its reply counts them as done, its long poll waited, its reply built. The web layer parses the query and
writes what this returns.

A reply merges the events of the player's tables (their shared logs) with the player's own log, in
number order; a reader whose msgNo is older than what is kept, or who sat down at a table since, gets
that table's whole state (server/hub/lobby.py). The opt-in long poll waits on the bus.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from server.hub.actions import AT_A_TABLE, Action
from server.hub.bus import LocalBus
from server.hub.context import Context
from server.hub.ignoring import Ignoring
from server.hub.invitations import Invitations
from server.hub.limits import needs_storage
from server.hub.lobby import Lobby
from server.hub.mirrors import Mirrors
from server.hub.model import LOBBY, Player, parse_table, table_number
from server.hub.persistence import StorageFailing
from server.hub.pools import Pools
from server.hub.roster import Roster
from server.hub.saved import SavedSessions
from server.hub.seeks import Seeks
from server.hub.sessions import Sessions
from server.hub.tables import Tables
from server.logs import Fields
from server.protocol import events
from server.protocol.codec import (
    BadCommand,
    ClientMessage,
    Command,
    Flags,
    ProtocolError,
    frame,
)

MAX_WAIT = 30.0  # cap of the opt-in long poll (`wait=`)
SETTLE_TIMEOUT = 10.0  # longest a reply waits for its writes; then it must not say they are done
CONFIRM_WAIT = 2.0  # longest a reply waits for another member to store its actions (then k waits on)
# Longest a request that is answered (an old-style action, a bot's) waits for that member's answer: past
# the 10 s in which a member that died is found gone (docs/cluster.md, "Membership (Redis)"), after which
# its actions are `unconfirmed`. Answered as done after 2 s, a move sent to a dead member was told made,
# and was not.
ANSWER_WAIT = 15.0
IGNORING = ("ignore", "unignore", "guestprivates")  # `c` commands that are not chat (hub/ignoring.py)
log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Poll:
    """A getMsg (or, `with_subscriptions`, a getBMsg) as the web layer parsed it: whose, its commands,
    the msgNo it has seen (and whether that covers the subscriptions' lines), how long it may wait, and
    whether a push connection asks (its lobby news is paced: bus.PUSHED_LOBBY_WAKE_EVERY)."""

    secret: str
    messages: list[ClientMessage]
    seen: int
    with_subscriptions: bool
    subscriptions_seen: bool = True
    wait: float = 0.0
    pushed: bool = False


class Stream:
    def __init__(
        self,
        ctx: Context,
        bus: LocalBus,
        roster: Roster,
        saved: SavedSessions,
        tables: Tables,
        lobby: Lobby,
        sessions: Sessions,
        invitations: Invitations,
        mirrors: Mirrors,
        ignoring: Ignoring,
        actions: dict[str, Action],
        seeks: Seeks,
        pools: Pools,
    ) -> None:
        self.ctx, self.bus, self.roster, self.saved, self.tables = ctx, bus, roster, saved, tables
        self.lobby, self.sessions, self.invitations = lobby, sessions, invitations
        self.seeks, self.pools = seeks, pools
        self.mirrors, self.ignoring, self.actions = mirrors, ignoring, actions
        self.counter = bus.counter  # the event numbers, read on every reply
        self.polls_answered = 0
        self._public_state: tuple[tuple[int, bool, int], str] | None = None  # an anonymous reader's reply

    # --- a poll ---------------------------------------------------------------------------------

    async def poll(
        self,
        poll: Poll,
        early: asyncio.Future[None] | None = None,
        may_send_whole_state: Callable[[], bool] | None = None,
    ) -> str:
        """A getMsg or getBMsg: its commands, then its reply (see `reply`), in the order that keeps the
        reply true.

        - A poll that would get a whole state (the costly reply) and that `may_send_whole_state` (the
          web layer's limit per address and per id) refuses is `err.tooFast`, before its commands: a
          refused poll changes nothing.
        - Its commands are applied (`receive`), and the reply waits until their writes are stored
          (`settled`): its k counts them as processed only then (`k_shown`). Only this poll's own writes
          make it wait, not other people's.
        - Its actions at another member's tables wait (CONFIRM_WAIT at most) for that member to store
          them (`confirmed`), so that k counts them too.
        - A long poll (`wait` seconds) waits for news, or until `early` has its result."""
        secret, seen = poll.secret, poll.seen
        if may_send_whole_state is not None and self.asks_whole_state(secret, seen):
            if not may_send_whole_state():
                raise ProtocolError("tooFast")
        await self.take(secret, poll.messages)
        if poll.wait:
            waiting = self.wait_for_news(secret, seen, poll.wait, early, pushed=poll.pushed)
            if waiting is not None:
                held = self.roster.players.get(secret)
                if held is not None:
                    self.roster.hold(held)
                try:
                    await waiting
                finally:
                    if held is not None and not held.waiters:  # another tab's poll may still wait
                        self.roster.release(held, self.ctx.timers.now())
        return self.reply(
            secret,
            seen,
            with_subscriptions=poll.with_subscriptions,
            subscriptions_seen=poll.subscriptions_seen,
        )

    async def take(self, secret: str, messages: list[ClientMessage]) -> int | None:
        """A poll's commands without its reply: every poll's first step, and all of a push
        connection's frame (server/web/push.py), whose replies come from its own polls. Stored, and
        confirmed by other members, before a reply's k counts them. None once stored; else the writes'
        mark to wait on (`settled`): a pushed k must move when they are stored, with no poll to ask."""
        before = self.ctx.persistence.queued
        self.receive(secret, messages)
        stored = await self.settled(before)
        if messages:
            await self.confirmed(secret)
        return None if stored else before

    async def settled(self, since: int) -> bool:
        """If a request changed anything (the writes handed to storage moved on from `since`), wait
        until it is written, so a reply never confirms what a crash could still lose. False: storage
        failed, or did not take the writes within SETTLE_TIMEOUT; the reply must not say they are done."""
        persistence = self.ctx.persistence
        if persistence.queued == since:
            return True
        try:
            await persistence.flush(SETTLE_TIMEOUT)
        except (TimeoutError, StorageFailing):
            return False
        return True

    async def confirmed(self, secret: str) -> None:
        """Wait (CONFIRM_WAIT at most) until the other members of a cluster stored the actions this
        session sent to their tables (Mirrors.confirmed)."""
        player = self.roster.players.get(secret)
        if player is not None and player.acknowledged.waiting_for():
            await self.mirrors.confirmed(player, CONFIRM_WAIT)

    # --- commands ------------------------------------------------------------------------------

    def receive(self, secret: str, messages: list[ClientMessage]) -> None:
        """Apply the commands of one poll; commands numbered at or below k are ignored.

        The new k goes to the store before anything the commands change, so that no crash can keep
        their effects and lose the k that says they are done (the client would send them again)."""
        player = self.roster.find(secret)
        if player is None:
            return
        self.roster.seen(player, self.ctx.timers.now())
        if not messages:  # most polls
            return
        processed = player.last_command
        numbers = [m.number for m in messages if not isinstance(m, Flags) and m.number is not None]
        moved = bool(numbers) and max(numbers) > processed
        queued_before = self.ctx.persistence.queued
        if moved:
            player.acknowledged.begin(self.k_shown(player))
            player.last_command = max(numbers)
            writes = player.acknowledged.poll(
                player.last_command, self._first_elsewhere(player, messages, processed)
            )
            self.saved.note_k(player)
        for message in messages:
            if isinstance(message, Flags):
                self.sessions.flags(player, message.text)
                continue
            if message.number is not None and message.number <= processed:
                continue
            if message.number is not None:
                processed = message.number
            if isinstance(message, BadCommand):
                self.tables.tell(player, LOBBY, "badCommand", f"Command refused: {message.reason}.")
                continue
            player.command = message.number
            try:
                self._command(player, message)
            except ProtocolError as refused:
                self.tables.tell(
                    player, table_number(message.table), refused.code, str(refused), **refused.values
                )
            except Exception:  # a bug: k has passed this poll's commands, so the ones after it still go on
                log.exception("command failed %s", Fields(nick=player.nick, kind=message.kind))
                self.tables.tell(player, table_number(message.table), "internal")  # said: sentences.py
            finally:
                player.command = None
        if moved:  # shown once everything these commands wrote is stored, not others' later writes
            queued = self.ctx.persistence.queued
            # nothing written: no write to wait for, nor others' writes in flight (take waited for none)
            writes.mark = queued if queued != queued_before else 0
            self.saved.note_k(player)  # kept below the actions other members have not confirmed

    def _first_elsewhere(self, player: Player, messages: list[ClientMessage], processed: int) -> int:
        """The number of the first new command that is an action at another member's table (0: none):
        the k kept for the session stops before it until that member confirms it (Acknowledged.kept)."""
        return min(
            (
                m.number
                for m in messages
                if isinstance(m, Command)
                and m.number is not None
                and m.number > processed
                and m.kind in AT_A_TABLE
                and self.mirrors.follows(player, m.table)
            ),
            default=0,
        )

    def _command(self, player: Player, command: Command) -> None:
        kind, table, text = command.kind, command.table, command.text
        if needs_storage(kind, table, text):
            self.ctx.writable()
        if kind in AT_A_TABLE:
            self.act(player, AT_A_TABLE[kind], table, text)
        elif kind == "b":
            self.tables.subscribe(player, parse_table(table))
        elif kind == "q":
            self.tables.unsubscribe(player, parse_table(table))
        elif kind == "v":
            self.invitations.command(player, text)
        elif kind == "k":
            self.seeks.command(player, text)
        elif kind == "j":
            self.pools.command(player, text)
        else:
            raise ProtocolError("unsupported", f"Command '{kind}' is not available on this server.")

    # --- replies -------------------------------------------------------------------------------

    def reply(
        self, secret: str, seen: int, *, with_subscriptions: bool, subscriptions_seen: bool = True
    ) -> str:
        """The poll's answer: `ok/m<i>.<j>.<k>/q<table>/.../end` (or `sd/...` for anonymous readers)."""
        self.polls_answered += 1
        player = self.roster.find(secret)
        if player is None:
            farewell = self.roster.farewell(secret, self.ctx.timers.now())
            if farewell is not None:  # a moderator ended the session: why, as a server line
                return frame(True, seen, self.counter.last, 0, [events.section(LOBBY), farewell])
            return self._public_reply(seen, with_subscriptions)
        player.nudged = False  # this reply carries the lines as they are now
        last = self.counter.last
        if (
            not player.fresh
            and not player.new_game_at
            and (subscriptions_seen or not with_subscriptions)
            and seen <= last
            and not self.has_news(player, seen)
        ):
            return self.quiet_reply(player, seen)
        return self.full_reply(player, seen, with_subscriptions, subscriptions_seen)

    def quiet_reply(self, player: Player, seen: int) -> str:
        """Nothing new since `seen` (most polls): what full_reply would say, without walking the logs."""
        lines = [events.section(uid) for uid in player.tables]
        lines += self.invitations.lines(player)
        if player in self.pools.waiting:
            lines += self.pools.lines(player)
        return frame(True, seen, self.counter.last, self.k_shown(player), lines)

    def full_reply(
        self, player: Player, seen: int, with_subscriptions: bool, subscriptions_seen: bool
    ) -> str:
        """Every event after `seen` by table, or the whole state where the logs no longer reach back."""
        if player.fresh:
            # A msgNo the client kept from an earlier session (or from a run before the numbering
            # started again, past 2**30) says nothing about this one: the first reply starts at the login.
            player.fresh = False
            seen = min(seen, player.logged_in_at)
        last = self.counter.last
        left_out = self._left_for_a_new_game(player, seen)
        tables = [uid for uid in player.tables if uid not in left_out]
        if self._covers(player, seen, tables):
            sections = self._news(player, seen, tables, with_subscriptions)
            whole_lobby = seen < player.joined[LOBBY]
        else:
            # numbers go on across restarts (until 2**30, then start again: a larger seen is not ours)
            had = seen if seen <= self.counter.last else 0
            sections = {
                uid: self.lobby.snapshot(uid, with_subscriptions=with_subscriptions, seen=had)
                for uid in tables
            }
            whole_lobby = True
        if player.ignored:  # the lines of the players it ignores are left out of its reply alone
            sections = self.ignoring.hide(player, sections)
        if with_subscriptions and not subscriptions_seen and not whole_lobby:  # a whole lobby has them
            sections[LOBBY] += self.lobby.subscription_lines()
        lines: list[str] = []
        for uid, section in sections.items():
            lines.append(events.section(uid))
            lines += section
        lines += self.invitations.lines(player)
        lines += self.pools.lines(player)
        for uid in left_out:  # numbered above this reply's j: the next poll gets the table's whole state
            player.joined[uid] = self.bus.mark()
        return frame(True, seen, last, self.k_shown(player), lines)

    def act(self, player: Player, action: str, table: str, *args: Any) -> None:
        """A player's action at a table (server/hub/actions.py), from a poll's command or an old-style
        endpoint: done here, or at another member's table by its owner (Mirrors.act); `c ignore`,
        `c unignore` and `c guestprivates` are not chat but whom the player refuses (Ignoring)."""
        if action == "chat" and table in IGNORING:
            self.ignoring.command(player, table, *args)
        elif self.mirrors.follows(player, table):
            self.mirrors.act(player, action, table, *args)
        else:
            self.actions[action](player, table, *args)

    def k_shown(self, player: Player) -> int:
        """k as replies give it: commands count as processed once their poll's writes are stored (and,
        for actions at another member's table, once that member stored them). A k past writes a crash
        can still lose would tell the client never to send those commands again."""
        if not player.acknowledged.steps:
            return player.last_command
        written, now = self.ctx.persistence.written, self.ctx.timers.now()
        return player.acknowledged.k(player.last_command, written, now)

    def _left_for_a_new_game(self, player: Player, seen: int) -> list[int]:
        """The tables whose new game started after `seen`: this reply leaves them out."""
        left_out = []
        for uid, number in list(player.new_game_at.items()):
            if uid not in player.tables:
                del player.new_game_at[uid]
            elif seen < number:
                left_out.append(uid)
            else:
                del player.new_game_at[uid]
        return left_out

    def _covers(self, player: Player, seen: int, tables: list[int]) -> bool:
        """True when every event after `seen` for this player is still kept."""
        if seen > self.counter.last or not player.inbox.covers(max(seen, player.logged_in_at)):
            return False
        channels = self.bus.channels  # a table here, or another member's that people here follow
        return all(channels[uid].log.covers(seen) for uid in tables if seen >= player.joined[uid])

    def _news(
        self, player: Player, seen: int, tables: list[int], with_subscriptions: bool
    ) -> dict[int, list[str]]:
        """The player's events after `seen`, by table, in number order.

        A table the player sat down at after `seen` comes as its whole state now, which already
        holds everything its log says since then. The player's own log starts at the login: a
        client that starts again from msgNo 0 after logging in again gets the state, not old
        private lines as new ones.
        """
        channels = self.bus.channels  # a table here, or another member's that people here follow
        if player.inbox.last <= max(seen, player.logged_in_at):
            return self._shared_news(player, seen, tables, with_subscriptions)
        numbered: dict[int, list[tuple[int, str]]] = {}
        for uid in tables:
            if seen < player.joined[uid]:
                snapshot = self._entry_state(player, uid, seen, with_subscriptions)
                # line by line, as this merge has always sorted them (the lobby's comes joined)
                lines = [line for part in snapshot for line in part.split("/")]
                numbered[uid] = [(player.joined[uid], line) for line in lines]
                continue
            numbered[uid] = [
                (number, line)
                for number, _, line, b_only in channels[uid].log.since(seen)
                if with_subscriptions or not b_only
            ]
        mixed = set()
        for number, uid, line, _ in player.inbox.since(max(seen, player.logged_in_at)):
            if uid in numbered:
                numbered[uid].append((number, line))
                mixed.add(uid)
        for uid in mixed:  # by number only: a whole state's lines share one number and keep their order
            numbered[uid].sort(key=_number)
        return {uid: [line for _, line in section] for uid, section in numbered.items()}

    def _shared_news(
        self, player: Player, seen: int, tables: list[int], with_subscriptions: bool
    ) -> dict[int, list[str]]:
        """_news when nothing in the player's own log is new (nearly every poll): each section is its
        table's lines as they stand, with nothing to merge; the lobby's come as one slice of the text
        its log keeps joined (mailbox.Transcript), shared by every reader."""
        channels = self.bus.channels  # a table here, or another member's that people here follow
        sections: dict[int, list[str]] = {}
        for uid in tables:
            if seen < player.joined[uid]:
                sections[uid] = self._entry_state(player, uid, seen, with_subscriptions)
            elif uid == LOBBY:
                sections[uid] = [channels[uid].log.transcript(with_subscriptions).since(seen)]
            else:
                sections[uid] = [
                    line
                    for _, _, line, b_only in channels[uid].log.since(seen)
                    if with_subscriptions or not b_only
                ]
        return sections

    def _entry_state(self, player: Player, uid: int, seen: int, with_subscriptions: bool) -> list[str]:
        """The whole state of a table the player sat down at after `seen`. Back at a table it sat at
        before a restart, its client has the chat up to `seen`, which is not sent again."""
        had = seen if player.rejoined.get(uid) == player.joined[uid] else 0
        return self.lobby.snapshot(uid, with_subscriptions=with_subscriptions and uid == LOBBY, seen=had)

    def has_news(self, player: Player, seen: int) -> bool:
        if player.inbox.last > seen:
            return True
        channels, joined = self.bus.channels, player.joined
        for uid in player.tables:  # a loop, not any(): asked on every poll, most of them quiet
            if joined[uid] > seen or channels[uid].log.last > seen:
                return True
        return False

    def wait_for_news(
        self,
        secret: str,
        seen: int,
        timeout: float,
        early: asyncio.Future[None] | None = None,
        *,
        pushed: bool = False,
    ) -> Coroutine[Any, Any, None] | None:
        """The opt-in long poll: the bus's wait, which returns when the reader has an event after `seen`,
        after `timeout`, or when `early` has its result (the connection cap making room); None when
        the poll is answered at once. The bus's coroutine itself, not one more around it: every held
        poll is walked by the collector and resumed through each.

        At once when the reader has news, or must start again: an id that is not logged in (the answer
        is `sd`, log in again) or a `seen` beyond the newest event (the numbering began anew: a restart).
        """
        player = self.roster.players.get(secret)
        if (player is None and secret) or seen > self.counter.last:
            return None
        if player is None:
            uids = [LOBBY]
            if self.tables.lobby.log.last > seen:
                return None
        else:
            uids = list(player.tables)
            if player.nudged or self.has_news(player, seen):
                return None
        return self.bus.wait(uids, player, timeout, early, pushed)

    def asks_whole_state(self, secret: str, seen: int) -> bool:
        """Whether a poll with this msgNo gets the lobby's whole state: the costly reply that the web
        layer lets an id or an address ask for only so often."""
        log_ = self.tables.lobby.log
        player = self.roster.players.get(secret) if secret else None
        if player is None:
            return not (seen and seen <= self.counter.last and log_.covers(seen))
        if player.fresh:
            seen = min(seen, player.logged_in_at)
        return seen < player.joined[LOBBY] or seen > self.counter.last or not log_.covers(seen)

    def _public_reply(self, seen: int, with_subscriptions: bool) -> str:
        log_ = self.tables.lobby.log
        last = self.counter.last
        if seen and seen <= last and log_.covers(seen):  # msgNo 0: start from the current state
            news = log_.transcript(with_subscriptions).since(seen)
            return frame(False, seen, last, 0, [events.section(LOBBY), news])
        # the whole lobby: the same text for every reader asking with the same msgNo until the next
        # event, so the web layer can send one encoded body to all of them
        key = (seen, with_subscriptions, last)
        if self._public_state is None or self._public_state[0] != key:
            lines = self.lobby.snapshot(LOBBY, with_subscriptions=with_subscriptions)
            self._public_state = (key, frame(False, seen, last, 0, [events.section(LOBBY), *lines]))
        return self._public_state[1]


def _number(numbered_line: tuple[int, str]) -> int:
    return numbered_line[0]
