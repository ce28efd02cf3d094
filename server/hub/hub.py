"""The hub's composition root: it builds the parts and wires them together (docs/architecture.md), runs
the sweep, and is what server/web and server/app call.

Every method here is one line into the part that owns the concept; none keeps live state or rules of
its own. The web layer calls the hub rather than the parts, so that a handler needs one name and the
order of its checks (storage first, then the session) is written once, here. A poll is one call
(`poll`, Stream.poll). Only `__init__` sets one part's hooks to another part: no part's constructor does.

Over 500 lines because it is both the one place that wires every part and the one name the web layer
calls for each operation, a line or two each; a second module would split either (issue 47's seeks and
pools, with issue 46's moderation, took it past 500).
"""

from __future__ import annotations

import asyncio
import logging
import random
import time as _time
from collections.abc import Awaitable, Callable, Collection, Coroutine, Iterator, Sequence
from concurrent.futures import Executor
from typing import Any, TypeVar

from server.engine.gametype import GameType
from server.engine.start import Setup
from server.hub.absences import AWAY_AFTER, CLAIM_AFTER, Absences
from server.hub.actions import table_actions
from server.hub.bus import LocalBus
from server.hub.chat import PrivateChats
from server.hub.chats import Chats
from server.hub.clock import LoopTimers, Timers
from server.hub.computer import Computer
from server.hub.context import Context
from server.hub.games import Games
from server.hub.ignoring import Ignoring
from server.hub.invitations import Invitations
from server.hub.limits import Caps, Limits, needs_storage
from server.hub.lobby import Lobby
from server.hub.mailbox import LOBBY_HISTORY, PLAYER_HISTORY, TABLE_HISTORY, Counter
from server.hub.mirrors import Mirrors
from server.hub.model import COMPUTER_NICKS, Invitation, Origin, Player, Standing, Table, owns
from server.hub.offers import Offers, forgetting
from server.hub.peers import Peers
from server.hub.persistence import Account, LiveSessions, MemoryPersistence, Persistence, SavedSession
from server.hub.pools import Pools, ended_by_a_game, ended_with_the_session
from server.hub.remote import RemoteLobby
from server.hub.reported import Quoted, Quotes
from server.hub.restore import Journals, Restorer
from server.hub.room import AutoTable
from server.hub.roster import Roster
from server.hub.saved import SWEEP_EVERY, SavedSessions
from server.hub.seeks import Seeks
from server.hub.sessions import POLL_TIMEOUT, Carried, Sessions
from server.hub.sharedlobby import SharedLobby
from server.hub.stream import ANSWER_WAIT, Poll, Stream
from server.hub.tables import Tables
from server.hub.tournaments import Tournaments
from server.hub.visitors import Visitors
from server.protocol.codec import ClientMessage
from server.protocol.seeks import AcceptSeek, SeekCommand

log = logging.getLogger(__name__)

T = TypeVar("T")


class Hub:
    def __init__(
        self,
        *,
        clock: Callable[[], float] = _time.time,
        poll_timeout: float = POLL_TIMEOUT,
        history: int | None = None,
        timers: Timers | None = None,
        persistence: Persistence | None = None,
        rng: random.Random | None = None,
        caps: Caps | None = None,
        away_after: float = AWAY_AFTER,
        claim_after: float = CLAIM_AFTER,
    ) -> None:
        """`away_after`, `claim_after`: when a player who stopped asking is away from their games, and
        when their opponent may claim (server/hub/absences.py)."""
        self.remote_lobby = RemoteLobby()
        self.ctx = ctx = Context(
            clock=clock,
            timers=timers or LoopTimers(),
            persistence=persistence or MemoryPersistence(),
            rng=rng or random.Random(),
            # the timers may be swapped later (`timers`): read through the context
            limits=Limits(caps or Caps(), self.remote_lobby.held_by, lambda: self.ctx.timers.now()),
            poll_timeout=poll_timeout,
            table_history=history or TABLE_HISTORY,
            lobby_history=history or LOBBY_HISTORY,
            player_history=history or PLAYER_HISTORY,
        )
        self.bus = LocalBus(lambda: ctx.persistence, ctx.table_history, ctx.timers, ctx.lobby_history)
        self.roster = Roster(ctx)
        self.saved = SavedSessions(ctx, self.roster)
        self.tables = Tables(ctx, self.bus, self.roster, self.saved)
        self.absences = Absences(ctx, self.tables, away_after, claim_after)
        self.games = Games(ctx, self.bus, self.roster, self.tables, self.absences)
        self.mirrors = Mirrors(ctx, self.bus, self.roster, self.saved, self.tables, self.remote_lobby)
        self.chats = Chats(ctx, self.bus, self.roster, self.tables, self.remote_lobby)
        self.quotes = Quotes(self.tables, self.mirrors, self.remote_lobby, self.chats.private)
        self.invites = Invitations(ctx, self.bus, self.roster, self.tables, self.saved, self.remote_lobby)
        self.ignoring = Ignoring(ctx, self.bus, self.roster, self.saved, self.invites, self.remote_lobby)
        self.tournaments = Tournaments(ctx, self.tables, self.remote_lobby)
        self.seeks = Seeks(ctx, self.bus, self.tables, self.invites, self.remote_lobby)
        self.pools = Pools(ctx, self.bus, self.tables, self.invites)
        self.offers = Offers(self.bus, self.tables, self.seeks, self.invites)
        self.lobby_state = Lobby(self.bus, self.tables, self.remote_lobby, self.mirrors, self.seeks)
        self.shared_lobby = SharedLobby(
            self.bus, self.remote_lobby, self.mirrors, self.tables, self.seeks, self.pools
        )
        self.tables.lobby.chat.kept_elsewhere = self.shared_lobby.chat_elsewhere
        self.actions = table_actions(self.games, self.chats)
        self.visitors = Visitors(ctx, self.bus, self.tables, self.lobby_state, self.actions)
        self.peers = Peers(self.chats, self.invites, self.mirrors, self.visitors, self.seeks, self.pools)
        self.sessions = Sessions(
            ctx, self.bus, self.roster, self.saved, self.tables, self.games, self.invites, self.chats
        )
        self.stream = Stream(
            ctx,
            self.bus,
            self.roster,
            self.saved,
            self.tables,
            self.lobby_state,
            self.sessions,
            self.invites,
            self.mirrors,
            self.ignoring,
            self.actions,
            self.seeks,
            self.pools,
        )
        self.restorer = Restorer(
            ctx, self.bus, self.saved, self.tables, self.games, self.chats, self.sessions
        )
        # the parts made first are told about the later ones through these hooks
        self.tables.game_over = self.games.game_over
        self.tables.game_started = ended_by_a_game(self.seeks, self.pools, self.invites)
        self.sessions.left = forgetting(self.offers, ended_with_the_session(self.seeks, self.pools))
        self.invites.offers = self.offers
        self.tables.elsewhere = self.mirrors
        self.tables.visiting = self.visitors
        self.bus.table_listener = self.visitors.table_line
        self.bus.visitor_listener = self.visitors.player_line
        self.computer: Computer | None = None
        self._sweeper: asyncio.Handle | None = None

    # --- what the parts share, as the app, the metrics and the tests read it -------------------

    @property
    def clock(self) -> Callable[[], float]:
        return self.ctx.clock

    @property
    def timers(self) -> Timers:
        return self.ctx.timers

    @timers.setter
    def timers(self, timers: Timers) -> None:
        self.ctx.timers = timers

    @property
    def persistence(self) -> Persistence:
        return self.ctx.persistence

    @persistence.setter
    def persistence(self, persistence: Persistence) -> None:  # the app's store, once it is open
        self.ctx.persistence = persistence

    @property
    def poll_timeout(self) -> float:
        return self.ctx.poll_timeout

    @poll_timeout.setter
    def poll_timeout(self, seconds: float) -> None:
        self.ctx.poll_timeout = seconds

    @property
    def caps(self) -> Caps:
        return self.ctx.limits.caps

    @property
    def counter(self) -> Counter:
        return self.bus.counter

    @property
    def players(self) -> dict[str, Player]:
        return self.roster.players

    def requester(self, secret: str) -> Player | None:
        """Who makes a request that names them (a moderator's `co=moderate`), if logged in; it counts
        for their time-out as a poll does."""
        return self.sessions.requester(secret)

    @property
    def by_nick(self) -> dict[str, Player]:
        return self.roster.by_nick

    @property
    def by_look(self) -> dict[str, Player]:
        return self.roster.by_look

    @property
    def lobby(self) -> Table:
        return self.tables.lobby

    @property
    def invitations(self) -> dict[Player, Invitation]:
        return self.invites.invitations

    @property
    def incoming(self) -> dict[Player, Invitation]:
        return self.invites.incoming

    @property
    def private(self) -> PrivateChats:
        return self.chats.private

    @property
    def moves_played(self) -> int:
        return self.tables.moves_played

    @property
    def polls_answered(self) -> int:
        return self.stream.polls_answered

    @property
    def lobby_states_built(self) -> int:
        return self.lobby_state.states_built

    # --- lifecycle -----------------------------------------------------------------------------

    def start(self) -> None:
        """Begin logging out players who stopped polling (one timer for the whole hub)."""
        loop = asyncio.get_running_loop()
        self._sweeper = loop.call_later(SWEEP_EVERY, self._sweep_and_rearm)

    def enable_computer(self, executor: Executor, workers: int) -> None:
        """The AI players join the lobby (after `restore`, so that they sit back at their games)."""
        self.computer = Computer(self.ctx, self.tables, executor, workers)
        self.invites.computer = self.computer
        self.bus.watch(self.computer.soon)
        for nick in COMPUTER_NICKS.values():
            self.sessions.login_computer(nick)

    def close(self) -> None:
        if self.computer is not None:
            self.computer.close()
        if self._sweeper is not None:
            self._sweeper.cancel()
            self._sweeper = None
        self.tables.numbers.close()

    def _sweep_and_rearm(self, parts: Iterator[Callable[[], None]] | None = None) -> None:
        """One part of the sweep a turn of the loop, so that what came meanwhile is served between
        them: all in one turn stopped a loaded loop for 45 ms (2,000 games beside 10,000 players, their
        tables' absences 13 ms, the heartbeat up to 28 ms)."""
        loop = asyncio.get_running_loop()
        parts = iter(self.sweep_parts()) if parts is None else parts
        part = next(parts, None)
        if part is None:
            self._sweeper = loop.call_later(SWEEP_EVERY, self._sweep_and_rearm)
            return
        try:
            part()
        except Exception:  # a bug here must not stop the sweeping for good
            log.exception("sweep failed")
        self._sweeper = loop.call_soon(self._sweep_and_rearm, parts)

    def sweep(self) -> None:
        for part in self.sweep_parts():
            part()

    def sweep_parts(self) -> tuple[Callable[[], None], ...]:
        """What the sweep does every SWEEP_EVERY, in this order."""
        return (
            self.sessions.time_out,
            self.invites.lapse_old,
            self.absences.sweep,
            self.saved.heartbeat,
            self.chats.forget_old,
            self.games.close_expired,
            self.restorer.compact_grown,
            self.pools.pair_all,
        )

    def note_sessions(self) -> None:
        """The sessions' heartbeat (see SavedSessions.heartbeat); also at a clean stop."""
        self.saved.heartbeat()

    def restore(self, journals: Journals, next_uid: int, sessions: LiveSessions | None = None) -> None:
        self.restorer.restore(journals, next_uid, sessions)

    def reserve_table_numbers(self, reserve: Callable[[int], Awaitable[range]], first: range) -> None:
        """A member of a cluster: table numbers from blocks reserved in the shared database (TableNumbers)."""
        self.tables.numbers.reserve_from(reserve, first)

    # --- the lobby shared with the other members of a cluster (server/cluster/lobby.py) ---------

    def share_lobby(self, listener: Callable[[str, bool], None] | None) -> None:
        """`listener(line, b_only)` hears every lobby line made here; None: this member alone again."""
        self.bus.lobby_listener = listener

    def lobby_part(self) -> list[str]:
        """This member's part of the lobby, and the players waiting in its pools (for the members alone)."""
        return [*self.lobby_state.own_part(), *self.pools.own_lines()]

    def take_lobby_line(self, member: str, line: str, b_only: bool) -> None:
        self.shared_lobby.take_line(member, line, b_only)

    def take_lobby_part(self, member: str, lines: list[str]) -> None:
        self.shared_lobby.take_part(member, lines)

    def drop_lobby_part(self, member: str) -> None:
        self.shared_lobby.drop_part(member)

    # --- tables and private chat across the members of a cluster (docs/cluster.md) -------------

    def share_with_members(self, send: Callable[[str, dict[str, Any]], None] | None) -> None:
        """`send(member, message)` takes a message to one other member, in order with the others to
        it; None: this member alone again."""
        self.peers.share(send)

    def take_from_member(self, member: str, message: dict[str, Any]) -> None:
        self.peers.take(member, message)

    def not_delivered(self, member: str, message: dict[str, Any]) -> None:
        self.peers.not_delivered(member, message)

    def resync_member(self, member: str) -> None:
        self.peers.resync(member)

    def missed_from_member(self, member: str) -> None:
        self.peers.missed(member)

    def table_peers(self) -> set[str]:
        return self.peers.sharing_tables()

    def member_gone(self, member: str) -> None:
        self.peers.gone(member)

    def take_tables(self, journals: Journals) -> None:
        """Tables of a member that died, from the store (server/cluster/takeover.py)."""
        self.restorer.take_over(journals)

    def standing(self, secret: str, network: str) -> tuple[Standing, str]:
        """How an id stands for a request from `network`, and its HMAC where it was needed."""
        return self.roster.standing(secret, network)

    def adopt_network(self, secret: str, network: str) -> None:
        self.sessions.adopt_network(secret, network)

    def knows(self, secret: str) -> bool:
        """Whether this member serves the session of this id."""
        return self.roster.find(secret) is not None

    def hand_over(self, id_hmac: str) -> bool:
        return self.sessions.hand_over(id_hmac)

    def moved_away(self, secret: str) -> bool:
        return self.roster.moved_away(secret, self.ctx.timers.now())

    def give_up(self, nick: str, network: str) -> Carried | None:
        return self.sessions.give_up(nick, network)

    def check_guest_login(self, secret: str, nick: str, lang: str, origin: Origin) -> None:
        self.sessions.check_guest_login(secret, nick, lang, origin)

    def take_over(self, saved: SavedSession, account: Account | None) -> None:
        self.sessions.take_over(saved, account)

    def unique_nick_keys(self) -> tuple[list[str], list[str]]:
        """What this member claims in a cluster's one name space (server/cluster/nicks.py)."""
        return self.roster.unique_keys()

    def unique_holder(self, nick: str) -> str | None:
        """The nick of whoever online here has this nick or one that looks like it, if it is to be theirs
        alone across a cluster (not an AI player's)."""
        return self.roster.unique_holder(nick)

    def watch_nicks(self, listener: Callable[[str], None] | None) -> None:
        """`listener(nick)` hears every session that ends here (a logout, a time-out, a guest come back
        under its nick) or comes here from another member, not one that goes on on another member (that
        one claims it) nor a login (claimed before it); None: nobody listens."""
        self.sessions.nick_changed = listener

    def storage_changed(self, failure: str | None) -> None:
        self.games.storage_changed(failure)

    def announce_shutdown(self) -> None:
        """A clean stop: every table is told, the clocks are journalled as they are, long polls end."""
        self.games.announce_shutdown()
        self.bus.wake_all()

    def writes(self) -> int:
        """How many writes were handed to storage so far; see `settled`."""
        return self.ctx.persistence.queued

    async def settled(self, since: int) -> bool:
        """Whether a request's writes (`writes()` moved on from `since`) are stored (Stream.settled)."""
        return await self.stream.settled(since)

    async def answered(self, secret: str, action: Awaitable[T]) -> T:
        """What `action` (a request's, which is answered rather than polled) gives, once the other
        members whose tables it acted at did it; their refusal raised, as this member's would be
        (Mirrors.outcome)."""
        since = self.mirrors.sent(self.roster.players.get(secret))
        result = await action
        refused = await self.mirrors.outcome(self.roster.players.get(secret), since, ANSWER_WAIT)
        if refused is not None:
            raise refused
        return result

    # --- sessions ------------------------------------------------------------------------------

    def guest_login(
        self,
        secret: str,
        nick: str,
        lang: str,
        origin: Origin | None = None,
        *,
        reads_seeks: bool = False,
        carried: Carried | None = None,
    ) -> None:
        self.sessions.guest_login(secret, nick, lang, origin, reads_seeks=reads_seeks, carried=carried)

    def login(
        self,
        secret: str,
        account: Account,
        lang: str | None = None,
        origin: Origin | None = None,
        *,
        reads_seeks: bool = False,
    ) -> None:
        self.sessions.login(secret, account, lang, origin, reads_seeks=reads_seeks)

    def account_registered(self, nick: str) -> None:
        self.sessions.account_registered(nick)

    def resume(self, secret: str, nick: str, *, reads_seeks: bool = False) -> None:
        self.sessions.resume(secret, nick, reads_seeks=reads_seeks)

    def logout(self, secret: str) -> bool:
        return self.sessions.logout(secret)

    def change_lang(self, secret: str, lang: str) -> None:
        self.sessions.change_lang(secret, lang)

    # --- the stream ----------------------------------------------------------------------------

    def poll(
        self,
        poll: Poll,
        early: asyncio.Future[None] | None = None,
        may_send_whole_state: Callable[[], bool] | None = None,
    ) -> Coroutine[Any, Any, str]:
        """A getMsg or getBMsg, answered whole: Stream.poll's coroutine itself, not one more around it
        (every held long poll is walked by the collector and resumed through each)."""
        return self.stream.poll(poll, early, may_send_whole_state)

    def receive(self, secret: str, messages: list[ClientMessage]) -> None:
        self.stream.receive(secret, messages)

    async def take(self, secret: str, messages: list[ClientMessage]) -> int | None:
        """A push connection's commands, stored before any reply counts them (Stream.take)."""
        return await self.stream.take(secret, messages)

    def reply(
        self, secret: str, seen: int, *, with_subscriptions: bool, subscriptions_seen: bool = True
    ) -> str:
        return self.stream.reply(
            secret, seen, with_subscriptions=with_subscriptions, subscriptions_seen=subscriptions_seen
        )

    def wait_for_news(
        self, secret: str, seen: int, timeout: float, early: asyncio.Future[None] | None = None
    ) -> Coroutine[Any, Any, None] | None:
        """The bus's wait for the poll, or None if it is answered at once (Stream.wait_for_news)."""
        return self.stream.wait_for_news(secret, seen, timeout, early)

    def asks_whole_state(self, secret: str, seen: int) -> bool:
        return self.stream.asks_whole_state(secret, seen)

    # --- tables and games ----------------------------------------------------------------------

    def set_up_table(
        self,
        game_type: GameType,
        first: str,
        second: str,
        say_hi: Sequence[int],
        tournament: str | None,
        round: str | None,
        ratings: dict[str, float],
        *,
        more: Sequence[str] = (),
    ) -> int:
        """An organiser's table (setUpTable), of two players or two teams; see Tournaments.set_up_table."""
        return self.tournaments.set_up_table(
            game_type, first, second, say_hi, tournament, round, ratings, more=more
        )

    def withdraw_set_up(self, uid: int) -> bool:
        """A setUpTable storage did not take, closed as if never set up; see Tournaments.withdraw_set_up."""
        return self.tournaments.withdraw_set_up(uid)

    def here(self, nick: str, seat_key: str) -> bool:
        """Whether the session or account `seat_key` is logged in as `nick` now (a session restored
        after a restart counts before its first poll)."""
        player = self.roster.online(nick)
        return (player is not None and owns(seat_key, player.seat_key)) or seat_key in self.roster.unclaimed

    def playing(self, nick: str) -> bool:
        """Whether the player online as `nick` sits in a game still being played."""
        player = self.roster.online(nick)
        return player is not None and self.tables.playing(player)

    def in_play(self, nick: str) -> bool:
        """Whether `nick` is logged in, or has a seat at an unfinished game, here or at another member
        of a cluster: an account in play is a person's, and does not become a bot (docs/bots.md)."""
        if self.roster.online(nick) is not None or self.remote_lobby.member_of(nick) is not None:
            return True
        for uid in self.tables.seats.get(nick, ()):
            room = self.tables.by_uid[uid].room
            if room is not None and not room.analysis and room.game.result is None:
                return True
        return self.remote_lobby.held_by(nick, False) > 0

    def reserve_seats(self, uid: int, owners: dict[str, str]) -> None:
        """Seats of table `uid` kept for these sessions or accounts (nick -> Player.seat_key); one whose
        session is online owns it at once, so that a guest's seat counts for their address's tables."""
        table = self.tables.by_uid[uid]
        for nick, owner in owners.items():
            player = self.roster.online(nick)
            if player is not None and owns(owner, player.seat_key):
                self.tables.seating.own(table, player)
            else:
                self.tables.seating.reserve(table, nick, owner)

    def watch_tournament_results(self, listener: Callable[[int, str, str], None] | None) -> None:
        """Be told (table, tournament, result) when a tournament game's record is stored."""
        self.games.tournament_result = listener

    def tournament_of_table(self, uid: int) -> str | None:
        return self.tournaments.tournament_of(uid)

    def cancel_table(self, uid: int, key_tournament: str | None) -> None:
        """An organiser's cancelTable; see Tournaments.cancel_table."""
        self.tournaments.cancel_table(uid, key_tournament)

    def open_table(
        self,
        game_type: GameType,
        blue: str,
        red: str,
        auto: AutoTable | None = None,
        setup: Setup | None = None,
        *,
        more: Sequence[str] = (),
    ) -> Table:
        return self.tables.open_table(game_type, blue, red, auto, setup, more=more)

    def table_players(self, uid: int) -> tuple[str, ...] | None:
        return self.games.table_players(uid)

    def table_record(self, uid: int, bots: Collection[str]) -> str | None:
        return self.games.table_record(uid, bots)

    def change_table(self, secret: str, uid: int) -> None:
        self.tables.change_table(self.sessions.player(secret), uid)

    # game actions from the old-style endpoints: refused while storage fails, before the session is
    # looked at (as a command in a poll would be)

    def move(self, secret: str, table: str, where: str, colour: int | None = None) -> None:
        self.ctx.writable()
        self.stream.act(self.sessions.player(secret), "move", table, where, colour)

    def draw_enclosure(self, secret: str, table: str, where: str) -> None:
        self.ctx.writable()
        self.stream.act(self.sessions.player(secret), "enclose", table, where)

    def propose(self, secret: str, table: str, proposal: str) -> None:
        self.ctx.writable()
        self.stream.act(self.sessions.player(secret), "propose", table, proposal)

    def stop(self, secret: str, table: str) -> None:
        self.ctx.writable()
        self.stream.act(self.sessions.player(secret), "stop", table)

    def give_time(self, secret: str, table: str, seconds: str) -> None:
        self.ctx.writable()
        self.stream.act(self.sessions.player(secret), "give", table, seconds)

    def pause(self, secret: str, table: str, what: str) -> None:
        """`what`: p pauses the opponent's clock, u lets it run again (the stream's `t` command)."""
        self.ctx.writable()
        self.stream.act(self.sessions.player(secret), "pause", table, what)

    # --- invitations and chat from the old-style endpoints -------------------------------------

    def invite(self, secret: str, whom: str, game_type_text: str, archived: str | None = None) -> None:
        """`archived`: the SGF record an analysis of an archived game (`SGFz<n>`) starts from."""
        self.ctx.writable()
        self.invites.invite(self.sessions.player(secret), whom, game_type_text, archived)

    def answer_invitation(self, secret: str, answer: str, inviter: str = "") -> None:
        """`a` accept, `r` reject, `b` reject and block, `c` cancel own, `o` acknowledge a rejection;
        `inviter`: refused unless the invitation answered is theirs (the bot API's `from`)."""
        if needs_storage("v", "", answer):
            self.ctx.writable()
        player = self.sessions.player(secret)
        if inviter:
            self.invites.pending_from(player, inviter)
        self.invites.command(player, answer)

    def quote_line(self, player: Player, place: str, line_id: str) -> list[Quoted] | None:
        return self.quotes.line(player, place, line_id)

    def quote_player(self, player: Player, nick: str) -> list[Quoted]:
        return self.quotes.player(player, nick)

    def delete_chat_line(self, moderator: Player, uid: int, line_id: str) -> bool:
        return self.chats.delete_lines(moderator, uid, line_id)

    def seek(self, secret: str, command: SeekCommand) -> int | None:
        """co=seek, acceptSeek, cancelSeek: as the `k` command (an accepted seek opens a table); the
        number of a seek posted."""
        if isinstance(command, AcceptSeek):
            self.ctx.writable()
        return self.seeks.do(self.sessions.player(secret), command)

    def seek_open_to(self, secret: str, number: int) -> bool:
        """Whether a bot's feed lists seek `number` to the player (docs/bots.md)."""
        player = self.roster.find(secret)
        return player is not None and self.seeks.open_to(player, number)

    def pool(self, secret: str, pool: str) -> None:
        """co=joinPool (a pair found opens a table), leavePool (`pool` empty): as the `j` command."""
        if needs_storage("j", "", pool):
            self.ctx.writable()
        self.pools.command(self.sessions.player(secret), pool)

    def chat_from(self, secret: str, table: str, text: str) -> None:
        """The old `dodajWpis`: the same as a `c` command."""
        if needs_storage("c", table, text):
            self.ctx.writable()
        self.stream.act(self.sessions.player(secret), "chat", table, text)
