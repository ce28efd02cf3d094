"""The game page's replay data (engine/steps.py) agrees with the engine's own replay of every real record."""

from __future__ import annotations

from pathlib import Path

import pytest

from server.engine.replay import replay_record
from server.engine.sgf import read_record
from server.engine.steps import steps_of

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sgf"


@pytest.mark.parametrize("name", sorted(path.name for path in FIXTURES.glob("*.sgf")))
def test_every_move_and_capture_of_a_real_record(name: str) -> None:
    text = (FIXTURES / name).read_text()
    record = read_record(text)
    replayed = replay_record(read_record(text))

    steps = steps_of(text)

    assert (steps.width, steps.height, steps.variant) == (record.width, record.height, replayed.variant)
    assert len(steps.steps) == len(record.moves)
    assert [step.colour for step in steps.steps] == [move.colour for move in record.moves]
    assert steps.steps[-1].score == replayed.captured
    captured: set[str] = set()
    for step in steps.steps:  # what the page dims is what the scores count, move after move
        assert not set(step.taken) & captured and set(step.freed) <= captured
        captured = (captured | set(step.taken)) - set(step.freed)
        assert len(captured) == sum(step.score)
        assert bool(step.taken or step.freed) <= bool(step.realms)  # only a new realm changes captures
