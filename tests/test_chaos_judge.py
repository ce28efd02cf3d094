"""The judge at the end of benchmarks/chaos.py (benchmarks/chaos_report.py), on runs made up here: a run
that kept every promise passes every target, and each broken promise fails its own target and no other.
The chaos test in tests/test_benchmarks.py can only fail if the judge can."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.clients.multipoints import GameRoom, MultiPoints

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
START = 1000.0  # the run's monotonic clock
STOPPED = START + 120.0
DEATH = START + 40.0  # member m1 dies, owning table 101
TARGETS = {
    "lost": "no acknowledged move lost",
    "duplicated": "none duplicated or phantom",
    "boards": "every board equals its table's record",
    "sd": "no `sd` to a live session",
    "traceback": "no traceback in the members' logs",
    "k": "k never held past 30 s",
    "late": "every table moving again within 20 s of a member's death or Redis's return",
    "k inherited": "a login never inherits k",
}


def _benchmark_modules() -> tuple[ModuleType, ModuleType]:
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import chaos_players
        import chaos_report
    finally:
        sys.path.remove(str(BENCHMARKS))
    return chaos_players, chaos_report


players, judge = _benchmark_modules()


@dataclass
class Run:
    """Two games, each on its own table, four moves each, all acknowledged, stored and shown."""

    run: Any = field(default_factory=lambda: players.Run(seed=1, recorder=players.Recorder(started=START)))
    pairs: list[Any] = field(default_factory=list)
    record: Any = field(default_factory=lambda: judge.Record())
    logs: Any = field(default_factory=lambda: judge.Logs())
    events: list[Any] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.pairs = players.make_pairs(2, 0, self.run)
        for pair, uid in zip(self.pairs, ("101", "102"), strict=True):
            pair.uid, pair.tables = uid, [uid]
            moves = [((x, x), x % 2 == 0) for x in range(1, 5)]
            self.record.moves[uid] = list(moves)
            for player in pair.players:
                player.mp = MultiPoints(player.nick, player.secret)
                player.mp.tabs[uid] = GameRoom(uid, (20, 20), dots=dict(moves))
            for number, (point, red) in enumerate(moves, start=1):
                mover = pair.players[int(red)]
                sent = START + 10.0 * number
                command = players.Command(mover.nick, 1, number, "s", uid, point, red, sent, sent, sent + 1.0)
                mover.commands.append(command)
            pair.move_times = [START + 10.0 * n + 1.0 for n in range(1, 12)]  # every 10 s to the end
        for player in (p for pair in self.pairs for p in pair.players):
            self.run.recorder.ok_times[player.nick] = [START + n for n in range(120)]
        killed = judge.Event("a member killed", started=DEATH - 1.0)
        killed.marks.append(judge.Mark(DEATH, "death", "m1", ["101"]))
        self.events.append(killed)

    def failed(self, capsys: pytest.CaptureFixture[str]) -> set[str]:
        check = judge.report(self.pairs, self.run.recorder, self.record, self.logs, self.events, STOPPED)
        printed = capsys.readouterr().out
        assert set(check.passed) == set(TARGETS.values()), printed
        return {name for name, target in TARGETS.items() if not check.passed[target]}


def _lost(run: Run) -> None:  # acknowledged, yet not in the table's record
    run.record.moves["101"].pop()
    for player in run.pairs[0].players:
        player.mp.tabs["101"].dots.pop((4, 4))


def _phantom(run: Run) -> None:  # in the record, never sent
    run.record.moves["102"].append(((9, 9), False))
    for player in run.pairs[1].players:
        player.mp.tabs["102"].dots[(9, 9)] = False


def _board(run: Run) -> None:
    run.pairs[1].players[0].mp.tabs["102"].dots.pop((1, 1))


def _sd(run: Run) -> None:
    run.run.recorder.sd.append((START + 50.0, "*c1"))


def _traceback(run: Run) -> None:
    run.logs.tracebacks = 1


def _k_held(run: Run) -> None:
    run.pairs[0].players[1].commands[0].acked = run.pairs[0].players[1].commands[0].sent + 40.0


def _late(run: Run) -> None:  # table 101's next move 31 s after the death (at +71 s; each 10 s before)
    run.pairs[0].move_times = [t for t in run.pairs[0].move_times if not DEATH < t < DEATH + 25.0]


def _k_inherited(run: Run) -> None:
    run.run.recorder.bad_k.append("*c2 login 2: k 7, sent 3")


BREAKS: dict[str, Callable[[Run], None]] = {
    "lost": _lost,
    "duplicated": _phantom,
    "boards": _board,
    "sd": _sd,
    "traceback": _traceback,
    "k": _k_held,
    "late": _late,
    "k inherited": _k_inherited,
}


def test_a_run_that_kept_every_promise_meets_every_target(capsys: pytest.CaptureFixture[str]) -> None:
    assert Run().failed(capsys) == set()


@pytest.mark.parametrize("broken", sorted(BREAKS))
def test_each_broken_promise_fails_its_own_target_and_no_other(
    broken: str, capsys: pytest.CaptureFixture[str]
) -> None:
    run = Run()
    BREAKS[broken](run)
    assert run.failed(capsys) == {broken}


def test_a_table_is_judged_from_its_second_owners_death_when_that_one_died_while_taking_it_over(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Table 101's owner died; the member taking it over died 15 s later: the next move, 31 s after the
    first death, is 16 s after the second, within the target (chaos_report._died_again)."""
    run = Run()
    _late(run)
    run.events[0].marks.append(judge.Mark(DEATH + 15.0, "death", "m2", ["101"]))
    assert run.failed(capsys) == set()


def test_a_later_death_of_a_member_that_did_not_own_the_table_excuses_nothing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    run = Run()
    _late(run)
    run.events[0].marks.append(judge.Mark(DEATH + 15.0, "death", "m2", ["102"]))
    assert run.failed(capsys) == {"late"}
