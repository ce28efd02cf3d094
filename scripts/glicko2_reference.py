"""Rebuilds tests/fixtures/glicko2/periods.json: random Glicko-2 rating periods rated by an independent
implementation, the reference that tests/engine/test_rating_reference.py holds server/engine/rating.py
to (docs/ratings.md, "Checked against").

The reference is Heungsub Lee's `glicko2.py` (https://github.com/sublee/glicko2, BSD-3-Clause), a
single file that follows Glickman's 2013 paper step by step; the fixture was made with its commit
3d56e29 (December 2022). It is not on PyPI (the `glicko2` package there is another implementation, with
a volatility step that differs from the paper's: docs/ratings.md says how), and this project ships no
copy of it: get the file from that repository. Then:

    .venv/bin/python scripts/glicko2_reference.py --reference /path/to/glicko2.py

Every period is drawn from SEED with Python's `random`, so running this again rewrites the same file.
Inputs are rounded to what a stored rating looks like on the page (a tenth of a point, a hundred-
thousandth of volatility) so that the file stays short; outputs are the reference's, unrounded and
unclamped (the server's deviation floor and cap are its own, applied by the test).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
from pathlib import Path
from types import ModuleType

FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "glicko2" / "periods.json"
SEED = 2013  # any number (the paper's year); kept so that the file is remade as it is
PERIODS = 2000
TAU = 0.5  # the server's system constant (server/engine/rating.py)


def load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("reference_glicko2", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"{path} is not a Python file")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def draw_rating(rng: random.Random) -> list[float]:
    """A rating as the server may hold one: mostly near the middle, sometimes far out; a deviation
    anywhere between the server's floor and cap; a volatility around the starting 0.06."""
    rating = rng.gauss(1500.0, 300.0) if rng.random() < 0.8 else rng.uniform(300.0, 2900.0)
    deviation = rng.choice([30.0, 350.0]) if rng.random() < 0.1 else rng.uniform(30.0, 350.0)
    volatility = 0.06 if rng.random() < 0.3 else rng.uniform(0.02, 0.15)
    return [round(rating, 1), round(deviation, 1), round(volatility, 5)]


def draw_period(rng: random.Random) -> dict[str, object]:
    """The server rates one game a period; a few longer periods and a few empty ones check the sums
    and step 6 as the paper has them."""
    shape = rng.random()
    games = 0 if shape < 0.03 else 1 if shape < 0.7 else rng.randint(2, 12)
    player = draw_rating(rng)
    results = []
    for _ in range(games):
        opponent = draw_rating(rng)
        if rng.random() < 0.1:  # an upset across a large gap: step 5's bracketing loop (k > 1)
            opponent[0] = round(player[0] + rng.choice([-1, 1]) * rng.uniform(600.0, 1200.0), 1)
        results.append([*opponent, rng.choice([0.0, 0.5, 1.0])])
    return {"player": player, "results": results}


def rate(reference: ModuleType, period: dict[str, object]) -> list[float]:
    system = reference.Glicko2(tau=TAU)
    rating, deviation, volatility = period["player"]  # type: ignore[misc]
    series = [
        (score, system.create_rating(opp_rating, opp_deviation, opp_volatility))
        for opp_rating, opp_deviation, opp_volatility, score in period["results"]  # type: ignore[attr-defined]
    ]
    after = system.rate(system.create_rating(rating, deviation, volatility), series)
    return [after.mu, after.phi, after.sigma]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--reference", type=Path, required=True, help="sublee/glicko2's glicko2.py")
    parser.add_argument("--out", type=Path, default=FIXTURE, help="where to write (default: %(default)s)")
    args = parser.parse_args()
    reference = load(args.reference)
    rng = random.Random(SEED)
    periods = []
    for _ in range(PERIODS):
        period = draw_period(rng)
        periods.append({**period, "after": rate(reference, period)})
    args.out.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(period, separators=(",", ":")) for period in periods]
    header = {"made by": "sublee/glicko2 3d56e29, tau 0.5, epsilon 1e-6", "seed": SEED}
    args.out.write_text(
        "{" + json.dumps(header)[1:-1] + ',"periods":[\n' + ",\n".join(lines) + "\n]}\n", encoding="utf-8"
    )
    print(f"{len(periods)} periods written to {args.out}")


if __name__ == "__main__":
    main()
