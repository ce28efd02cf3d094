"""server/engine/rating.py against an independent Glicko-2 implementation: 2000 random rating periods
rated by sublee/glicko2 (tests/fixtures/glicko2, remade by scripts/glicko2_reference.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from server.engine.rating import MAX_DEVIATION, MIN_DEVIATION, Rating, update

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "glicko2" / "periods.json"
PERIODS = json.loads(FIXTURE.read_text(encoding="utf-8"))["periods"]

# Both run the same steps in a different order of floating-point operations; what is left is rounding.
RATING_TOLERANCE = 1e-9
DEVIATION_TOLERANCE = 1e-9
VOLATILITY_TOLERANCE = 1e-12


def test_the_fixture_has_every_kind_of_period() -> None:
    games = [len(period["results"]) for period in PERIODS]
    assert len(PERIODS) == 2000
    assert games.count(0) > 20 and games.count(1) > 1000 and max(games) >= 10
    scores = {result[3] for period in PERIODS for result in period["results"]}
    assert scores == {0.0, 0.5, 1.0}


@pytest.mark.parametrize("chunk", range(10))
def test_every_period_as_the_reference_rates_it(chunk: int) -> None:
    """The server clamps the deviation to its floor and cap (docs/ratings.md, "Parameters"); the
    reference does not, and nothing else in a period depends on the clamp."""
    for period in PERIODS[chunk::10]:
        player = Rating(*period["player"])
        results = [(Rating(*result[:3]), result[3]) for result in period["results"]]
        rating, deviation, volatility = period["after"]
        after = update(player, results)
        expected_deviation = min(MAX_DEVIATION, max(MIN_DEVIATION, deviation))
        assert after.rating == pytest.approx(rating, abs=RATING_TOLERANCE), period
        assert after.deviation == pytest.approx(expected_deviation, abs=DEVIATION_TOLERANCE), period
        assert after.volatility == pytest.approx(volatility, abs=VOLATILITY_TOLERANCE), period
