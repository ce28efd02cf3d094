"""The tables of other members of a cluster that people here sit at (docs/cluster.md, "Tables across
members"): the follower's side.

A table's owner alone runs its game. Here each such table is a *mirror*: a channel of this member's
bus, numbered into the streams of the people here like the tables of this member, fed with the
owner's events for the table in the owner's order, and the owner's whole state of the table (the last
one it sent, and the lines since), which is what a newcomer here is sent. What the people here do at
the table (moves, propositions, chat) goes to the owner, which answers with events or, for a refusal,
a line for that person alone.

Messages to the owner go through `send(member, message)` (server/cluster/lobby.py); this part keeps
no Redis and no sockets.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from server.hub.acknowledged import NOT_REACHED, UNCONFIRMED_AT_MOST
from server.hub.bus import LocalBus
from server.hub.chats import chat_text
from server.hub.context import Context
from server.hub.limits import STORAGE_REFUSED
from server.hub.model import LOBBY, Player, table_number
from server.hub.remote import RemoteLobby
from server.hub.roster import Roster
from server.hub.saved import SavedSessions
from server.hub.tables import Tables
from server.hub.visiting import person
from server.logs import Fields
from server.protocol import events
from server.protocol.codec import ProtocolError, parse_number

log = logging.getLogger(__name__)

TAIL_REFRESHED_AT = 500  # lines after the owner's whole state before a fresh one is asked for


@dataclass(eq=False)
class Mirror:
    uid: int
    owner: str
    state: list[str] = field(default_factory=list)  # the owner's whole state of the table, last sent
    tail: list[str] = field(default_factory=list)  # the table's lines since (a client applies both)
    people: dict[str, Player] = field(default_factory=dict)  # the people here at it, by nick
    coming: dict[str, Player] = field(default_factory=dict)  # asked to sit down, the owner not yet answered
    chosen: set[str] = field(default_factory=set)  # of those coming, who chose it (told if refused)
    # another session by the nick of one coming (a guest come back with a new id, or a stranger after a
    # logout), and whether it chose the table: it asks once the owner answered the old one (Mirrors.join)
    waiting: dict[str, tuple[Player, bool]] = field(default_factory=dict)
    ended_for_good: set[str] = field(default_factory=set)  # of those coming, whose session ended for good
    refreshing: bool = False

    def answered(self, nick: str) -> tuple[Player | None, bool]:
        """The person coming by that nick, no longer coming, and whether they chose the table."""
        chosen = nick in self.chosen
        self.chosen.discard(nick)
        self.ended_for_good.discard(nick)
        return self.coming.pop(nick, None), chosen

    def nobody_coming(self) -> None:
        self.coming.clear()
        self.waiting.clear()
        self.ended_for_good.clear()
        self.chosen.clear()


class Mirrors:
    def __init__(
        self,
        ctx: Context,
        bus: LocalBus,
        roster: Roster,
        saved: SavedSessions,
        tables: Tables,
        remote: RemoteLobby,
    ) -> None:
        self.ctx, self.bus, self.roster, self.saved, self.tables = ctx, bus, roster, saved, tables
        self.remote = remote
        self.by_uid: dict[int, Mirror] = {}
        self.send: Callable[[str, dict[str, Any]], None] | None = None  # None: this server alone
        self._confirmations: dict[Player, asyncio.Event] = {}  # polls waiting for `done`
        # the tables someone here asked to sit down at, some answered since: what `ended` reads (not
        # every mirror, at every logout and time-out), each dropped there once nobody is coming
        self._asked: set[int] = set()

    # --- what the tables and the stream ask ---------------------------------------------------

    def has(self, uid: int) -> bool:
        """Whether `uid` is a table of another member that a person here could sit at."""
        return self.send is not None and self._owner_of(uid) is not None

    def follows(self, player: Player, table: str) -> bool:
        """Whether a command for `table` by `player` belongs to another member (see act): seated at its
        mirror, or sitting down (a session just brought here, whose request carries an action at the
        table: it goes to the owner after the `enter`, and messages to a member keep their order)."""
        if not self.by_uid:  # nearly always: a quick answer for every command
            return False
        uid = parse_number(table)
        mirror = self.by_uid.get(uid) if uid is not None else None
        return mirror is not None and (
            mirror.people.get(player.nick) is player or mirror.coming.get(player.nick) is player
        )

    def join(self, player: Player, uid: int, *, chosen: bool) -> None:
        """`chosen`: the person chose the table, and is told if its owner will not seat them; a seat
        taken back by itself is not (its table being taken over, its `d` line seats them there)."""
        owner = self._owner_of(uid)
        if owner is None or self.send is None:
            raise ProtocolError("noSuchTable", f"There is no table {uid}.")
        mirror = self.by_uid.get(uid)
        if mirror is None:
            mirror = self.by_uid[uid] = Mirror(uid, owner)
            self.bus.open(uid)
        coming = mirror.coming.get(player.nick)
        if coming is not None and coming is not player:
            # another session by that nick (a guest come back with a new id, or a stranger): asked now,
            # the owner would take it for the copy it seats for the old session, in that one's seat.
            # It asks once the owner has answered the old request, at which the old copy leaves
            # (take_state), so that the owner seats it for who it is.
            mirror.waiting[player.nick] = (player, chosen)
            return
        if chosen:
            mirror.chosen.add(player.nick)
        if coming is player:
            return
        mirror.coming[player.nick] = player
        self._asked.add(uid)
        self.send(owner, {"enter": [uid, person(player)]})

    def ended(self, player: Player, *, for_good: bool) -> None:
        """`player`'s session ended (Sessions.remove) with requests to sit down not answered yet: the
        `leave` sent at each answer (take_state) takes a team game's player out of the game as a session
        ending at a table here does (`for_good`, as for Tables.leave)."""
        for uid in list(self._asked):
            mirror = self.by_uid.get(uid)
            if mirror is None or not mirror.coming:
                self._asked.discard(uid)
            elif for_good and mirror.coming.get(player.nick) is player:
                mirror.ended_for_good.add(player.nick)

    def seat_back(self, player: Player) -> None:
        """At the unfinished games they play on other members, as Tables.seat_back seats them here:
        when they log in, and when such a table opens (described)."""
        if self.send is None:
            return
        for uid in list(self.remote.games_of(player.nick)):
            if uid not in player.tables:
                self.join(player, uid, chosen=False)

    def follow_rename(self, player: Player) -> None:
        """A registered player logged in: each other member whose unfinished games seat a nick their
        account had before an admin renamed it (as its `d` lines name them) moves the seats the account
        has there (Visitors.renamed, by the account's number, never a nick), and the table's `d` line,
        naming the new nick, then seats them there (described). Nobody else is told: most logins have
        no seat to move, and a flood of them would be one message each to every member. A member not
        reached (or whose tables were not shown here yet) moves the seat at the player's next login."""
        if self.send is not None and not player.guest and player.account and player.former:
            for member in self.remote.seating(player.former):
                self.send(member, {"renamed": person(player)})

    def described(self, member: str, description: str) -> None:
        """A table of `member` described (`d`: opened, back after that member restarted, or taken over
        from a member that died): its players here sit down at it, as at a table opened here, and so
        do the people here who followed it at its member before."""
        _, key = events.lobby_subject(description)
        watching = self.moved(int(key), member) if key.isdigit() else []
        for nick in events.described_players(description):
            player = self.roster.online(nick)
            if player is not None:
                self.seat_back(player)
        for player in watching:
            if int(key) not in player.tables and self.roster.online(player.nick) is player:
                self.join(player, int(key), chosen=False)

    def moved(self, uid: int, owner: str | None) -> list[Player]:
        """Table `uid` is `owner`'s now (None: this member's), taken over from a member that died: the
        others' parts of the lobby forget it, and the people here at the mirror of its old owner stand
        up (what they sent there unconfirmed is sent again: Mirrors._given_up); who they were, to
        sit down at it again. Issue 44: left at the old mirror, they were not seated at the new owner's
        table, and the old owner's leaving then took them away from it."""
        self.remote.forget_table(uid, keep=owner)
        mirror = self.by_uid.get(uid)
        if mirror is None or mirror.owner == owner:
            return []
        people = [*mirror.people.values(), *mirror.coming.values(), *(w for w, _ in mirror.waiting.values())]
        for player in list(mirror.people.values()):
            self._given_up(player, mirror.owner)
            self._stand_up(mirror, player)
        mirror.nobody_coming()
        self._close_if_unused(mirror)
        log.info("table of a member gone, taken over %s", Fields(uid=uid, member=owner or "here"))
        return people

    def leave(self, player: Player, uid: int, *, for_good: bool = False) -> None:
        """`for_good` as for Tables.leave: the owner takes a team game's player out of the game."""
        mirror = self.by_uid.get(uid)
        if mirror is None:
            return
        if mirror.waiting.get(player.nick, (None, False))[0] is player:
            del mirror.waiting[player.nick]
        coming = mirror.coming.get(player.nick) is player
        if coming:
            mirror.answered(player.nick)
        seated = mirror.people.get(player.nick) is player
        if seated:
            self._stand_up(mirror, player, told=False)  # as Tables.leave: the caller says where they are
        if (seated or coming) and self.send is not None:  # the owner may have seated them
            self.send(mirror.owner, {"leave": [uid, player.nick, for_good]})
        self._close_if_unused(mirror)

    def act(self, player: Player, action: str, table: str, *args: Any) -> None:
        """A person here acts at a table of another member: its owner does it, or tells them why not.
        The person's own limits and mutes are kept here, so that a flood stops before it reaches Redis,
        and a mute of their address holds: the owner knows a registered player by their nick alone."""
        uid = parse_number(table)
        assert uid is not None and self.send is not None
        now = self.ctx.timers.now()
        if action == "chat":
            self.ctx.sanctions.check_chat(player, self.ctx.clock())
            self.ctx.limits.chat(player, chat_text(args[0]), now, self.ctx.clock())
        else:
            self.ctx.limits.player_actions(player, now)
        owner = self.by_uid[uid].owner
        player.acknowledged.begin(player.last_command)  # an old-style action: no poll began it
        number = player.command or player.last_command + 1  # an old-style action's has none
        message: dict[str, Any] = {"do": [player.nick, action, table, *args]}
        player.acknowledged.sent(player.last_command, owner, now + UNCONFIRMED_AT_MOST, number, message)
        self.send(owner, message)

    def send_again(self, owner: str) -> None:
        """Messages between this member and `owner` were lost: the actions it has not answered may be
        among them, or their answers, so they go again under their own tickets. The owner does each
        only once (Visitors.act), and answers each again; without this, each waited its 30 s, and the
        table with it (benchmarks/chaos.py, seed 29: a table still 54 s after Redis's return)."""
        if self.send is None:
            return
        again = [
            message
            for player in self.roster.players.values()
            if player.acknowledged.steps
            for message in player.acknowledged.unconfirmed(owner)
        ]
        for message in again:
            self.send(owner, message)
        if again:
            log.info("actions sent again %s", Fields(member=owner, actions=len(again)))

    def done(
        self,
        owner: str,
        nick: str,
        ticket: int | None,
        refused: list[str] | None = None,
        *,
        untold: bool = False,
    ) -> None:
        """The owner stored (or refused: `refused` is its [code, sentence]) the action of `nick` with this
        ticket (None, from a member of an earlier version: the oldest it had not answered). `untold`: the
        owner had nobody to tell the refusal to (no seat for the person there): the person is told here."""
        player = self.roster.online(nick)
        if player is None:
            return
        if isinstance(refused, list) and refused and ticket is not None:
            code, sentence = str(refused[0]), str(refused[-1])
            if untold:
                sent = player.acknowledged.unconfirmed_action(owner, ticket)
                if sent is not None:
                    relayed = ProtocolError.relayed(code, sentence)
                    self.tables.tell(player, table_number(str(sent["do"][2])), relayed.code, str(relayed))
            player.acknowledged.refused(ticket, code, sentence)
        player.acknowledged.confirmed(owner, ticket)
        self._settle(player)

    def undone(self, owner: str, nick: str, ticket: int | None) -> None:
        """The owner took that action back, its storage failing (the table's `unsaved` line says so):
        the client sends it again, with what it sent after it."""
        player = self.roster.online(nick)
        if player is not None:
            if ticket is not None and player.acknowledged.unconfirmed_action(owner, ticket) is not None:
                # for a request that is answered: not made, as the owner refuses while storage fails
                player.acknowledged.refused(ticket, "storage", STORAGE_REFUSED)
            back = player.acknowledged.undone(owner, ticket)
            if back is not None:
                self.saved.took_back_k(player, back)
            self._settle(player)

    def not_done(self, owner: str, nick: str, table: str, ticket: int | None) -> None:
        """An action that could not be sent (Redis unreachable, the owner gone): nothing to wait for.
        Unless it waits for that member no more: given up when the member left the cluster (its client
        sends it again, and the table's new member may have done it by now), or answered after all."""
        player = self.roster.online(nick)
        if player is not None and (
            ticket is None or player.acknowledged.unconfirmed_action(owner, ticket) is not None
        ):
            player.acknowledged.confirmed(owner, ticket)
            if ticket is not None:
                player.acknowledged.refused(ticket, NOT_REACHED.code, str(NOT_REACHED))
            self._settle(player)
            self.tables.tell(player, table_number(table), "notReached")

    async def confirmed(self, player: Player, timeout: float) -> None:
        """Until the owners stored the player's actions, or `timeout`: a poll that sent some waits so,
        as it waits for its own writes (Hub.settled), and its reply's k then counts them."""
        if not player.acknowledged.waiting_for():
            return
        confirmation = self._confirmations.get(player)
        if confirmation is None:
            confirmation = self._confirmations[player] = asyncio.Event()
        try:
            async with asyncio.timeout(timeout):
                await confirmation.wait()
        except TimeoutError:
            pass
        finally:  # kept only while a poll waits: k goes on by itself later (Stream.k_shown)
            if self._confirmations.get(player) is confirmation:
                del self._confirmations[player]

    def sent(self, player: Player | None) -> int:
        """A mark of the actions the player has sent to other members' tables (`outcome`)."""
        return player.acknowledged.tickets if player is not None else 0

    async def outcome(self, player: Player | None, since: int, timeout: float) -> ProtocolError | None:
        """For a request that is answered (an old-style action, a bot's) and whose actions went to other
        members' tables since the mark `since`: until they did them (`timeout` at most, then as done),
        the refusal of one, so that the request is answered as on the table's own member
        (docs/cluster.md, "Tables across members")."""
        if player is None:
            return None
        upto = player.acknowledged.tickets  # this request's actions, not those of requests made meanwhile
        if upto == since:
            return None
        await self.confirmed(player, timeout)
        refused = player.acknowledged.refused_between(since, upto)
        return None if refused is None else ProtocolError.relayed(*refused)

    def _given_up(self, player: Player, owner: str) -> None:
        """`owner` left the cluster: what it did not confirm of the player's is not done, and their
        client sends it again (to the table where it is after the take-over)."""
        back = player.acknowledged.given_up(owner)
        if back is not None:
            self.saved.took_back_k(player, back)
        self._settle(player)

    def _settle(self, player: Player) -> None:
        self.saved.note_k(player)  # the k kept moves on with the confirmations (Acknowledged.kept)
        if not player.acknowledged.waiting_for():
            confirmation = self._confirmations.pop(player, None)
            if confirmation is not None:
                confirmation.set()
            self.bus.nudge(player)  # k moved on: a long poll answers with it

    def snapshot(self, uid: int) -> list[str]:
        """A newcomer's whole state of the table: the owner's last whole state and the lines since."""
        mirror = self.by_uid[uid]
        return mirror.state + mirror.tail

    def followed_owners(self) -> set[str]:
        return {mirror.owner for mirror in self.by_uid.values()}

    def present(self, owner: str) -> list[list[Any]]:
        """Who here sits at which of `owner`'s tables, for the owner to check its view against."""
        return [
            [mirror.uid, person(player)]
            for mirror in self.by_uid.values()
            if mirror.owner == owner
            for player in [*mirror.people.values(), *mirror.coming.values()]
        ]

    # --- what the owners send -----------------------------------------------------------------

    def take_state(self, owner: str, uid: int, how: str, lines: list[str], newcomers: list[str]) -> None:
        """The owner's whole state of a table: for newcomers it let sit down (`join`), after lines were
        lost (`refresh`: everyone here gets it whole), for a new game (`new`, see Tables._new_game),
        or to start the tail afresh (`quiet`)."""
        mirror = self.by_uid.get(uid)
        if mirror is None or mirror.owner != owner:
            return
        mirror.state, mirror.tail, mirror.refreshing = lines, [], False
        if how == "refresh":
            mark = self.bus.mark()
            for player in mirror.people.values():
                player.joined[uid] = mark
        elif how == "new":
            mark = self.bus.mark()
            for player in mirror.people.values():
                player.new_game_at[uid] = mark
        for nick in newcomers:
            for_good = nick in mirror.ended_for_good
            player, _ = mirror.answered(nick)
            if player is not None and self.roster.online(nick) is player:
                self._sit_down(mirror, player)
            elif player is not None and self.send is not None:  # their session ended while it seated them
                self.send(owner, {"leave": [uid, nick, for_good]})
            self._ask_for_waiting(mirror, nick)
        self._close_if_unused(mirror)

    def take_line(self, owner: str, uid: int, line: str, b_only: bool) -> None:
        mirror = self.by_uid.get(uid)
        if mirror is None or mirror.owner != owner:
            return
        self.bus.publish(uid, line, b_only=b_only)
        mirror.tail.append(line)
        if len(mirror.tail) > TAIL_REFRESHED_AT and not mirror.refreshing and self.send is not None:
            mirror.refreshing = True
            self.send(owner, {"ask_state": uid})

    def take_player_line(self, nick: str, uid: int, line: str) -> None:
        """A line for one person here alone (a refusal), in the lobby while a new game keeps the table out
        of their replies, as Tables.tell puts one: the table's whole state has no such line."""
        player = self.roster.online(nick)
        if player is not None:
            at_table = uid in player.tables and uid not in player.new_game_at
            self.bus.send(player, uid if at_table else LOBBY, line)

    def refused(self, owner: str, uid: int, nick: str, text: str) -> None:
        """The owner would not seat a person here: the table is gone, or was never there."""
        mirror = self.by_uid.get(uid)
        if mirror is None or mirror.owner != owner:
            return
        player, chosen = mirror.answered(nick)
        if player is not None and chosen:
            self.tables.tell(player, LOBBY, "", text)  # the owner's English sentence (no code)
        elif player is not None:
            log.info("seat not taken back %s", Fields(uid=uid, nick=nick, member=owner, why=text))
        self._ask_for_waiting(mirror, nick)
        self._close_if_unused(mirror)

    def left(self, owner: str, uid: int, nick: str) -> None:
        """The owner took a person here away from its table (the table closed, the game moved on)."""
        mirror = self.by_uid.get(uid)
        if mirror is None or mirror.owner != owner:
            return
        player = mirror.people.get(nick)
        if player is not None:
            self._stand_up(mirror, player)
        self._close_if_unused(mirror)

    def owner_gone(self, owner: str) -> None:
        """The owner left the cluster: its tables leave the people here (their games wait in its store),
        and what anybody here sent it is given up (their clients send it again), also an action of one
        not seated there: sent while sitting down (see follows) at a seat it never took. Left waiting,
        its message, sent again until then, ended told "Not done" (benchmarks/chaos.py: 15 players
        when two members died a moment apart)."""
        for mirror in [m for m in self.by_uid.values() if m.owner == owner]:
            for player in list(mirror.people.values()):
                self._stand_up(mirror, player)
            mirror.nobody_coming()
            self._close_if_unused(mirror)
            log.info("table of a member gone %s", Fields(uid=mirror.uid, member=owner))
        for player in list(self.roster.players.values()):
            if player.acknowledged.steps and player.acknowledged.unconfirmed(owner):
                self._given_up(player, owner)

    # --- inside -------------------------------------------------------------------------------

    def _owner_of(self, uid: int) -> str | None:
        mirror = self.by_uid.get(uid)
        return mirror.owner if mirror is not None else self.remote.owner_of_table(uid)

    def _ask_for_waiting(self, mirror: Mirror, nick: str) -> None:
        """The owner answered for a session of `nick`: a later one by that nick still here asks now."""
        player, chosen = mirror.waiting.pop(nick, (None, False))
        if player is not None and self.roster.online(nick) is player:
            self.join(player, mirror.uid, chosen=chosen)

    def _sit_down(self, mirror: Mirror, player: Player) -> None:
        mirror.people[player.nick] = player
        if mirror.uid not in player.tables:
            player.tables.append(mirror.uid)
        player.joined[mirror.uid] = self.bus.mark()  # the next reply has the whole state (Stream.news)
        self.tables.subscriptions_changed(player)
        self.saved.save(player)

    def _stand_up(self, mirror: Mirror, player: Player, *, told: bool = True) -> None:
        del mirror.people[player.nick]
        player.joined.pop(mirror.uid, None)
        player.new_game_at.pop(mirror.uid, None)
        if mirror.uid in player.tables:
            player.tables.remove(mirror.uid)
            self.saved.save(player)
            if told:
                self.tables.subscriptions_changed(player)

    def _close_if_unused(self, mirror: Mirror) -> None:
        if not mirror.people and not mirror.coming and self.by_uid.get(mirror.uid) is mirror:
            del self.by_uid[mirror.uid]
            self.bus.close(mirror.uid)
