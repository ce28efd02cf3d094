"""`kropki-server replay`: run SGF records through the engine and report what it makes of them."""

from __future__ import annotations

import itertools
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TextIO

from server.engine.board import BLACK, WHITE, Enclosure, IllegalMove
from server.engine.game import PLAYER, Game, Rules
from server.engine.moves import MoveSpec, MoveSyntaxError, Point, parse_move, parse_points, point_to_sgf
from server.engine.sgf import GameRecord, SgfError, read_record
from server.engine.start import Setup


class ReplayError(ValueError):
    """A record the engine cannot replay; the message names the move."""


@dataclass
class Replayed:
    record: GameRecord
    game: Game
    variant: str
    captured: tuple[int, int]  # B, W before the final territory rings


ZAGRAM_RULE_FLAGS = (
    "Punish", "Holes", "AddTurn", "MustSurr", "MinArea", "Pass", "Stop", "LastSafe", "ScoreTerr", "InstantWin"
)  # fmt: skip
"""The keys of zagram's `RU[Punish=0,Holes=1,...]`, the only key=value flags a record may carry."""

_NO_TERRITORY = {"MustSurr": "1", "MinArea": "1", "Stop": "1"}
RULE_SETS: dict[str, dict[str, str]] = {
    "russian": _NO_TERRITORY,  # playdots.ru ("without territory, with grounding"), oppai-rs
    "особый": _NO_TERRITORY,  # notAgo; its records end by grounding (RE[B+G])
    "2": _NO_TERRITORY,  # reported as playdots.ru's; no record shows it, so read as its usual rules
}
"""Other servers' RU names (compared case-blind) as zagram's flags; docs/rules.md gives the evidence."""


def _cut(text: str) -> str:
    """Untrusted record text, cut short for an error message."""
    return text if len(text) <= 40 else text[:40] + "..."


def _flags(record: GameRecord) -> dict[str, str]:
    """zagram's RU flags of a record, a known rule-set name translated; anything else is refused."""
    if record.rule_set is not None:
        flags = RULE_SETS.get(record.rule_set.casefold())
        if flags is None:
            raise ReplayError(
                f"RU[{_cut(record.rule_set)}] names rules this server does not know "
                f"(it reads zagram's key=value flags and the names {', '.join(RULE_SETS)})"
            )
        return flags
    for key in record.rules:
        if key not in ZAGRAM_RULE_FLAGS:
            known = ", ".join(ZAGRAM_RULE_FLAGS)
            raise ReplayError(f"RU flag {_cut(key)!r} is not one of zagram's ({known})")
    return record.rules


def rules_of(record: GameRecord) -> Rules:
    flags = _flags(record)
    try:
        instant_win = int(flags.get("InstantWin", "0") or 0)
    except ValueError as exc:
        raise ReplayError(f"RU InstantWin is not a number: {flags['InstantWin']!r}") from exc
    return Rules(
        automatic=flags.get("MustSurr", "1") == "1",
        stop_allowed=flags.get("Stop", "0") == "1",
        instant_win=instant_win,
        free_placing=flags.get("Pass", "0") == "1",  # passes allowed: moves of one colour may follow
    )


def variant_of(rules: Rules, setup: Setup) -> str:
    """zagram's name, as GameType.variant gives it: noT1/noT2/noT4 by the crosses, noT on an empty board."""
    if not rules.automatic:
        return "terr"
    if rules.stop_allowed:
        crosses = len(setup.black) // 2
        return f"noT{crosses}" if crosses else "noT"
    return "stan"


def _ring_key(game: Game, owner: int, ring: list[int]) -> frozenset[int]:
    """What a ring encloses, apart from its owner's own dots: the way to compare two rings."""
    board = game.board
    return frozenset(pos for pos in board.polygon_interior(ring) if board.color[pos] != owner)


def _stops(game: Game, comment: str | None, where: str) -> None:
    """STOPs noted in a comment (`B pressed STOP`), after the move (or at the root) that carries it. A
    note is one word and ` pressed STOP`: the comment's other lines may end so too (`B is a bot: Bo
    pressed STOP`, a bot's nick, docs/bots.md) and are no STOP."""
    for line in (comment or "").splitlines():
        if line.endswith(" pressed STOP") and " " not in line.removesuffix(" pressed STOP"):
            stopper = PLAYER.get(line[:1])
            if stopper is None:
                raise ReplayError(f"{where}: unreadable STOP comment {line!r}")
            try:
                game.stop(stopper, auto_place=False)
            except IllegalMove as exc:
                raise ReplayError(f"{where}: STOP: {exc}") from exc


def replay_record(record: GameRecord, after_move: Callable[[Game], None] | None = None) -> Replayed:
    """The record played by the engine; `after_move` sees the game after each of the record's moves."""
    rules = rules_of(record)
    try:
        black = tuple(parse_points("".join(record.black_setup), record.width, record.height))
        white = tuple(parse_points("".join(record.white_setup), record.width, record.height))
    except MoveSyntaxError as exc:
        raise ReplayError(f"set-up: {exc}") from exc
    if len(set(black) | set(white)) < len(black) + len(white):
        raise ReplayError("set-up: a point is given twice")
    setup = Setup(black, white, WHITE if record.handicap else BLACK)
    game = Game(record.width, record.height, rules, setup)
    recent: list[Enclosure] = []  # automatic realms a written ring may describe
    _stops(game, record.comment, "the root")  # STOP before the first move
    for number, sgf_move in enumerate(record.moves, 1):
        where = f"move {number} {sgf_move.colour}[{sgf_move.value}]"
        player = PLAYER[sgf_move.colour]
        try:
            if not sgf_move.value:
                if not rules.stop_allowed:
                    raise ReplayError(f"{where}: an empty move is only read as STOP in no-territory records")
                game.stop(player, auto_place=False)
            elif rules.automatic:
                spec = parse_move(sgf_move.value, record.width, record.height)
                if spec.dot is None:
                    raise ReplayError(f"{where}: a move without a dot in automatic rules")
                move = game.play(player, MoveSpec(spec.dot))
                recent = [*recent[-8:], *move.enclosures]
                _check_written_rings(game, spec.rings, recent, where)
            else:
                spec = parse_move(sgf_move.value, record.width, record.height)
                game.play(player, spec, any_ring_owner=True)
        except (IllegalMove, MoveSyntaxError) as exc:
            raise ReplayError(f"{where}: {exc}") from exc
        if game.moves:
            game.set_time_left(-1, sgf_move.time_left)
        _stops(game, sgf_move.comment, where)
        if after_move is not None:
            after_move(game)
    captured = (game.captured(BLACK), game.captured(WHITE))
    if record.black_territory is not None or record.white_territory is not None:
        try:
            game.apply_territory(
                _rings(record.black_territory, record), _rings(record.white_territory, record)
            )
        except (IllegalMove, MoveSyntaxError) as exc:
            raise ReplayError(f"final territory rings: {exc}") from exc
    return Replayed(record, game, variant_of(rules, setup), captured)


def analysis_start(
    text: str, width: int, height: int, automatic: bool
) -> tuple[Setup, list[tuple[int, str]]]:
    """An archived record as an analysis table's start: its set-up and its moves as (colour, move text).

    Every dot is there, those a STOP placed too (an analysis places dots of either colour); the moves
    stop only at a ring drawn without a dot. Raises ReplayError saying why the record cannot be analysed
    on such a table.
    """
    try:
        replayed = replay_record(read_record(text))
    except (SgfError, ReplayError) as exc:
        raise ReplayError(f"the archived record cannot be replayed: {exc}") from exc
    record, game = replayed.record, replayed.game
    if (record.width, record.height) != (width, height):
        raise ReplayError(f"the archived game was played on {record.width}x{record.height}")
    if game.rules.automatic != automatic:
        raise ReplayError("the archived game was played with other enclosure rules")
    moves = []
    for move in game.moves:
        if move.point is None:
            break
        dot = point_to_sgf(move.point)
        rings = "" if automatic else "".join("." + _ring_text(game, e.ring) for e in move.enclosures)
        moves.append((move.player, dot + rings))
    table = Game(width, height, Rules(automatic=automatic, free_placing=True), game.setup)
    for number, (colour, where) in enumerate(moves, 1):  # as the table will play them
        try:
            table.play(colour, parse_move(where, width, height))
        except (IllegalMove, MoveSyntaxError) as exc:
            raise ReplayError(
                f"move {number} ({where}) cannot be placed at an analysis table: {exc}"
            ) from exc
    return game.setup, moves


def _ring_text(game: Game, ring: tuple[int, ...]) -> str:
    return "".join(point_to_sgf(game.board.point(pos)) for pos in (*ring, ring[0]))


def _rings(texts: list[str] | None, record: GameRecord) -> list[list[Point]]:
    return [parse_points(text, record.width, record.height) for text in texts or []]


def _check_written_rings(
    game: Game, rings: tuple[tuple[Point, ...], ...], recent: list[Enclosure], where: str
) -> None:
    board = game.board
    for ring in rings:
        indices = [board.index(p) for p in ring]
        owner = board.color[indices[0]]
        key = _ring_key(game, owner, indices) if _steps_to_neighbours(ring) else None
        if key is None or not any(
            e.owner == owner and _ring_key(game, owner, list(e.ring) + [e.ring[0]]) == key for e in recent
        ):
            written = "".join(map(point_to_sgf, ring))
            raise ReplayError(f"{where}: written ring {written} is not an automatic enclosure")


def _steps_to_neighbours(ring: tuple[Point, ...]) -> bool:
    """Whether each step of a written ring goes to one of the 8 neighbours, as every enclosure's border
    does: only such a ring has an interior to compare (polygon_interior's premise)."""
    return all(max(abs(bx - ax), abs(by - ay)) == 1 for (ax, ay), (bx, by) in itertools.pairwise(ring))


def replay_text(name: str, text: str) -> dict:
    replayed = replay_record(read_record(text))
    record, game = replayed.record, replayed.game
    return {
        "file": name,
        "width": record.width,
        "height": record.height,
        "variant": replayed.variant,
        "moves": len(record.moves),
        "captured": {"B": replayed.captured[0], "W": replayed.captured[1]},
        "result": str(game.score_result()),
        "recorded": record.result,
    }


def main(files: list[str], out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    status = 0
    for name in files:
        try:
            with open(name, encoding="utf-8") as handle:
                line = replay_text(name, handle.read())
        except (OSError, UnicodeDecodeError, SgfError, ReplayError) as exc:
            status = 1
            line = {"file": name, "error": str(exc)}
            print(f"{name}: {exc}", file=err)
        print(json.dumps(line, ensure_ascii=False), file=out)
    return status
