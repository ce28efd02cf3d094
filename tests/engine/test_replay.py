"""Real zagram records replay to the captured counts and results their README lists."""

import dataclasses
import io
import json
import re
from fractions import Fraction
from pathlib import Path

import pytest

from server.cli import main as cli_main
from server.engine.board import BLACK, WHITE
from server.engine.game import Result, Rules
from server.engine.moves import point_to_sgf
from server.engine.replay import ReplayError, analysis_start, replay_record
from server.engine.replay import main as replay_main
from server.engine.sgf import read_record

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sgf"  # copied from shared/fixtures/sgf


def readme_rows() -> list[dict[str, str]]:
    """The fixtures README table, one dict per record, keyed by its column names."""
    lines = [line for line in (FIXTURES / "README.md").read_text().splitlines() if line.startswith("|")]
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    rows = []
    for line in lines[2:]:
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        rows.append(dict(zip(header, cells, strict=True)))
    return rows


ROWS = readme_rows()


def replay(*paths: str) -> tuple[int, list[dict], str]:
    out, err = io.StringIO(), io.StringIO()
    status = replay_main(list(paths), out=out, err=err)
    return status, [json.loads(line) for line in out.getvalue().splitlines()], err.getvalue()


SHARED = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "sgf"


@pytest.mark.skipif(not SHARED.is_dir(), reason="shared/ is not beside the repository")
def test_fixture_copy_matches_shared() -> None:
    def contents(folder: Path) -> dict[str, bytes]:
        return {p.name: p.read_bytes() for p in folder.iterdir()}

    assert contents(FIXTURES) == contents(SHARED)


def test_readme_lists_every_fixture() -> None:
    assert sorted(row["file"] for row in ROWS) == sorted(p.name for p in FIXTURES.glob("*.sgf"))


@pytest.mark.parametrize("row", ROWS, ids=[row["file"] for row in ROWS])
def test_fixture_replays_as_the_readme_says(row: dict[str, str]) -> None:
    status, (line,), _ = replay(str(FIXTURES / row["file"]))
    assert status == 0, line
    width, height = (int(n) for n in row["board"].split("x"))
    assert (line["width"], line["height"]) == (width, height)
    assert line["variant"] == row["variant"]
    assert line["moves"] == int(row["moves"])
    assert line["captured"] == {"B": int(row["capB"]), "W": int(row["capW"])}
    assert line["result"] == row["replayed"]
    assert line["recorded"] == row["RE"]
    recorded, replayed = Result.parse(row["RE"]), Result.parse(line["result"])
    if recorded.reason == "score":
        # zagram's rounding of half points is unknown: x.5 results agree within 0.5
        signed = {0: Fraction(0), 1: Fraction(1), 2: Fraction(-1)}
        difference = signed[recorded.winner] * recorded.margin - signed[replayed.winner] * replayed.margin
        assert abs(difference) <= Fraction(1, 2)


def test_cli_replays_several_files_one_line_each(capsys: pytest.CaptureFixture[str]) -> None:
    files = sorted(str(p) for p in FIXTURES.glob("kropla_zagram1*.sgf"))
    assert cli_main(["replay", *files]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line["file"] for line in lines] == files


def test_illegal_move_names_the_file_and_the_move(tmp_path: Path) -> None:
    text = (FIXTURES / "kropla_zagram175599.sgf").read_text()
    first_moves = re.findall(r";[BW]\[([a-zA-Z]{2})", text)
    # the 5th move is played again onto the occupied point of the 3rd
    broken = text.replace(f"[{first_moves[4]}]", f"[{first_moves[2]}]", 1)
    path = tmp_path / "broken.sgf"
    path.write_text(broken)
    status, (line,), err = replay(str(path))
    assert status == 1
    assert line["file"] == str(path)
    assert "move 5" in line["error"] and "occupied" in line["error"]
    assert str(path) in err


def test_malformed_record_and_missing_file_fail_with_status_1(tmp_path: Path) -> None:
    bad = tmp_path / "bad.sgf"
    bad.write_text("(;FF[4]GM[40]SZ[20];B[aa]")
    good = FIXTURES / "kropla_zagram77976.sgf"
    status, lines, _ = replay(str(bad), str(good), str(tmp_path / "missing.sgf"))
    assert status == 1
    assert "error" in lines[0] and "error" not in lines[1] and "error" in lines[2]


def test_written_ring_that_is_not_automatic_is_an_error(tmp_path: Path) -> None:
    text = (
        "(;FF[4]GM[40]SZ[6]RU[MustSurr=1,MinArea=1,Stop=0]"
        ";B[cb];W[cc];B[bc];W[ee];B[dc];W[ea];B[cd.cbdccdbccb];W[aa];B[ab.cbdcbccb]"
        ")"
    )
    path = tmp_path / "ring.sgf"
    path.write_text(text)
    status, (line,), _ = replay(str(path))
    assert status == 1 and "move 9" in line["error"] and "not an automatic enclosure" in line["error"]
    path.write_text(text.replace(";W[aa];B[ab.cbdcbccb]", ""))
    status, (line,), _ = replay(str(path))
    assert status == 0 and line["captured"] == {"B": 1, "W": 0}


@pytest.mark.parametrize("ring", ["addcggad", "aahhaa"])
def test_written_ring_whose_steps_are_not_to_neighbours_is_an_error(tmp_path: Path, ring: str) -> None:
    """No enclosure's border jumps across the board: such a ring is refused, not a crash of the tool
    (it raised IndexError, and the files after it were not replayed)."""
    path = tmp_path / "jump.sgf"
    path.write_text(f"(;FF[4]GM[40]SZ[8];B[be.{ring}])")
    status, lines, _ = replay(str(path), str(FIXTURES / "kropla_zagram77976.sgf"))
    assert status == 1
    assert "move 1" in lines[0]["error"] and "not an automatic enclosure" in lines[0]["error"]
    assert "error" not in lines[1]


def test_stop_dots_are_zagrams_in_zagrams_order() -> None:
    """The 2023-06-09 record: after `C[W pressed STOP]` zagram put 28 blue dots (the clock stands at
    BL[36.7]) before blue's own 8. Our STOP at that position puts the same 28, in the same order: W's
    ungrounded dots hj, ht, ks, or, pu, qr, rq, sq, wt column by column, round each north, east,
    south, west (sq gets none: rp closed the ring round rq and sq)."""
    record = read_record((FIXTURES / "kvanttt_zagram_noT1_stop_2023-06-09.sgf").read_text())
    stop_at = next(n for n, move in enumerate(record.moves) if move.comment == "W pressed STOP")
    zagram_dots = [move.value for move in record.moves[stop_at + 1 : stop_at + 29]]
    assert {move.colour for move in record.moves[stop_at + 1 :]} == {"B"}
    assert {move.time_left for move in record.moves[stop_at + 1 : stop_at + 29]} == {36.7}
    last = dataclasses.replace(record.moves[stop_at], comment=None)  # the test presses STOP itself
    game = replay_record(dataclasses.replace(record, moves=[*record.moves[:stop_at], last])).game
    placed = game.stop(WHITE)
    assert [point_to_sgf(move.point) for move in placed] == zagram_dots
    assert game.board.score == [0, 12, 64] and str(game.score_result()) == "W+52"  # as KvanTTT's refiner


# Blue surrounds red's cc (automatic capture, no ring written), then presses STOP with an empty move,
# which only a no-territory record may hold.
CAPTURE_THEN_STOP = ";B[cb];W[cc];B[bc];W[hh];B[dc];W[hg];B[cd];W[gh];B[])"


@pytest.mark.parametrize("name", ["russian", "Russian", "Особый", "2"])
def test_other_servers_rule_names_replay_as_no_territory(name: str) -> None:
    replayed = replay_record(read_record(f"(;GM[40]FF[4]SZ[8]RU[{name}]{CAPTURE_THEN_STOP}"))
    assert replayed.game.rules == Rules(automatic=True, stop_allowed=True, instant_win=0)
    assert replayed.variant == "noT"
    assert replayed.captured == (1, 0)
    assert replayed.game.stopped == {BLACK}
    # blue's ring is not grounded: its STOP gives its 4 dots to red and frees red's cc (rules.md, STOP)
    assert str(replayed.game.score_result()) == "W+4"


def test_a_bots_nick_ending_in_pressed_stop_is_no_stop() -> None:
    """A bot's line in the root comment (docs/bots.md) ends in its nick, and `Bo pressed STOP` is a nick:
    only a line of one word and ` pressed STOP` is a STOP."""
    root = "C[B is a bot: Bo pressed STOP\nW is a bot: Al pressed STOP]"
    replayed = replay_record(read_record(f"(;GM[40]FF[4]SZ[8]RU[russian]{root}{CAPTURE_THEN_STOP}"))
    assert replayed.game.stopped == {BLACK}  # blue's own STOP at the end, nothing at the root
    assert replayed.captured == (1, 0)


def test_playdots_double_cross_record_replays_as_no_territory_with_two_crosses(tmp_path: Path) -> None:
    """playdots.ru game 110044 (2015-09-19, "без территории, с заземлением, двойной скрест в центре"),
    its first 24 moves, as KvanTTT's dots-game SgfRefinerTests.initPosWithAlternatingMoves gives it."""
    path = tmp_path / "playdots.sgf"
    path.write_text(
        "(;AP[Спортивные Точки (playdots.ru)]GM[40]FF[4]CA[UTF-8]SZ[39:32]RU[russian]"
        "C[без территории, с заземлением, двойной скрест в центре]"
        "AB[sp][tq][uq][vp]AW[sq][tp][up][vq]"
        ";B[ur];W[wq];B[vo];W[un];B[uo];W[to];B[tn];W[so];B[rp];W[rq];B[qp];W[rn]"
        ";B[qm];W[tm];B[qr];W[ss];B[sr];W[rr];B[rs];W[tr];B[st];W[us];B[vr];W[ws])"
    )
    status, (line,), _ = replay(str(path))
    assert status == 0, line
    assert (line["variant"], line["moves"]) == ("noT2", 24)


@pytest.mark.parametrize(
    ("ru", "named"),
    [
        ("3", "RU[3]"),
        ("dotsCaptureEmptyBase1sui1", "RU[dotsCaptureEmptyBase1sui1]"),  # KataGoDots
        ("Border=1,BaseMode=1,Suicide=0", "RU flag 'Border'"),  # KvanTTT's DotsGame app
        ("MustSurr=1,Stop=1,Capture=1", "RU flag 'Capture'"),
    ],
)
def test_unknown_rules_are_refused_by_name(tmp_path: Path, ru: str, named: str) -> None:
    path = tmp_path / "other.sgf"
    path.write_text(f"(;GM[40]FF[4]SZ[8]RU[{ru}]{CAPTURE_THEN_STOP}")
    status, (line,), err = replay(str(path))
    assert status == 1 and named in line["error"] and named in err
    with pytest.raises(ReplayError, match=re.escape(named)):
        analysis_start(path.read_text(), 8, 8, automatic=True)
