"""Flood control and caps (docs/operations.md, "Abuse limits"): what one player, one address, one table
and the whole server may do or fill, and the refusals while storage fails.

The only owner of the count of sessions per address; the per-minute marks and buckets of a player or a
table live on those records and are read and advanced only here.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from server.engine.gametype import GameKind
from server.hub.guestseats import GuestSeats
from server.hub.hourly import ANALYSES_OPENED, ARENA_GAMES_BEGUN, ENTRIES_MADE, GAMES_BEGUN, Hourly
from server.hub.model import PLAYER_ACTIONS, TABLE_ACTIONS, Origin, Player, Table, reserved
from server.hub.persistence import Persistence
from server.hub.spam import LINKS_FROM_NEW, LINKS_WINDOW, NEW_ACCOUNT_SECONDS, BannedWords, has_link, line_key
from server.protocol.codec import ProtocolError, nick_key

STORAGE_REFUSED = (  # docs/operations.md, "When storage fails"
    "The server cannot save anything just now, so this was not done. "
    "Play goes on when it can; the clocks stand still meanwhile."
)
# Abuse limits (docs/operations.md): per player, over the last minute; and the server's own size.
CHAT_LINES_PER_MINUTE = 20
SAME_LINE_PER_MINUTE = 3  # the same line as line_key reads it: case, spacing and look-alikes aside
INVITATIONS_PER_MINUTE = 10
# Private lines to one player from people that player has not written to in the last ANSWERED_FOR
# seconds (a conversation is held only by CHAT_LINES_PER_MINUTE): from one sender, and from everyone.
PRIVATE_FROM_ONE_PER_MINUTE = 10
PRIVATE_TO_ONE_PER_MINUTE = 30
# of which guests together (a troll's fresh guests from many networks), so that strangers with accounts
# still reach a player whose inbox guests keep full
PRIVATE_FROM_GUESTS_PER_MINUTE = 20
ANSWERED_FOR = 600.0
WROTE_TO_KEPT = 256  # partners remembered per player before the ones past ANSWERED_FOR are forgotten
IGNORE_CHANGES_PER_MINUTE = 30  # each is a write to the store
MAX_PLAYERS = 5_000
MAX_TABLES = 2_500
PLAYERS_PER_ADDRESS = 10  # sessions from one address (a club or a school behind one NAT needs a few)
GUEST_TABLES_PER_ADDRESS = 10  # game tables with a seat of a guest from one address
SEEKS_PER_ADDRESS = 6  # the lobby's open seeks (server/hub/seeks.py) posted by guests from one address
# Games begun in the last hour (any way but an organiser's or a tournament's; analysis aside): each finished
# game with a move is archived for good: a dot, a resignation and a new game archived 328 a minute.
GAMES_BEGUN_PER_HOUR = 60  # by one player
GAMES_BEGUN_PER_ADDRESS = 60  # by the guests of one address (times the network factor for a network)
# Analysis tables opened in the last hour: each table ever opened keeps its row (its number is never
# reused), and 10 invitations a minute let the 40 guests of one network open 576,000 a day, 31 MB.
ANALYSES_PER_HOUR = 30  # by one player
ANALYSES_PER_ADDRESS = 30  # by the guests of one address (times the network factor for a network)
# Entries in the tournaments the server runs made in the last hour by the guests of one address (times the
# network factor for a network): each is kept with its tournament for good, and a guest's nick is new
# every 2 seconds (its logins' limit): 43,200 a day in each tournament from one address.
ENTRIES_PER_ADDRESS = 20
# Games of the server's arenas begun in the last hour (server/director): each is archived however short, and
# an arena pairs a free player again after a few seconds' rest, so that a pair resigning at once archived 5
# games a minute, the 40 guests of one network 100. An honest player of 1-minute games plays about 60.
ARENA_GAMES_PER_HOUR = 120  # by one player
ARENA_GAMES_PER_ADDRESS = 120  # by the guests of one address (times the network factor for a network)
NETWORK_FACTOR = 4  # a network (IPv4 /24, IPv6 /48) may hold this many times what one address may
GAMES_PER_PLAYER = 5  # unfinished games a player plays at once (analysis tables not counted)
ANALYSIS_PER_PLAYER = 3  # analysis tables a player has open
# A take-back replays the game from its start (Game.undo: 27 ms on 52x52 with 2,400 dots): it counts as
# one game action more for every this many moves, so that take-backs of long games cannot fill the loop.
MOVES_PER_ACTION = 100
REGISTERED_SHARE = 20  # per cent of the player and table slots that only registered players may fill


@dataclass(frozen=True)
class Caps:
    """What the server, one address and one player may fill (docs/operations.md, "Abuse limits")."""

    players: int = MAX_PLAYERS
    tables: int = MAX_TABLES
    players_per_address: int = PLAYERS_PER_ADDRESS
    games_per_player: int = GAMES_PER_PLAYER
    analysis_per_player: int = ANALYSIS_PER_PLAYER
    registered_share: int = REGISTERED_SHARE  # per cent
    guest_tables_per_address: int = GUEST_TABLES_PER_ADDRESS
    seeks_per_address: int = SEEKS_PER_ADDRESS
    games_begun_per_address: int = GAMES_BEGUN_PER_ADDRESS
    network_factor: int = NETWORK_FACTOR
    banned_words: tuple[str, ...] = field(default=(), repr=False)  # --banned-words, one entry each
    # --bots-rated: a bot may play a rated game against a person (docs/bots.md); bot against bot always may
    bots_rated: bool = False

    def for_guests(self, slots: int) -> int:
        """How many of `slots` guests may fill: the rest waits for registered players."""
        return slots - slots * self.registered_share // 100


class OpenTables(Protocol):
    """This member's open tables as the caps read them (server/hub/tables.py): by who has a seat at
    them, never walked whole, as a game start checks them (docs/performance.md, 2026-12-02)."""

    guest_seats: GuestSeats

    def seated_at(self, nick: str) -> Iterable[Table]: ...


def held_at(tables: Iterable[Table], player: Player, *, analysis: bool) -> int:
    """How many of `tables` hold an unfinished game with the player's seat (`analysis`: an analysis
    table with it, finished or not)."""
    held = 0
    for table in tables:
        room = table.room
        if room is None or (room.game_type.kind is GameKind.ANALYSIS) is not analysis:
            continue
        if (analysis or room.game.result is None) and table.seat_of(player):
            held += 1
    return held


def needs_storage(kind: str, table: str, text: str) -> bool:
    """Whether a command changes what storage keeps (moves, chat, propositions, clocks, invitations,
    tables, the players one ignores, refusing guests' private lines): refused while storage fails.
    Subscriptions, own flags, `c get` and asking for the list of the ignored or the setting (`c ignore`,
    `c guestprivates` without a value) only touch the session."""
    if kind == "c":
        return table != "get" and not (table in ("ignore", "guestprivates") and not text)
    if kind == "v":
        return text == "a" or text.startswith("s.")
    if kind == "k":  # an accepted seek opens a table; a seek posted or cancelled is kept nowhere
        return text.startswith("a.")
    if kind == "j":  # a pool pairs at once when it can
        return bool(text)
    return kind in ("s", "u", "t")


def new_to_links(player: Player, time: float) -> bool:
    """A guest, or an account younger than NEW_ACCOUNT_SECONDS at wall-clock `time`."""
    return player.guest or time - player.registered_at < NEW_ACCOUNT_SECONDS


def within_a_minute(recent: deque[tuple[float, str]], now: float, limit: int, code: str, what: str) -> None:
    """Forget what is older than a minute; refuse if `limit` things happened within it."""
    while recent and recent[0][0] <= now - 60:
        recent.popleft()
    if len(recent) >= limit:
        raise ProtocolError(code, f"At most {limit} {what} a minute; please wait a little.")


class Limits:
    """The checks, each made before anything changes, so that a refusal leaves all state as it was."""

    def __init__(
        self, caps: Caps, held_elsewhere: Callable[[str, bool], int], now: Callable[[], float]
    ) -> None:
        """`held_elsewhere(nick, analysis)`: in a cluster, the unfinished games (or analysis tables)
        `nick` has at other members' tables, which its caps count too (RemoteLobby.held_by); `now`: the
        timers' clock, which the hourly counts read."""
        self.caps = caps
        factor = caps.network_factor
        self.held_elsewhere = held_elsewhere
        # the last hour's games begun and analysis tables opened: by each player, by each address's guests
        self.begun = Hourly(GAMES_BEGUN, GAMES_BEGUN_PER_HOUR, caps.games_begun_per_address, factor, now)
        self.analysed = Hourly(ANALYSES_OPENED, ANALYSES_PER_HOUR, ANALYSES_PER_ADDRESS, factor, now)
        self.entered = Hourly(ENTRIES_MADE, None, ENTRIES_PER_ADDRESS, factor, now)  # accounts: theirs once
        self.arena = Hourly(ARENA_GAMES_BEGUN, ARENA_GAMES_PER_HOUR, ARENA_GAMES_PER_ADDRESS, factor, now)
        # by name, for a member of a cluster to share (server/cluster/hourly.py)
        self.hourly = {
            count.counted.name: count for count in (self.begun, self.analysed, self.entered, self.arena)
        }
        self.banned = BannedWords(caps.banned_words)
        # players logged in from each host and each network (not the unlimited)
        self.per_host: Counter[str] = Counter()
        self.per_network: Counter[str] = Counter()
        # guests' live entries in the server's tournaments, each holding one of its address's guest
        # tables (guest_tables) while it waits for a table:
        # (tournament, nick_key) -> (seat_key, host, network)
        self.entries: dict[tuple[str, str], tuple[str, str, str]] = {}

    def writable(self, persistence: Persistence) -> None:
        """Refuse, before anything changes, a command whose effect storage would have to keep while
        it takes no writes: moves, chat, propositions, clocks, invitations, new tables. Logins and polls
        go on."""
        if persistence.storage_failure is not None:
            persistence.retry_soon()  # the player tries again: see whether storage is back by then
            raise ProtocolError("storage", STORAGE_REFUSED)

    def room_for_a_player(
        self, players: int, guests: int, guest: bool, origin: Origin, leaving: Player | None = None
    ) -> None:
        """`players` and `guests`: how many are online (counted by the roster, not here: a count walked
        at every login made logging the N-th player in cost O(N)); `leaving`: a session that makes
        room for this one (a guest coming back under its nick), counted out."""
        counted = leaving is not None and bool(leaving.host) and not leaving.unlimited
        if leaving is not None:
            players, guests = players - 1, guests - leaving.guest
        if players >= self.caps.players:
            raise ProtocolError("serverFull", "The server is full; please come back later.")
        if guest and guests >= self.caps.for_guests(self.caps.players):
            raise ProtocolError(
                "serverFull",
                "The server is full for guests; please come back later, or log in with an account.",
            )
        if origin.unlimited or not origin.host:
            return
        most = self.caps.players_per_address
        same_host = counted and leaving is not None and leaving.host == origin.host
        if self.per_host[origin.host] - same_host >= most:
            raise ProtocolError("tooManyPlayers", f"{most} players are logged in from your address already.")
        most *= self.caps.network_factor
        same_network = counted and leaving is not None and leaving.network == origin.group
        if self.per_network[origin.group] - same_network >= most:
            raise ProtocolError(
                "tooManyPlayers", f"{most} players are logged in from your network ({origin.group}) already."
            )

    def arrived(self, player: Player) -> None:
        if player.host and not player.unlimited:
            self.per_host[player.host] += 1
            self.per_network[player.network] += 1

    def left(self, player: Player) -> None:
        for entry in [entry for entry, (seat, _, _) in self.entries.items() if seat == player.seat_key]:
            del self.entries[entry]  # the session's entries are withdrawn at their next pairing
        if player.host and not player.unlimited:
            for counts, key in ((self.per_host, player.host), (self.per_network, player.network)):
                counts[key] -= 1
                if not counts[key]:
                    del counts[key]

    def entered_tournament(self, tournament: str, player: Player) -> None:
        """`player` holds a live entry in `tournament` (the server's own): a guest's counts as one of their
        address's and network's guest tables until it ends (`entry_ended`) or their session does."""
        if player.guest and player.host and not player.unlimited and not reserved(player.nick):
            self.entries[tournament, nick_key(player.nick)] = (player.seat_key, player.host, player.network)

    def entry_ended(self, tournament: str, nick: str | None = None) -> None:
        """`nick`'s entry in `tournament` is withdrawn; None: the tournament is over."""
        for entry in [entry for entry in self.entries if entry[0] == tournament]:
            if nick is None or entry[1] == nick_key(nick):
                del self.entries[entry]

    def room_for_a_table(
        self,
        opened: int,
        tables: OpenTables,
        *players: Player,
        guest: bool = False,
        asking: Player | None = None,
    ) -> None:
        """Room for one more game table (`opened`: game tables open now); one a guest plays at (a game
        with a guest in it, a guest's analysis; `guest`: one of an organiser's, whose guests may not be
        online) not in the tables kept for registered players, nor beyond what a guest's address and
        network hold already (tables with a seat of one of its guests, Table.guest_places, and its guests'
        entries waiting for a tournament's table; see guest_tables for `asking`)."""
        guest = guest or any(player.guest for player in players)
        if opened >= self.caps.tables or (guest and opened >= self.caps.for_guests(self.caps.tables)):
            raise ProtocolError("tooManyTables", "No more game tables can be opened now; please try later.")
        self.guest_tables(tables, *players, asking=asking)

    def guest_tables(self, tables: OpenTables, *players: Player, asking: Player | None = None) -> None:
        """Room for one more table with a seat of each guest of `players` from their address and network:
        counted as the seats change (GuestSeats), not walked, as every game start checks it. A guest's
        entry in the server's tournaments holds one too while it is not at an unfinished game of its
        tournament (`entered_tournament`): each entry is a table at its next pairing, whoever else fills
        the address's share meanwhile. With `asking` (who opens the table: accepting), the others are
        checked first and a refusal for one of them names them by nick: the limit's own sentence speaks to
        the guest of that address, and names its network."""
        counted = [p for p in players if p.guest and p.host and not p.unlimited and not reserved(p.nick)]
        if not counted:
            return
        counted.sort(key=lambda player: asking is not None and player is asking)  # the others first
        seats = tables.guest_seats
        hosts = Counter({player.host: seats.hosts[player.host] for player in counted})
        networks = Counter({player.network: seats.networks[player.network] for player in counted})
        for (tournament, key), (_, host, network) in self.entries.items():
            # an entry at an unfinished game of its tournament is counted by its table
            if (host in hosts or network in networks) and not seats.at_game_of(tournament, key):
                hosts[host] += 1
                networks[network] += 1
        most = self.caps.guest_tables_per_address
        for player in counted:
            full = hosts[player.host] >= most or networks[player.network] >= most * self.caps.network_factor
            if full and asking is not None and player is not asking:
                raise ProtocolError(
                    "tooManyTables",
                    f"{player.nick} cannot begin a game now: guests from the same address or network hold "
                    "their most game tables.",
                )
            if hosts[player.host] >= most:
                raise ProtocolError(
                    "tooManyTables", f"Guests from your address have {most} game tables open already."
                )
            if networks[player.network] >= most * self.caps.network_factor:
                raise ProtocolError(
                    "tooManyTables",
                    f"Guests from your network ({player.network}) have "
                    f"{most * self.caps.network_factor} game tables open already.",
                )

    def room_for_a_seek(self, seekers: Sequence[Player], player: Player, most: int) -> None:
        """Room among the lobby's `most` open seeks (posted by `seekers`, every member's) for one more of
        `player`'s: guests list all but the registered players' share, and the guests of one address or
        network their share (times the network factor), so that no flood of guests fills the list a
        newcomer finds a game in (accounts are not free to make, and a bot may seek several kinds of game).
        Another member's seekers have no address here: each member counts the addresses of its own."""
        if len(seekers) >= most:
            raise ProtocolError(
                "seeksFull", f"The lobby has {most} open seeks already: accept one, or try later."
            )
        if player.guest and sum(seeker.guest for seeker in seekers) >= self.caps.for_guests(most):
            raise ProtocolError(
                "seeksFull",
                f"The lobby keeps its last {most - self.caps.for_guests(most)} seeks for registered players: "
                "accept one, try later, or log in with an account.",
            )
        if not player.guest or player.unlimited or not player.host:
            return
        counted = [seeker for seeker in seekers if seeker.guest and seeker.host and not seeker.unlimited]
        share = self.caps.seeks_per_address
        if sum(seeker.host == player.host for seeker in counted) >= share:
            raise ProtocolError(
                "seeksFull",
                f"Guests from your address have {share} open seeks already: accept one, or try later.",
            )
        share *= self.caps.network_factor
        if sum(seeker.network == player.network for seeker in counted) >= share:
            raise ProtocolError(
                "seeksFull",
                f"Guests from your network ({player.network}) have {share} open seeks already: accept one, "
                "or try later.",
            )

    def games_of(self, tables: OpenTables, player: Player, *, analysis: bool = False) -> None:
        """A player plays at most games_per_player unfinished games, and has at most analysis_per_player
        analysis tables, at once: this member's `tables` (those with a seat of their nick, not every open
        one: every game start checks this) and, in a cluster, every other member's; and has begun (or
        opened) fewer than the last hour's bound (Hourly)."""
        if player.unlimited or reserved(player.nick):
            return
        most = self.caps.analysis_per_player if analysis else self.caps.games_per_player
        held = held_at(tables.seated_at(player.nick), player, analysis=analysis)
        if held < most:
            held += self.held_elsewhere(player.nick, analysis)
        if held >= most:
            what = "analysis tables open" if analysis else "unfinished games"
            raise ProtocolError("tooManyGames", f"{player.nick} has {held} {what} already (at most {most}).")
        if analysis:
            self.analysed.check_bound(player, "analysisFlood")
        else:
            self.may_begin(player)

    def may_begin(self, player: Player) -> None:
        """`player` has begun fewer than GAMES_BEGUN_PER_HOUR games in the last hour, and a guest's address
        and network fewer than their share (accounts are not free to make as guests are)."""
        self.begun.check_bound(player, "gameFlood")

    def began(self, players: Iterable[Player]) -> None:
        """These players began a game: it counts once for each of them, and once for each address and
        network of its guests."""
        self.begun.add(players)

    def may_begin_a_game(self, tables: OpenTables, player: Player) -> None:
        """What keeps `player` from any game now, whoever the opponent: the cap of unfinished games, and
        the tables their address's guests hold. A game found for them (a seek, a pool) checks it first,
        so that the refusal, which speaks of their address, goes to them and not to the other."""
        self.games_of(tables, player)
        self.guest_tables(tables, player)

    def chat(self, player: Player, text: str, now: float, time: float) -> None:
        """At most CHAT_LINES_PER_MINUTE lines a minute, the same line at most SAME_LINE_PER_MINUTE
        times, no banned word, and from a newcomer (`new_to_links`) at most LINKS_FROM_NEW lines with a
        link in LINKS_WINDOW. `now` is the timers' clock, `time` the wall clock an account's age is
        read by. A refused line counts towards none of these."""
        within_a_minute(player.said, now, CHAT_LINES_PER_MINUTE, "chatFlood", "chat lines")
        key = line_key(text)
        if sum(1 for _, said in player.said if said == key) >= SAME_LINE_PER_MINUTE:
            raise ProtocolError("repeatedLine", "The same line again: it was not sent.")
        if self.banned.found_in(text):
            raise ProtocolError("bannedWord", "A word in this line is not allowed here; it was not sent.")
        if has_link(text) and new_to_links(player, time):
            linked = player.linked
            while linked and linked[0] <= now - LINKS_WINDOW:
                linked.popleft()
            if len(linked) >= LINKS_FROM_NEW:
                raise ProtocolError(
                    "tooManyLinks",
                    f"Guests and accounts younger than a day may post at most {LINKS_FROM_NEW} lines with "
                    f"a link in {LINKS_WINDOW / 60:.0f} minutes; it was not sent. Please wait, or log in "
                    "with an older account.",
                )
            linked.append(now)
        player.said.append((now, key))

    def private(self, recipient: Player, sender: str, now: float) -> str | None:
        """Room for a private line from `sender` to `recipient`, checked where the recipient is served
        (so also for a sender on another member of a cluster). A line from someone the recipient wrote
        to in the last ANSWERED_FOR seconds is a conversation: None, nothing to count. Any other counts
        (returns the sender's key for `private_taken`, once the line is sent): at most
        PRIVATE_FROM_ONE_PER_MINUTE from one sender, PRIVATE_TO_ONE_PER_MINUTE from everyone, of which
        PRIVATE_FROM_GUESTS_PER_MINUTE from guests (a guest's nick_key keeps its `*`)."""
        if self.answering(recipient, sender, now):
            return None
        key = nick_key(sender)
        recent = recipient.private_in
        while recent and recent[0][0] <= now - 60:
            recent.popleft()
        if sum(1 for _, who in recent if who == key) >= PRIVATE_FROM_ONE_PER_MINUTE:
            raise ProtocolError(
                "privateFlood",
                f"At most {PRIVATE_FROM_ONE_PER_MINUTE} private lines a minute to {recipient.nick} "
                "until they write to you; it was not sent.",
            )
        guests = sum(1 for _, who in recent if who.startswith("*")) if key.startswith("*") else 0
        if len(recent) >= PRIVATE_TO_ONE_PER_MINUTE or guests >= PRIVATE_FROM_GUESTS_PER_MINUTE:
            raise ProtocolError(
                "privateFull",
                f"{recipient.nick} is getting too many private messages just now; it was not sent. "
                "Please try again in a minute.",
            )
        return key

    def answering(self, recipient: Player, sender: str, now: float) -> bool:
        """Whether `recipient` wrote to `sender` in the last ANSWERED_FOR seconds: `sender`'s lines are
        answers in a conversation the recipient holds."""
        wrote = recipient.wrote_to.get(nick_key(sender))
        return wrote is not None and now - wrote < ANSWERED_FOR

    def private_taken(self, recipient: Player, key: str, now: float) -> None:
        recipient.private_in.append((now, key))

    def wrote(self, writer: Player, recipient: str, now: float) -> None:
        """`writer` sent `recipient` a private line: the lines back are a conversation for a while."""
        wrote_to = writer.wrote_to
        wrote_to[nick_key(recipient)] = now
        if len(wrote_to) > WROTE_TO_KEPT:
            for key in [key for key, at in wrote_to.items() if now - at >= ANSWERED_FOR]:
                del wrote_to[key]

    def may_play_rated(self, one: Player, other: Player) -> bool:
        """A rated game between a bot and a person only where the admin allows it (--bots-rated): a
        bot's results must not move people's ratings unless the server says they may."""
        return one.bot == other.bot or self.caps.bots_rated

    def rated_between(self, ranked: bool, one: Player, other: Player) -> None:
        if ranked and not self.may_play_rated(one, other):
            raise ProtocolError("botUnrated", "A bot and a person play unrated games only here.")

    def may_invite(self, player: Player, now: float) -> None:
        """Refuse when the player sent their most invitations this minute (nothing is counted)."""
        within_a_minute(player.invited, now, INVITATIONS_PER_MINUTE, "tooManyInvitations", "invitations")

    def invitation(self, player: Player, whom: str, now: float) -> None:
        self.may_invite(player, now)
        player.invited.append((now, whom))

    def ignore_change(self, player: Player, now: float) -> None:
        what = "changes to the players you ignore"
        within_a_minute(player.ignore_changes, now, IGNORE_CHANGES_PER_MINUTE, "tooFast", what)
        player.ignore_changes.append((now, ""))

    def player_actions(self, player: Player, now: float) -> None:
        """The player's own part of `actions` (also for a table of another member: Mirrors.act)."""
        if player.unlimited or reserved(player.nick):
            return
        if not player.actions.take(now):
            raise ProtocolError(
                "tooFast", f"At most {PLAYER_ACTIONS[0]:.0f} game actions a second; please wait a little."
            )

    def take_back(self, player: Player, moves: int, now: float) -> None:
        """A take-back of a game of `moves` moves, asked for by `player` (proposed, or at an analysis
        table done): MOVES_PER_ACTION moves replayed count as one game action more (the action itself
        was counted by `actions`)."""
        if player.unlimited or reserved(player.nick):
            return
        more = min(moves // MOVES_PER_ACTION, PLAYER_ACTIONS[1] - 1)
        if more and not player.actions.take(now, more):
            raise ProtocolError(
                "tooFast",
                f"A take-back in a game of {moves} moves counts as {more + 1:.0f} game actions; "
                "please wait a little.",
            )

    def actions(self, player: Player, table: Table, now: float) -> None:
        """Not faster than a player and a table may act (people only: the AI and --unlimited are not held)."""
        if player.unlimited or reserved(player.nick):
            return
        self.player_actions(player, now)
        if not table.actions.take(now):
            raise ProtocolError(
                "tooFast", f"Table {table.uid} takes at most {TABLE_ACTIONS[0]:.0f} game actions a second."
            )
