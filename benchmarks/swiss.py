"""Swiss pairing speed: a whole tournament of random results, each round timed.

--players players (100) play --rounds rounds (7) paired by server/engine/swiss.py; results are drawn
from the ratings (the stronger wins more often, a third of the games drawn), one game in --forfeit-rate
(30) is forfeited and one player in --absent-rate (25) misses a round. Prints each round's pairing time
and the slowest. Target: the slowest round well under a second (1 s); the exit status is 1 above it.

    .venv/bin/python benchmarks/swiss.py --players 100 --rounds 7
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from server.engine.swiss import Entrant, Round, pair_round  # noqa: E402

TARGET_SECONDS = 1.0


def simulate(
    players: int,
    rounds: int,
    seed: int,
    forfeit_rate: int,
    absent_rate: int,
    inputs: list[list[Entrant]] | None = None,
) -> list[float]:
    """Each round's pairing time in seconds; `inputs`, when given, gets each round's entrants."""
    rng = random.Random(seed)
    ratings = {f"p{n}": 2400 - 10 * n for n in range(1, players + 1)}
    history: dict[str, list[Round]] = {key: [] for key in ratings}
    times = []
    for _ in range(rounds):
        absent = {key for key in ratings if rng.randrange(absent_rate) == 0}
        entrants = [Entrant(key, ratings[key], tuple(history[key])) for key in ratings if key not in absent]
        if inputs is not None:
            inputs.append(entrants)
        start = time.perf_counter()
        pairing = pair_round(entrants, rounds)
        times.append(time.perf_counter() - start)
        if pairing.bye:
            history[pairing.bye].append(Round(None, None, 1.0, False, bye=True))
        for white, black in pairing.boards:
            if rng.randrange(forfeit_rate) == 0:
                history[white].append(Round(black, None, 1.0, False))
                history[black].append(Round(white, None, 0.0, False))
                continue
            expected = 1 / (1 + 10 ** ((ratings[black] - ratings[white]) / 400))
            draw = rng.random() < 1 / 3
            white_points = 0.5 if draw else 1.0 if rng.random() < expected else 0.0
            history[white].append(Round(black, "white", white_points, True))
            history[black].append(Round(white, "black", 1.0 - white_points, True))
        for key in absent:
            history[key].append(Round(None, None, 0.0, False))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--players", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--forfeit-rate", type=int, default=30)
    parser.add_argument("--absent-rate", type=int, default=25)
    args = parser.parse_args()
    times = simulate(args.players, args.rounds, args.seed, args.forfeit_rate, args.absent_rate)
    for number, seconds in enumerate(times, start=1):
        print(f"round {number}: paired in {seconds * 1000:.0f} ms")
    slowest = max(times)
    print(f"{args.players} players: slowest round {slowest * 1000:.0f} ms (target {TARGET_SECONDS:.0f} s)")
    sys.exit(0 if slowest < TARGET_SECONDS else 1)


if __name__ == "__main__":
    main()
