"""One game table's play: moves, enclosures drawn, STOP, propositions, the clock and the record.

Over 500 lines because moves, propositions, pauses and the clock all read and change the one game's
state and the order of its events; split, each part would reach into the others. Who sits where and
in which order (two players, or two teams) is its `Lineup` (server/hub/lineup.py).

The room applies a player's action to the engine and says what everyone at the table (and the
lobby) must see, through the `say` callbacks the tables give it (they publish on the bus). It raises
ProtocolError for refusals, before changing anything.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from server.engine.board import BLACK, WHITE, IllegalMove
from server.engine.game import COLOUR, NotYourMove, game_for_type
from server.engine.gametype import GameKind, GameType, parse_game_type
from server.engine.moves import MoveSyntaxError, parse_move, parse_points, point_to_sgf
from server.engine.played import Move
from server.engine.record import game_to_record
from server.engine.sgf import GameRecord
from server.engine.start import Setup
from server.hub.clock import MAX_CLOCK, MAX_GIFT, Clock, Timers
from server.hub.lineup import Lineup, colour_of
from server.hub.sentences import PROPOSAL_WORDS, result_sentence
from server.protocol import events
from server.protocol.codec import ProtocolError, parse_number

PROPOSALS = ("score", "terr", "drop", "draw", "new", "undo")
ANSWERS = {"ok": "ok", "accept": "ok", "reject": "reject", "cancel": "cancel"}
_ANSWER = re.compile(r"(ok|accept|reject|cancel)([1-8])(score|terr|drop|draw|new|undo)")


def asks_for_a_new_game(text: str) -> bool:
    """Whether a proposition's text proposes a new game or agrees to one (`new`, `ok1new`, `accept2new`)."""
    found = _ANSWER.fullmatch(text)
    agreed = found is not None and ANSWERS[found.group(1)] == "ok" and found.group(3) == "new"
    return text == "new" or agreed


@dataclass(frozen=True)
class AutoTable:
    """A table an organiser set up (setUpTable). Its first game is the tournament game: sayHi grace,
    no-shows decided (`Void`, `+F`), the event and round in the record."""

    tournament: str | None  # SGF EV; None when the organiser said `x` (not saved)
    round: str | None  # SGF RO; None for `x`
    say_hi: dict[str, int] = field(default_factory=dict)  # nick -> extra seconds for their first move


JournalText = tuple[str, str]  # a journal entry as the hub keeps it: its kind and its data in JSON


def journal_entry(kind: str, data: dict[str, Any]) -> JournalText:
    """A journal entry as a table keeps it while its game lasts (Room.game_entries, Table.journal)."""
    return kind, json.dumps(data, separators=(",", ":"))


def opening(
    opened: dict[str, Any],
) -> tuple[GameType, str, str, int, AutoTable | None, Setup | None, Sequence[str]]:
    """A table's game as its journal's "open" entry set it up (Tables.open_table wrote it): the
    arguments of Tables.new_table and Tables.new_room after the table's number."""
    auto, setup = opened.get("auto"), opened.get("setup")
    return (
        parse_game_type(opened["type"]),
        opened["blue"],
        opened["red"],
        opened["seed"],
        AutoTable(auto["tournament"], auto["round"], auto["sayHi"]) if auto is not None else None,
        Setup(
            tuple(parse_points("".join(setup["b"]))),
            tuple(parse_points("".join(setup["w"]))),
            setup["first"],
        )
        if setup is not None
        else None,
        opened.get("more", ()),
    )


def renamed_opening(opened: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    """A journal's "open" entry with the player `old` named `new` (an admin renamed their account): the
    one a compacted journal starts with once their seat moved (server/hub/seating.py)."""

    def name(nick: str) -> str:
        return new if nick == old else nick

    changed = {**opened, "blue": name(opened["blue"]), "red": name(opened["red"])}
    if "more" in opened:
        changed["more"] = [name(nick) for nick in opened["more"]]
    auto = opened.get("auto")
    if auto is not None:
        changed["auto"] = {**auto, "sayHi": {name(nick): seconds for nick, seconds in auto["sayHi"].items()}}
    return changed


def _without_asks(entries: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, dict[str, Any]]]:
    """The entries without the propositions that only asked, nor a team's agreements that did not yet
    settle them (`partial`, docs/teams.md): a settled one changed nothing."""
    return [
        (kind, data)
        for kind, data in entries
        if kind != "propose" or (data["text"] not in PROPOSALS and not data.get("partial"))
    ]


class Room:
    def __init__(
        self,
        uid: int,
        game_type: GameType,
        blue: str,
        red: str,
        timers: Timers,
        *,
        seed: int,
        say_table: Callable[[str], None],
        say_lobby: Callable[[str], None],
        tell: Callable[[str, str], None],
        finished: Callable[[Room], None],
        new_game: Callable[[Room], None],
        note: Callable[[str, dict[str, Any], JournalText], None],
        auto: AutoTable | None = None,
        setup: Setup | None = None,
        more: Sequence[str] = (),
    ) -> None:
        """`blue` and `red` play sides 1 and 2; `more` the sides from 3 on, of a team game."""
        self.uid = uid
        self.setup = setup  # the starting position of an analysis of an archived game (SGFz)
        # an analysis table: one analyser in both seats, placing dots of either colour; no clock, free undo
        self.analysis = game_type.kind is GameKind.ANALYSIS
        self.game_type = game_type
        self.lineup = Lineup((blue, red, *more))
        self.timers = timers
        self.seed = seed
        self._to_table = say_table
        self._to_lobby = say_lobby
        self._to_chat = tell  # (code, text): a server chat line at the table
        self._on_finished = finished
        self._on_new_game = new_game  # everyone at the table gets the new game's whole state
        self._note_out = note  # (kind, data, the entry kept): an accepted action, for the journal
        self.quiet = False  # while replaying the journal nothing is said, noted or archived again
        self._action: dict[str, Any] | None = None  # the propose() call being applied, noted once
        self.archive_number: int | None = None
        self.auto = auto
        self.showed_up: set[int] = set()  # seats whose player came to the table (for no-shows)
        self.cancelled = False  # the organiser cancelled the tournament game (Tournaments.cancel_table)
        self.games_played = 0
        self.last_activity = timers.now()
        self._described: tuple[tuple[str, ...], str] | None = None  # the seats and their description
        self._begin()

    # --- what the room says, and to whom --------------------------------------------------------

    def _say_table(self, line: str) -> None:
        if not self.quiet:
            self._to_table(line)

    def _say_lobby(self, line: str) -> None:
        if not self.quiet:
            self._to_lobby(line)

    def _tell(self, code: str, text: str) -> None:
        if not self.quiet:
            self._to_chat(code, text)

    def _finished(self) -> None:
        """The hub archives the game (not an analysis: saved on request only) and tells the lobby."""
        if not self.quiet:
            self._on_finished(self)

    def _note(self, kind: str, **data: Any) -> None:
        """Journal an accepted action, with both clocks as they are right after it."""
        if self.quiet:
            return
        if self.clock is not None:
            data["c"] = self.clock.state()
        entry = journal_entry(kind, data)
        self.game_entries.append(entry)
        self._note_out(kind, data, entry)

    # --- set-up --------------------------------------------------------------------------------

    def _begin(self) -> None:
        self.game = game_for_type(self.game_type, seed=self.seed + self.games_played, archived=self.setup)
        # the journal entries of this game, in order: what `compacted` shortens. Each as its kind and its
        # data in JSON, as the journal stores it, not the dict: every move's entry is kept while the game
        # lasts, and a tuple holding a dict (or tuples in tuples, more than a young collection untracks:
        # see server/engine/game.py MoveList) stays walked by every full collection (issue 19.2).
        self.game_entries: list[JournalText] = []
        self.proposal: tuple[int, str] | None = None  # the proposer's side, what
        self.agreed: set[int] = set()  # the sides that agreed to it so far (a team game's)
        self.drawing: dict[int, str] = {}  # side -> the enclosure it is drawing
        self.move_sides: list[int] = []  # who made each move of game.moves: a side; 0 for STOP's dots
        # the colours that made a move of their own in this game, taken back or not (the no-show rule)
        self.colours_moved: set[int] = set()
        self.gone_before = frozenset(self.lineup.gone)  # team players who left in an earlier game here
        self.archive_number = None
        gt = self.game_type
        grace = (0.0, 0.0)
        if self.tournament_game:
            assert self.auto is not None
            grace = (self._say_hi(self.lineup.next_side(1, 0)), self._say_hi(self.lineup.next_side(2, 0)))
        self.clock = (
            Clock(
                self.timers,
                gt.start_time,
                gt.added_time,
                self._flag,
                first=self.game.to_move,
                first_move_grace=grace,
            )
            if gt.timed and not self.analysis
            else None
        )
        self.graced = self.side_on_move  # the side last given its sayHi (the first: by the clock itself)

    def _say_hi(self, side: int) -> float:
        """The side's sayHi seconds (an organiser's table), spent before its clock on its first move."""
        assert self.auto is not None
        return self.auto.say_hi.get(self.lineup.nick_of(side), 0) if side else 0

    @property
    def blue(self) -> str:
        """Blue's name: the player, or team one's nicks in its order (docs/teams.md)."""
        return self.lineup.names(BLACK)

    @property
    def red(self) -> str:
        return self.lineup.names(WHITE)

    @property
    def teams(self) -> bool:
        return self.lineup.teams

    @property
    def side_on_move(self) -> int:
        """The colour on move; at a team table the side: the team's player after the one who made its
        last move, skipping those who left (the team's first side once nobody of it is left: the game
        is over then, and the lines still name a side)."""
        colour = self.game.to_move
        if not self.lineup.teams:
            return colour
        last = next((side for side in reversed(self.move_sides) if side and colour_of(side) == colour), 0)
        return self.lineup.next_side(colour, last) or colour

    @property
    def tournament_game(self) -> bool:
        """Only the first game of a table set up by an organiser is the tournament game."""
        return self.auto is not None and self.games_played == 0

    def arrived(self, nick: str) -> None:
        """A player sat down at the table: they showed up for the tournament game."""
        seat = self.seat_of(nick)
        if self.tournament_game and seat and seat not in self.showed_up and self.game.result is None:
            self.showed_up.add(seat)
            self._note("came", p=seat)

    def seat_of(self, nick: str) -> int:
        """The nick's side (its colour in a two-player game); 0 for a spectator or a player who left."""
        return self.lineup.side_of(nick)

    def rename_seat(self, old: str, new: str) -> None:
        """The player of `old`'s side plays on as `new` (their account was renamed): the same side, turn
        and clock, and their sayHi at a tournament table."""
        self.lineup = self.lineup.renamed(old, new)
        if self.auto is not None and old in self.auto.say_hi:
            say_hi = {new if nick == old else nick: seconds for nick, seconds in self.auto.say_hi.items()}
            self.auto = AutoTable(self.auto.tournament, self.auto.round, say_hi)

    def _seat(self, nick: str) -> int:
        side = self.seat_of(nick)
        if not side:
            who = "players still in the game" if self.lineup.teams else "two players of this table"
            raise ProtocolError("notPlayer", f"Only the {who} may do that.")
        return side

    def nick_of(self, side: int) -> str:
        return self.lineup.nick_of(side)

    def _check_turn(self, side: int) -> None:
        """At a team table only the side on move places dots or presses STOP."""
        on_move = self.side_on_move
        if self.lineup.teams and side != on_move:
            raise ProtocolError("notYourTurn", f"It is {self.nick_of(on_move)}'s turn, not yours.")

    # --- lines ---------------------------------------------------------------------------------

    def description(self) -> str:
        """`d<uid>.<type>.<blue>.<red>`, built again only when the seats swap: the lobby's whole state
        asks every table for it (2,000 tables made formatting the game type a tenth of the server's time
        while players logged in)."""
        seats = self.lineup.seats
        if self._described is None or self._described[0] != seats:
            teams = (events.team(self.lineup.members(BLACK)), events.team(self.lineup.members(WHITE)))
            self._described = (seats, events.description(self.uid, self.game_type, *teams))
        return self._described[1]

    def state(self) -> str:
        return events.state(self.uid, self.game, self.archive_number, self.side_on_move)

    def flags(self) -> str:
        """`f<side on move>_<t1>.<t2>[.g<grace>]`: whole seconds left, `p` before a clock that stands
        still (paused, or both while storage fails); empty untimed. `g` is the grace the side on move
        has before its clock runs (sayHi, or the grace after a restart), so that a client counts it
        down first instead of the clock; MultiPoints reads only the first two fields."""
        if self.clock is None:
            return f"f{self.side_on_move}_"
        times = []
        for player in (BLACK, WHITE):
            seconds = max(0, int(self.clock.left(player)))
            times.append(("p" if self.clock.paused[player] or self.clock.held else "") + str(seconds))
        grace = int(self.clock.grace_left(self.game.to_move))
        extra = f".g{grace}" if grace > 0 and self.game.result is None else ""
        return f"f{self.side_on_move}_{times[0]}.{times[1]}{extra}"

    def proposal_line(self) -> str:
        """`u<side><what>`, at a team table with `.<sides that agreed so far>` once some have."""
        if self.proposal is None:
            return "u"
        agreed = "." + ",".join(str(side) for side in sorted(self.agreed)) if self.agreed else ""
        return f"u{self.proposal[0]}{self.proposal[1]}{agreed}"

    def record_line(self) -> str:
        """`sr(;...)`: the whole record of the current game as SGF nodes, never an empty one.

        MultiPoints stops reading the record at an empty node (its parser takes the empty property
        name for a move without a point), so start dots come as one set-up node and only when there
        are some, as in zagram's `sr(;B[jj];W[kk])`; a game with neither start dots nor moves gets a
        lone `GM[40]` (the Kropki game number of zagram's records), which every client skips.
        """
        setup = (("AB", self.game.setup.black), ("AW", self.game.setup.white))
        start = "".join(
            prop + "".join(f"[{point_to_sgf(p)}]" for p in points) for prop, points in setup if points
        )
        nodes = [start] if start else []
        nodes += [self._node(move) for move in self.game.moves]
        return "sr(;" + ";".join(nodes or ["GM[40]"]) + ")"

    def _node(self, move: Move) -> str:
        value = point_to_sgf(move.point) if move.point is not None else ""
        for enclosure in move.enclosures:
            ring = [self.game.board.point(p) for p in (*enclosure.ring, enclosure.ring[0])]
            value += "." + "".join(point_to_sgf(p) for p in ring)
        node = f"{COLOUR[move.player]}[{value}]"
        if move.time_left is not None:
            node += f"{COLOUR[move.player]}L[{move.time_left}]"
        return node

    def snapshot(self) -> list[str]:
        drawings = [f"o{player}.{where}" for player, where in self.drawing.items()]
        return [
            self.description(),
            self.state(),
            self.flags(),
            self.record_line(),
            self.proposal_line(),
            *drawings,
        ]

    # --- playing -------------------------------------------------------------------------------

    def _flag_if_due(self) -> None:
        """A clock past its deadline has decided, even if its timer runs late; a replayed action was in
        time when it was made."""
        if self.clock is not None and not self.quiet:
            self.clock.flag_if_due()

    def _check_playing(self) -> None:
        self._flag_if_due()
        if self.game.result is not None:
            raise ProtocolError("gameOver", "The game is over.")

    def move(self, nick: str, where: str, colour: int | None = None) -> None:
        """Place a dot; at an analysis table of `colour` (1 blue, 2 red) if given, else the side on move."""
        side = self._seat(nick)
        self._check_playing()
        player = colour_of(side)
        if self.analysis:
            side = player = colour or self.game.to_move
            if not self.game_type.rights.analyser_places(player):
                raise ProtocolError("noRight", "The analyser may not place dots of this colour here.")
        elif colour not in (None, player):
            raise ProtocolError("badColour", "Only the analyser of an analysis table chooses the colour.")
        self._check_turn(side)
        try:
            spec = parse_move(where, self.game.width, self.game.height)
            self.game.play(player, spec)
        except NotYourMove as refused:  # as at a team table: not now, the point may be free
            raise ProtocolError("notYourTurn", f"Move {where[:40]} refused: {refused}.") from None
        except (MoveSyntaxError, IllegalMove) as refused:
            raise ProtocolError("illegalMove", f"Move {where[:40]} refused: {refused}.") from None
        self.move_sides.append(side)
        self.colours_moved.add(player)
        if self.clock is not None:
            self.clock.moved(player, self.game.to_move)
        self._note("move", p=side, w=where)
        self._after_moves(1, player)

    def _after_moves(self, count: int, mover: int) -> None:
        """After the game's last `count` moves; `mover`: the colour that moved, whose players' enclosures
        being drawn are cleared."""
        self.last_activity = self.timers.now()
        first = len(self.game.moves) - count
        if self.clock is not None:
            self._note_times(first)
        moves = self.game.moves[first:]
        for side in self.lineup.sides(mover):
            self.drawing.pop(side, None)
        self._grant_grace()
        self._clear_proposal()
        self._say_table("sa;" + ";".join(self._node(move) for move in moves))
        self._say_table(self.flags())
        self._say_table(self.state())
        if self.game.result is not None:
            self._end()

    def _clear_proposal(self) -> None:
        """A move, a STOP or a team player out of the game clears a pending proposition other than `new`
        (docs/protocol.md)."""
        if self.proposal is not None and self.proposal[1] != "new":
            self.proposal = None
            self.agreed = set()
            self._say_table(self.proposal_line())

    def draw_enclosure(self, nick: str, where: str) -> None:
        """`okrazam`: show the enclosure a player is drawing; `-` clears it. Territory rules only."""
        player = self._seat(nick)
        self._check_playing()
        if self.game.rules.automatic:
            raise ProtocolError("badMove", "Enclosures are automatic in these rules.")
        if where != "-":
            dot, _, rest = where.partition(".")
            try:
                parse_points(dot, self.game.width, self.game.height)
                for ring in rest.split(".") if rest else []:
                    parse_points(ring, self.game.width, self.game.height)
            except MoveSyntaxError as refused:
                raise ProtocolError("badMove", f"Enclosure {where[:40]} refused: {refused}.") from None
        self.drawing[player] = where
        self._say_table(f"o{player}.{where}")

    def stop(self, nick: str) -> None:
        """STOP for the player's side: at a team table, by the side on move, for the whole team."""
        side = self._seat(nick)
        self._check_playing()
        self._check_turn(side)
        player = colour_of(side)
        try:
            placed = self.game.stop(player)
        except NotYourMove as refused:
            raise ProtocolError("notYourTurn", f"STOP refused: {refused}.") from None
        except IllegalMove as refused:
            raise ProtocolError("illegalMove", f"STOP refused: {refused}.") from None
        self.move_sides += [0] * len(placed)
        if self.clock is not None and self.game.result is None:
            self.clock.switch(self.game.to_move)
        self._note("stop", p=side)
        self._tell(f"stop{side}", f"{nick} pressed STOP.")
        self._clear_proposal()  # a STOP is a move, whether or not it places dots
        if placed:
            self._after_moves(len(placed), 3 - player)
            return
        self._grant_grace()
        self._say_table(self.flags())
        self._say_table(self.state())
        if self.game.result is not None:
            self._end()

    # --- propositions --------------------------------------------------------------------------

    def propose(self, nick: str, text: str) -> None:
        """zagram propositions: `resign`, `score`, `terr`, `drop`, `new`, `undo`, and the answers
        `ok|accept|reject|cancel` + side + what; `new` is agreed by sending `new` too. At a team table
        every other player still in the game must agree, and a resignation is one player's (teams.md)."""
        side = self._seat(nick)
        self._action = {"p": side, "text": text}
        try:
            self._propose(side, nick, text)
        finally:
            self._action = None

    def _changed(self) -> None:
        """The propose() call being applied has changed the table: journal it (once)."""
        if self._action is not None:
            self._note("propose", **self._action)
            self._action = None

    def _propose(self, player: int, nick: str, text: str) -> None:
        """`player`: the side that proposes or answers."""
        self.last_activity = self.timers.now()
        if text == "resign":
            self._check_playing()
            if self.lineup.teams:
                self._changed()
                self._step_out(player, nick, resigned=True)
                return
            self.game.resign(player)
            self._changed()
            self._after_end()
            return
        if text in PROPOSALS:
            self._ask(player, nick, text)
            return
        found = _ANSWER.fullmatch(text)
        if not found or int(found.group(2)) > len(self.lineup.seats):
            raise ProtocolError("badProposal", f"Unknown proposition {text[:20]}.")
        answer, _, what = found.groups()
        # the digit names the proposer; MultiPoints sends it wrongly, so the table's own record decides
        if self.proposal is None or self.proposal[1] != what:
            raise ProtocolError("noProposal", f"There is no {what} proposition to answer.")
        proposer = self.proposal[0]
        answer = ANSWERS[answer]
        if answer == "cancel":
            if player != proposer:
                raise ProtocolError("noProposal", "Only the proposer may cancel a proposition.")
            words = PROPOSAL_WORDS[what]
            self._settle(f"cancel{proposer}{what}", f"{nick} withdrew the proposal to {words}.")
        elif player == proposer:
            others = "other players answer" if self.lineup.teams else "other player answers"
            raise ProtocolError("noProposal", f"The {others} a proposition.")
        elif answer == "reject" and what == "new":
            raise ProtocolError("badProposal", "A new game cannot be rejected; just do not agree.")
        elif answer == "reject":
            self._settle(f"reject{proposer}{what}", f"{nick} declined to {PROPOSAL_WORDS[what]}.")
        else:
            self._agree(player, nick)

    def _agree(self, player: int, nick: str) -> None:
        """`player` agrees to the pending proposition: settled once every other player still in the game
        has agreed (in a two-player game, at once)."""
        assert self.proposal is not None
        proposer, what = self.proposal
        waiting = sorted(
            side
            for colour in (BLACK, WHITE)
            for side in self.lineup.present(colour)
            if side not in (proposer, player) and side not in self.agreed
        )
        names = ", ".join(self.nick_of(side) for side in waiting)
        if player in self.agreed:  # before, answered as if it counted, and nothing changed
            raise ProtocolError("noProposal", f"You agreed already; waiting for {names}.")
        if not waiting:
            self._accept(proposer, what, nick)
            return
        self.agreed.add(player)
        if self._action is not None:
            self._action["partial"] = True  # compaction keeps it only while the proposition is pending
        self._changed()
        self._say_table(self.proposal_line())
        self._tell(f"agree{proposer}{what}", f"{nick} agreed to {PROPOSAL_WORDS[what]}; waiting for {names}.")

    def _ask(self, player: int, nick: str, what: str) -> None:
        pending = self.proposal
        if what == "new":
            if self.game.result is None:
                raise ProtocolError("badProposal", "A new game can be proposed when this one is over.")
            if not all(self.lineup.present(colour) for colour in (BLACK, WHITE)):
                raise ProtocolError("badProposal", "A team with nobody left cannot play a new game.")
        else:
            self._check_playing()
        if pending is not None and pending[1] == what and pending[0] != player:
            if what == "new" or self.lineup.teams:  # proposing what is pending agrees to it
                if self.lineup.teams and self._action is not None:  # journalled as the answer it is
                    self._action["text"] = f"ok{pending[0]}{what}"
                self._agree(player, nick)
                return
        colour = colour_of(player)
        if what == "score" and self.game.to_move != colour:
            raise ProtocolError(
                "badProposal", "Finishing with the current result is proposed on one's own move."
            )
        if what == "undo":
            rights = self.game_type.rights
            if self.analysis:
                allowed = rights.analyser_may("U") or rights.analyser_may("u")
            else:
                allowed = rights.may(colour, "U")
            if not allowed:
                raise ProtocolError("noRight", "Undo is not allowed at this table.")
            if not self.game.can_undo():
                raise ProtocolError("badProposal", "There is no move to take back.")
        if self.analysis and what == "undo":  # the analyser takes moves back at will
            self._changed()
            self._accept(player, what, nick)
            return
        if self.proposal == (player, what):
            return
        self.proposal = (player, what)
        self.agreed = set()
        self._changed()
        self._say_table(self.proposal_line())
        self._tell(f"u{player}{what}", f"{nick} proposes to {PROPOSAL_WORDS[what]}.")

    def _settle(self, code: str, text: str) -> None:
        self.proposal = None
        self.agreed = set()
        self._changed()
        self._say_table(self.proposal_line())
        self._tell(code, text)

    def _accept(self, proposer: int, what: str, nick: str) -> None:
        if what != "new":  # before anything is said or journalled: the clock may have run out
            self._check_playing()
        self._settle(f"ok{proposer}{what}", f"{nick} agreed to {PROPOSAL_WORDS[what]}.")
        if what == "new":
            self.games_played += 1
            self.lineup = self.lineup.swapped()
            self._begin()
            self._say_lobby(self.description())
            self._say_lobby(self.state())
            if not self.quiet:
                self._on_new_game(self)
            return
        if what == "undo":
            undone = self.game.undo()
            del self.move_sides[len(self.game.moves) :]
            if self.clock is not None:
                self.clock.switch(self.game.to_move)
            where = point_to_sgf(undone.point) if undone.point is not None else ""
            self._say_table(f"sa;U{COLOUR[undone.player]}[{where}]")
            self._say_table(self.flags())
            self._say_table(self.state())
            return
        if what == "terr" and not self.game.rules.automatic:
            self.game.agree_territory()
        if what == "drop":
            self.game.void()
        elif what == "draw":
            self.game.draw()
        else:
            self.game.finish_by_score()
        self._after_end("agreed" if what == "draw" else "")

    def claim(self, nick: str, what: str) -> None:
        """The opponent of a player who left ends the game (server/hub/absences.py decided that they
        may): `claim` wins it, as if the player who left had resigned; `abort` calls it off (`Void`)."""
        side = self._seat(nick)
        self._check_playing()
        self.last_activity = self.timers.now()
        if what == "claim":
            self.game.resign(3 - colour_of(side))
        else:
            self.game.void()
        self._note("claim", p=side, w=what)
        self._after_end("abandoned")

    # --- clock ---------------------------------------------------------------------------------

    def _clock_action(self, nick: str, right: str, refusal: str) -> tuple[int, int, Clock]:
        """The side that may act on the opponents' clock with `right`, its colour, and the clock (one
        clock a colour: a team shares one, docs/teams.md)."""
        side = self._seat(nick)
        self._check_playing()
        if self.clock is None:
            raise ProtocolError("noClock", "This game has no clock.")
        player = colour_of(side)
        if not self.game_type.rights.may(player, right):
            raise ProtocolError("noRight", refusal)
        return side, player, self.clock

    def pause(self, nick: str, paused: bool) -> None:
        side, player, clock = self._clock_action(nick, "P", "Pausing is not allowed at this table.")
        # a pause that changes nothing is refused, not journalled and sent to the table again (a journal
        # written before may hold one: replayed quietly, it changes nothing still)
        if clock.paused[3 - player] == paused and not self.quiet:
            if paused:
                raise ProtocolError("alreadyPaused", "The opponent's clock is already paused.")
            raise ProtocolError("notPaused", "The opponent's clock is not paused.")
        clock.pause(3 - player, paused)
        self._note("pause", p=side, paused=paused)
        self._say_table(self.flags())

    def give_time(self, nick: str, seconds_text: str) -> None:
        side, player, clock = self._clock_action(nick, "T", "Adding time is not allowed at this table.")
        seconds = parse_number(seconds_text)
        if seconds is None or not 1 <= seconds <= MAX_GIFT:
            raise ProtocolError("badTime", f"Time to add must be 1..{MAX_GIFT} seconds.")
        room_left = int(clock.room_for_gift(3 - player))
        if seconds > room_left:
            raise ProtocolError(
                "clockFull",
                f"A gift may not lift the opponent's clock above {MAX_CLOCK} seconds "
                f"({MAX_CLOCK // 3600} hours); "
                f"at most {room_left} can be added now.",
            )
        clock.give(3 - player, seconds)
        self._note("gift", p=side, s=seconds)
        self._say_table(self.flags())
        self._tell(f"t{side}", f"{nick} added {seconds} s to the opponent's clock.")

    def _grant_grace(self) -> None:
        """At a team table's tournament game each player's sayHi is spent on their own first move: the
        team's clock waits that long before it runs for a player who has not yet moved. Granted once
        as they come on move, not again when someone else leaves meanwhile."""
        if not self.lineup.teams or not self.tournament_game or self.clock is None:
            return
        side = self.side_on_move
        if self.game.result is None and side and side not in self.move_sides and side != self.graced:
            self.clock.grant(colour_of(side), self._say_hi(side))
            self.graced = side

    def _flag(self, player: int) -> None:
        """`player`: the colour whose clock ran out (a team's, at a team table)."""
        if self.game.result is not None:
            return
        came = {colour_of(side) for side in self.showed_up}
        how = ""
        if self.tournament_game and player not in self.colours_moved:
            if (3 - player) in self.colours_moved or (3 - player) in came:
                self.game.forfeit(player)
            else:
                self.game.void()
                how = "no-show"
        else:
            self.game.lose_on_time(player)
        self._note("flag", p=player)
        self._after_end(how)

    def cancel(self) -> None:
        """The organiser cancels the tournament game, before or during play: it ends `Void`, as
        every ending does (the clocks stop, the record is archived), and is neither rated nor counted
        in the standings. A result that stands (the game over) is never taken back."""
        if self.cancelled:
            raise ProtocolError("alreadyCancelled", f"The game of table {self.uid} is already cancelled.")
        self._flag_if_due()
        if not self.tournament_game or self.game.result is not None:
            raise ProtocolError("gameOver", f"The game of table {self.uid} is over: its result stands.")
        self.cancelled = True
        self.game.void()
        self._note("cancel")
        self._say_table(self.state())
        self._after_end("organiser")

    # --- after a restart -----------------------------------------------------------------------

    def replay(self, kind: str, data: dict[str, Any], entry: JournalText | None = None) -> None:
        """Apply one journalled action again (quietly), then set the clocks as they were after it;
        `entry`: the same action as the table's journal keeps it, kept once for both."""
        before, games_before = len(self.game.moves), self.games_played
        player = data.get("p", 0)
        nick = self.nick_of(player) if player else ""
        if kind == "archived":
            if data["game"] == self.games_played:
                self.archive_number = data["number"]
            return
        if kind == "games":  # a compacted journal: the games before this one were played
            if (data["n"] - self.games_played) % 2:
                self.lineup = self.lineup.swapped()
            self.games_played = data["n"]
            self._begin()
            return
        if kind == "move":  # `p` is the side; at an analysis table the colour the analyser chose
            self.move(nick, data["w"], player if self.analysis else None)
        elif kind == "left":
            self.leave(nick)
        elif kind == "gone":  # a compacted journal: who left in the games before this one
            self.lineup.gone.update(data["nicks"])
            self.gone_before = frozenset(self.lineup.gone)
        elif kind == "stop":
            self.stop(nick)
        elif kind == "propose":
            self.propose(nick, data["text"])
        elif kind == "pause":
            self.pause(nick, data["paused"])
        elif kind == "gift":
            self.give_time(nick, str(data["s"]))
        elif kind == "flag":
            self._flag(player)
        elif kind == "claim":
            self.claim(nick, data["w"])
        elif kind == "came":
            self.showed_up.add(player)
        elif kind == "moved":  # a compacted journal: a colour whose moves were all taken back
            self.colours_moved.add(player)
        elif kind == "cancel":  # after a new game (a compacted journal), only that it was cancelled
            if self.tournament_game:
                self.cancel()
            else:
                self.cancelled = True
        elif kind != "clock":
            raise ValueError(f"unknown journal entry {kind!r}")
        # an agreed new game is journalled with the clocks of the game it ended: the new one's are full
        if self.clock is not None and "c" in data and self.games_played == games_before:
            self.clock.set_state(data["c"])
            self._note_times(before)
        self.game_entries.append(entry or journal_entry(kind, data))

    def compacted(self) -> list[tuple[str, dict[str, Any]]]:
        """The current game's journal entries without the ones whose effect is gone, so that a table
        that lives long (an analysis, moves and take-backs for hours) restores from a short journal:
        a move taken back goes with the take-back; propositions settled without changing the game
        go; pauses, gifts of time and noted clocks go, for the clocks as they are now are noted last.
        A proposition of a new game still waiting is dropped too (it is simply proposed again).
        Afterwards `game_entries` is the shortened list."""
        kept: list[tuple[str, dict[str, Any]]] = []
        for kind, text in self.game_entries:
            data = json.loads(text)
            if kind in ("pause", "gift", "clock"):
                continue
            if kind != "propose":
                kept.append((kind, data))
                continue
            text = data["text"]
            found = _ANSWER.fullmatch(text)
            what = found.group(3) if found else text
            if what == "new":
                continue
            if data.get("partial"):  # a team's agreement that left it pending: as its ask
                kept.append((kind, data))
            elif found and found.group(1) in ("reject", "cancel"):
                kept = _without_asks(kept)
            elif what == "undo" and (found or self.analysis):  # a move taken back (the analyser's at once)
                kept = _without_asks(kept)
                del kept[max(i for i, (k, _) in enumerate(kept) if k == "move")]
            else:
                kept.append((kind, data))
        if self.tournament_game:  # that a colour moved decides a no-show, even if its moves were taken back
            kept_colours = {colour_of(data["p"]) for kind, data in kept if kind == "move"}
            moved = [("moved", {"p": colour}) for colour in sorted(self.colours_moved - kept_colours)]
            kept = moved + kept  # before a loss on time, which it decides
        if self.clock is not None and self.game.result is None:
            kept.append(("clock", {"c": self.clock.state()}))
        self.game_entries = [journal_entry(kind, data) for kind, data in kept]
        return kept

    def _note_times(self, first: int) -> None:
        """The record's clocks for the moves from `first` on, as the clocks stand now."""
        for index in range(first, len(self.game.moves)):
            self.game.set_time_left(index, self._seconds_left(self.game.moves[index].player))

    def _seconds_left(self, player: int) -> int:
        """Whole seconds, as the `sa` lines and zagram's records (BL[75]) give a player's time."""
        assert self.clock is not None
        return int(self.clock.left(player))

    def note_clock(self) -> None:
        """Journal the clocks as they are now (at shutdown), so that no second is lost or given: a clock
        past its deadline flags first, rather than coming back with a restart's grace."""
        if self.clock is None or self.game.result is not None:
            return
        self.clock.flag_if_due()
        if self.game.result is None:  # not flagged just now
            self._note("clock")

    # --- the end -------------------------------------------------------------------------------

    def _after_end(self, how: str = "") -> None:
        self.proposal = None
        self.agreed = set()
        self._say_table(self.proposal_line())
        self._end(how)

    def leave(self, nick: str) -> None:
        """A team player left the table for good while the game runs (docs/teams.md): the turn goes to
        the next team-mate, and a team with nobody left loses. Nothing in a two-player game."""
        side = self.seat_of(nick)
        if side and self.lineup.teams:
            self._flag_if_due()  # a game lost on time before they left stays lost on time
        if not side or not self.lineup.teams or self.game.result is not None:
            return
        self._note("left", p=side)
        self._step_out(side, nick, resigned=False)

    def _step_out(self, side: int, nick: str, *, resigned: bool) -> None:
        """A team player is out of the game (left, or resigned): a pending proposition goes, as a move
        clears one; the last of a team out loses the game for it, by resignation."""
        colour = colour_of(side)
        self.lineup.gone.add(nick)
        self.drawing.pop(side, None)
        self._clear_proposal()
        if resigned:
            self._tell(f"resigned{side}", f"{nick} resigned and left the game.")
        else:
            self._tell(f"left{side}", f"{nick} left the game.")
        if not self.lineup.present(colour):
            self.game.resign(colour)
            self._end("" if resigned else "left")
            return
        self._grant_grace()
        self._say_table(self.flags())
        self._say_table(self.state())

    def _end(self, how: str = "") -> None:
        """The game is over, however it ended: the clocks stop, the table is told how it ended (a
        server line whose code is the result, `how` as for result_sentence), and it is archived."""
        if self.clock is not None:
            self.clock.stop()
        self._say_table(self.flags())
        result = self.game.result
        assert result is not None
        scores = (self.game.score(BLACK), self.game.score(WHITE))
        self._tell(events.result_code(result), result_sentence(result, (self.blue, self.red), scores, how))
        self._finished()
        self.last_activity = self.timers.now()

    def abandon(self) -> None:
        """The table closes with the game unfinished: the clocks stop and the record has no result."""
        if self.clock is not None:
            self.clock.stop()

    def record(self, date: str) -> GameRecord:
        gt = self.game_type
        meta: dict[str, str | None] = {"black_name": self.blue, "white_name": self.red, "date": date}
        if gt.timed:
            meta["main_time"] = str(gt.start_time)
            meta["overtime"] = f"0+{gt.added_time}"
        if self.tournament_game:
            assert self.auto is not None
            meta["event"], meta["round"] = self.auto.tournament, self.auto.round
        return game_to_record(self.game, **meta)
