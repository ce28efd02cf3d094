"""A game: turns, the variant's enclosure mode, STOP, InstantWin, endings, results and undo."""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

from server.engine import gametype
from server.engine.board import BLACK, WHITE, Board, IllegalMove
from server.engine.moves import MoveSpec, Point
from server.engine.played import Move, MoveList
from server.engine.start import Setup, four_crosses, handicap, one_cross, two_crosses

COLOUR = {BLACK: "B", WHITE: "W"}
PLAYER = {"B": BLACK, "W": WHITE}


class NotYourMove(IllegalMove):
    """A dot or STOP of the side that is not on move: unlike the point's other refusals, the same move is
    legal once the turn comes (a bot that reads its board from a feed tells the two apart)."""


@dataclass(frozen=True)
class Rules:
    """What differs between the zagram variants, as the engine sees it."""

    automatic: bool = True  # stan/noT: automatic minimal enclosures; terr: manual rings
    stop_allowed: bool = False  # noT: STOP ends one's own play
    instant_win: int = 0  # the game ends when one side's captured-dot lead reaches this (0 = never)
    # an analysis: dots of either colour in any order, and no ending by itself (a full board, InstantWin,
    # STOP), so that every dot can be taken back
    free_placing: bool = False


DEFAULT_RULES = Rules()
EMPTY_BOARD = Setup()

_RESULT = re.compile(r"^(?:(?P<who>[BW])\+(?P<how>R|T|F|\d+(?:\.5)?)|(?P<draw>0)|(?P<void>Void))$")


@dataclass(frozen=True)
class Result:
    """`B+3`, `W+1.5`, `0`, `B+R`, `W+T`, `B+F`, `Void`."""

    winner: int  # BLACK, WHITE, or 0 for a draw or a void game
    reason: str  # "score", "R" (resignation), "T" (time), "F" (forfeit), "Void"
    margin: Fraction = Fraction(0)

    def __str__(self) -> str:
        if self.reason == "Void":
            return "Void"
        if self.reason == "score":
            if self.winner == 0:
                return "0"
            m = self.margin
            text = str(m.numerator) if m.denominator == 1 else f"{float(m):g}"
            return f"{COLOUR[self.winner]}+{text}"
        return f"{COLOUR[self.winner]}+{self.reason}"

    @classmethod
    def parse(cls, text: str) -> Result:
        found = _RESULT.match(text)
        if not found:
            raise ValueError(f"'{text}' is not a result")
        if found["void"]:
            return cls(0, "Void")
        if found["draw"]:
            return cls(0, "score")
        winner = PLAYER[found["who"]]
        how = found["how"]
        if how in ("R", "T", "F"):
            return cls(winner, how)
        return cls(winner, "score", Fraction(how))

    @classmethod
    def by_score(cls, black: Fraction, white: Fraction) -> Result:
        if black == white:
            return cls(0, "score")
        if black > white:
            return cls(BLACK, "score", black - white)
        return cls(WHITE, "score", white - black)


class Game:
    """Rules applied to one board from its set-up to its result.

    Undo replays the game from its set-up without the last move, which restores every
    capture, pool and liberation exactly at the cost of one replay.
    """

    def __init__(
        self, width: int, height: int, rules: Rules = DEFAULT_RULES, setup: Setup = EMPTY_BOARD
    ) -> None:
        self.width = width
        self.height = height
        self.rules = rules
        self.setup = setup
        # What undo replays: (player, x, y, rings, targets, any_ring_owner) as flat tuples of numbers,
        # which the garbage collector stops tracking (see MoveList), not the MoveSpec (a tuple subclass
        # it always walks): a server keeps every move of thousands of games (issue 19.2).
        self._played: list[
            tuple[int, int | None, int | None, tuple[tuple[Point, ...], ...], tuple[Point, ...], bool]
        ] = []
        self._reset()

    def _reset(self) -> None:
        self.board = Board(self.width, self.height)
        for colour, points in ((BLACK, self.setup.black), (WHITE, self.setup.white)):
            for point in points:
                self.board.place(self.board.index(point), colour)
        self.to_move = self.setup.first
        self.moves = MoveList()
        self.opening_comment: str | None = None  # what happened before the first move (a STOP)
        self.stopped: set[int] = set()
        self.first_stopper = 0  # whose STOP grounds (rules.md 1.6); 0 before any STOP
        self.result: Result | None = None
        self.territory = [0, 0, 0]  # free points taken by each player's final territory rings
        self.final_rings: tuple[list[list[Point]], list[list[Point]]] | None = None

    # --- playing -------------------------------------------------------------------------------

    def play(self, player: int, spec: MoveSpec, *, any_ring_owner: bool = False) -> Move:
        """Apply a player's move or raise IllegalMove with the reason; a refused move changes nothing.

        `any_ring_owner` lets a ring belong to the colour of its dots rather than the mover,
        as SGF records allow. Under `free_placing` rules either colour may move; the other is then on move.
        """
        self._check_turn(player)
        move = self._apply(player, spec, any_ring_owner)
        x, y = spec.dot if spec.dot is not None else (None, None)
        self._played.append((player, x, y, spec.rings, spec.targets, any_ring_owner))
        self._after_move(player)
        return move

    def _check_turn(self, player: int) -> None:
        if self.result is not None:
            raise IllegalMove("the game is over")
        if player not in (BLACK, WHITE):
            raise IllegalMove("unknown player")
        if player in self.stopped:
            raise IllegalMove("you pressed STOP and cannot place dots any more")
        if player != self.to_move and not self.rules.free_placing:
            raise NotYourMove("it is not your move")

    def _apply(self, player: int, spec: MoveSpec, any_ring_owner: bool) -> Move:
        board = self.board
        if self.rules.automatic:
            if spec.rings or spec.targets:
                raise IllegalMove("enclosures are automatic in these rules")
            if spec.dot is None:
                raise IllegalMove("a move must place a dot")
            made = board.play(board.index(spec.dot), player)
            move = Move(player, spec.dot, tuple(made) if made else ())
        else:
            if spec.dot is None and not any_ring_owner:
                raise IllegalMove("a move must place a dot")
            work = board.copy()
            made = []
            if spec.dot is not None:
                work.place(work.index(spec.dot), player)
            for ring in spec.rings:
                indices = [work.index(p) for p in ring]
                owner = work.color[indices[0]] if any_ring_owner else player
                if owner not in (BLACK, WHITE):
                    raise IllegalMove(f"ring point {ring[0]} is not a dot")
                made.append(work.enclose_ring(indices, owner))
            for target in spec.targets:
                enclosure = work.enclose_target(work.index(target), player)
                if enclosure is not None:
                    made.append(enclosure)
            self.board = work
            move = Move(player, spec.dot, tuple(made))
        self.moves.append(move)
        return move

    def _after_move(self, player: int) -> None:
        opponent = 3 - player
        if opponent not in self.stopped:
            self.to_move = opponent
        if self.rules.free_placing:
            return
        board = self.board
        instant_win = self.rules.instant_win
        if board.free_points == 0 or (
            instant_win and abs(board.score[BLACK] - board.score[WHITE]) >= instant_win
        ):
            self.result = self.score_result()

    def stop(self, player: int, *, auto_place: bool = True) -> list[Move]:
        """STOP: the player places no more dots; the opponent may go on alone.

        The first STOP grounds (rules.md 1.6): every group of the stopper's own points (live dots, realm
        points) that does not reach the edge goes to the opponent, in the score from now on
        (`ungrounded_dots`). With `auto_place` the opponent's dots are put round the stopper's
        ungrounded dots as zagram puts them (`_stop_dots`); they are ordinary moves under the usual
        rules and capture nearly all of it, and a record read back has them as moves. The second STOP
        ends the game and grounds nothing: the first stopper could not capture the second one's dots.
        """
        if not self.rules.stop_allowed:
            raise IllegalMove("STOP is not allowed in these rules")
        if self.rules.free_placing:
            raise IllegalMove("there is no STOP in an analysis: place the dots of either colour instead")
        self._check_turn(player)
        self.stopped.add(player)
        note = f"{COLOUR[player]} pressed STOP"
        if self.moves:
            last = self.moves[-1]
            self.moves[-1] = last._replace(comment=f"{last.comment}\n{note}" if last.comment else note)
        else:  # the record's root carries it
            self.opening_comment = f"{self.opening_comment}\n{note}" if self.opening_comment else note
        opponent = 3 - player
        if opponent in self.stopped:
            self.result = self.score_result()
            return []
        self.first_stopper = player
        placed = self._stop_dots(player, opponent) if auto_place else []
        if self.result is None:
            self.to_move = opponent
        return placed

    def _stop_dots(self, stopper: int, opponent: int) -> list[Move]:
        """The opponent's dots zagram puts when a player presses STOP, in zagram's order.

        The stopper's ungrounded dots are taken column by column from the left, each column from the
        top; round each, its free neighbours north, east, south, west get an opponent dot (the
        2023-06-09 zagram record, docs/rules.md). A neighbour in the stopper's pool comes last, and
        gets a dot only if that dot closes a ring of its own: any other dot there would be the
        stopper's capture. Every dot is an ordinary move under the usual rules, so the record replays
        anywhere; the game can end on the way (a full board, InstantWin) as it does on replay.
        """
        board = self.board
        s = board.stride
        dots = [pos for pos in board.ungrounded(stopper) if board.color[pos] == stopper]
        dots.sort(key=board.point)  # (x, y): by column, then by row
        placed: list[Move] = []
        in_pool = []
        for pos in dots:
            for nxt in (pos - s, pos + 1, pos + s, pos - 1):
                if self.result is not None:
                    return placed
                if board.playable(nxt):
                    if board.pool[nxt] == stopper:
                        in_pool.append(nxt)
                    else:
                        placed.append(self._stop_dot(nxt, opponent))
        progress = True
        while progress and self.result is None:  # one ring through a pool may let another close
            progress = False
            for pos in in_pool:
                if self.result is None and board.playable(pos) and self._safe_in_pool(pos, stopper, opponent):
                    placed.append(self._stop_dot(pos, opponent))
                    progress = True
        return placed

    def _safe_in_pool(self, pos: int, stopper: int, opponent: int) -> bool:
        """Whether the opponent's dot here escapes the stopper's pool: it is no pool, or the dot rings."""
        if self.board.pool[pos] != stopper:
            return True
        trial = self.board.copy()
        return any(enclosure.owner == opponent for enclosure in trial.play(pos, opponent))

    def _stop_dot(self, pos: int, opponent: int) -> Move:
        board = self.board
        move = Move(opponent, board.point(pos), tuple(board.play(pos, opponent)), automatic=True)
        self.moves.append(move)
        self._after_move(opponent)
        return move

    # --- other endings -------------------------------------------------------------------------

    def _finish(self, result: Result) -> Result:
        if self.result is not None:
            raise IllegalMove("the game is over")
        self.result = result
        return result

    def resign(self, player: int) -> Result:
        return self._finish(Result(3 - player, "R"))

    def lose_on_time(self, player: int) -> Result:
        return self._finish(Result(3 - player, "T"))

    def forfeit(self, player: int) -> Result:
        """A tournament no-show: the player never moved in time."""
        return self._finish(Result(3 - player, "F"))

    def void(self) -> Result:
        """A tournament game nobody came to."""
        return self._finish(Result(0, "Void"))

    def draw(self) -> Result:
        """A draw agreed by both players (MultiPoints' `draw` proposition), whatever the score."""
        return self._finish(Result(0, "score"))

    def finish_by_score(self) -> Result:
        """End now with the current score (an agreed `score` or `terr`)."""
        return self._finish(self.score_result())

    # --- territory -----------------------------------------------------------------------------

    def apply_territory(self, black_rings: list[list[Point]], white_rings: list[list[Point]]) -> None:
        """Final territory rings (SGF TB/TW): they capture what they hold and score ½ per free point.

        Applied once, at the end; blue's rings first, as TB comes before TW.
        """
        rings = [(BLACK, ring) for ring in black_rings] + [(WHITE, ring) for ring in white_rings]
        self._territory(rings, skip_invalid=False)

    def agree_territory(self) -> None:
        """The players agreed to count territory: every region a player's live dots cut off from the
        edge becomes a final territory ring, the biggest first.

        **Choice** (docs/rules.md): when one player's region holds the other's, the bigger region
        wins and the smaller ring, whose dots it captured, is dropped.
        """
        board = self.board
        candidates = []
        for player in (BLACK, WHITE):
            for size, ring in board.territory_regions(player):
                candidates.append((size, player, [board.point(pos) for pos in (*ring, ring[0])]))
        candidates.sort(key=lambda c: -c[0])
        self._territory([(player, ring) for _, player, ring in candidates], skip_invalid=True)

    def _territory(self, rings: list[tuple[int, list[Point]]], *, skip_invalid: bool) -> None:
        if self.final_rings is not None:
            raise IllegalMove("the final territory is already counted")
        board = self.board.copy()
        taken = [0, 0, 0]
        applied: tuple[list[list[Point]], list[list[Point]]] = ([], [])
        for owner, ring in rings:
            free_before = board.free_points
            try:
                board.enclose_ring([board.index(p) for p in ring], owner, territory=True)
            except IllegalMove:
                if skip_invalid:
                    continue
                raise
            taken[owner] += free_before - board.free_points
            applied[owner - 1].append(ring)
        self.board = board
        self.territory = taken
        self.final_rings = applied

    # --- scores --------------------------------------------------------------------------------

    def captured(self, player: int) -> int:
        return self.board.score[player]

    def score(self, player: int) -> Fraction:
        """Dots captured, half the final territory, and what the first STOP grounds (rules.md 1.6)."""
        score = self.board.score[player] + Fraction(self.territory[player], 2)
        if self.first_stopper:
            lost, freed = self.ungrounded_dots()
            score += -freed if player == self.first_stopper else lost
        return score

    def ungrounded_dots(self) -> tuple[int, int]:
        """What the first STOP gives away, as oppai-rs and KvanTTT's dots-game count it: (the stopper's
        dots, the opponent's dots the stopper had captured) in the groups of the stopper's own points
        that do not reach the edge. The opponent scores the first, the stopper loses the second.

        The automatic dots capture such groups by the usual rules, which leaves (0, 0) here, except for
        a group that only dots in the stopper's own pool could ring (the stopper would capture the
        first of them) or when the game ends while they are put (InstantWin): what is left counts all
        the same. The opponent's later dots cannot cut a grounded group off.
        """
        if not self.first_stopper:
            return 0, 0
        color = self.board.color
        lost = freed = 0
        for pos in self.board.ungrounded(self.first_stopper):
            if color[pos] == self.first_stopper:
                lost += 1
            elif color[pos] == 3 - self.first_stopper:
                freed += 1
        return lost, freed

    def score_result(self) -> Result:
        return Result.by_score(self.score(BLACK), self.score(WHITE))

    def dots_placed(self) -> int:
        """Dots put by the players or by STOP, starting dots not counted (the rating rule)."""
        return sum(1 for move in self.moves if move.point is not None)

    # --- undo ----------------------------------------------------------------------------------

    def can_undo(self) -> bool:
        return self.result is None and not self.stopped and self.final_rings is None and bool(self._played)

    def undo(self) -> Move:
        """Take back the last move, restoring the position exactly.

        A STOP, an ending or final territory rules undo out, so the replay is moves only.
        """
        if not self.can_undo():
            raise IllegalMove("there is no move to take back")
        undone = self.moves[-1]
        times = [move.time_left for move in self.moves[:-1]]
        self._played.pop()
        self._reset()
        for player, x, y, rings, targets, any_ring_owner in self._played:
            dot = None if x is None or y is None else (x, y)
            self._apply(player, MoveSpec(dot, rings, targets), any_ring_owner)
            self._after_move(player)
        for index, seconds in enumerate(times):
            self.set_time_left(index, seconds)
        return undone

    def set_time_left(self, index: int, seconds: float | None) -> None:
        """The clock of the player who made moves[index], as it stood after that move (SGF BL/WL)."""
        self.moves[index] = self.moves[index]._replace(time_left=seconds)


def game_for_type(game_type: gametype.GameType, *, seed: int = 0, archived: Setup | None = None) -> Game:
    """A new game with the rules and the starting position a game type names.

    Four crosses are drawn from `seed`; an archived start (`SGFz<n>`) lives in the store, so the
    caller passes its set-up as `archived`.
    """
    rules = Rules(
        automatic=game_type.automatic_enclosures,
        stop_allowed=game_type.stop_allowed,
        instant_win=game_type.instant_win,
        free_placing=game_type.kind is gametype.GameKind.ANALYSIS,
    )
    width, height, start = game_type.width, game_type.height, game_type.start
    if start.kind is gametype.StartKind.EMPTY:
        setup = EMPTY_BOARD
    elif start.kind is gametype.StartKind.CROSSES:
        if start.number == 1:
            setup = one_cross(width, height)
        elif start.number == 2:
            setup = two_crosses(width, height)
        else:
            setup = four_crosses(width, height, seed)
    elif start.kind is gametype.StartKind.HANDICAP:
        setup = handicap(width, height, start.number)
    elif archived is None:
        raise ValueError(f"game type starts from archived game {start.number}: its set-up is needed")
    else:
        setup = archived
    return Game(width, height, rules, setup)
