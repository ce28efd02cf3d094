"""Arena pairing speed: waves of --players free players paired by server/engine/arena.py, each timed.

Every player is free at every wave, as at an arena's start (everyone joined before it) and the worst
case later: every game of a wave ends before the next. Results are drawn from the ratings (the stronger
wins more often, a third of the games drawn) with 10 to 120 moves; ranks are the standings of everyone,
as the director passes them. Prints each wave's pairing time in CPU seconds (a shared machine's wall
time says less) and the slowest, for each --players.

    .venv/bin/python benchmarks/arena.py --players 100 200 500 --waves 3
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from server.engine.arena import ArenaGame, ArenaPlayer, Outcome, pair, standings  # noqa: E402


@dataclass(frozen=True)
class Wave:
    """One wave's input, as Director._arena hands it to arena.pair."""

    waiting: list[ArenaPlayer]
    ranks: dict[str, int]


def simulate(players: int, waves: int, seed: int, inputs: list[Wave] | None = None) -> list[float]:
    """Each wave's pairing time in CPU seconds; `inputs`, when given, gets each wave's input."""
    rng = random.Random(seed)
    ratings = {f"p{n}": 2400.0 - 1000 * n / players for n in range(1, players + 1)}
    history: dict[str, list[ArenaGame]] = {key: [] for key in ratings}
    times = []
    for _ in range(waves):
        waiting = [ArenaPlayer(key, ratings[key], tuple(history[key])) for key in ratings]
        rng.shuffle(waiting)  # the order they became free
        ranks = {standing.key: standing.rank for standing in standings(waiting)}
        if inputs is not None:
            inputs.append(Wave(waiting, ranks))
        start = time.process_time()
        pairs = pair(waiting, ranks=ranks, active_players=players)
        times.append(time.process_time() - start)
        for white, black in pairs:
            expected = 1 / (1 + 10 ** ((ratings[black] - ratings[white]) / 400))
            moves = rng.randrange(10, 121)
            white_result: Outcome = (
                "draw" if rng.random() < 1 / 3 else "win" if rng.random() < expected else "loss"
            )
            black_result: Outcome = {"win": "loss", "loss": "win", "draw": "draw"}[white_result]
            history[white].append(ArenaGame(black, white_result, True, moves))
            history[black].append(ArenaGame(white, black_result, False, moves))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--players", type=int, nargs="+", default=[100, 200, 500])
    parser.add_argument("--waves", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    for players in args.players:
        times = simulate(players, args.waves, args.seed)
        waves = ", ".join(f"{seconds:.2f}" for seconds in times)
        print(f"{players} players: waves paired in {waves} s; slowest {max(times):.2f} s", flush=True)


if __name__ == "__main__":
    main()
