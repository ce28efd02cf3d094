"""What a login and its first reply cost the hub, in-process, as the lobby fills (issue 19.1).

No HTTP, no store: the hub alone, with --players guests in the lobby (--playing of them two by two at
open games, as on a busy server: a login looks for the games the player has a seat at), then --logins
more, each followed by its first reply (the lobby's whole state, as MultiPoints' getMsg and the built-in
client's getBMsg ask for it). Every login changes the lobby, so each of these replies needs the whole
state built again: what that costs as the lobby grows is what this prints. Target: at the largest
size, at most three times the cost at the smallest (the issue's "logging the 10,000th player in
costs no more than three times the 1,000th").

Then, at the largest size, what a restart's restore of all those sessions and games takes (every session
is seated back at its games, as a login is; no target).

    .venv/bin/python benchmarks/login_cost.py --players 1000 10000
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from server.engine.gametype import parse_game_type  # noqa: E402
from server.hub.hub import Hub  # noqa: E402
from server.hub.limits import Caps  # noqa: E402
from tests.hub.test_sessions import Clock, StoreLike  # noqa: E402

TARGET_GROWTH = 3.0
GAME = parse_game_type("2020stanF0.0.0")  # games.py's: 20x20, no clock


def sized_hub(players: int, **kwargs: Any) -> Hub:
    room = 2 * players + 10  # guests may fill only part of the server (Caps.registered_share)
    return Hub(caps=Caps(players=room, players_per_address=room, tables=players + 10), **kwargs)


def fill(hub: Hub, players: int, playing: float) -> None:
    """`players` guests in the lobby, the first `playing` of them two by two at games."""
    for n in range(players):
        hub.guest_login(f"p{n}", f"*p{n}", "en")
    for n in range(0, int(players * playing) // 2 * 2, 2):
        hub.open_table(GAME, f"*p{n}", f"*p{n + 1}")


async def cost(players: int, logins: int, with_subscriptions: bool, playing: float) -> float:
    """Seconds for one login and its first reply, on average, with `players` in the lobby."""
    hub = sized_hub(players + logins)
    hub.start()
    fill(hub, players, playing)
    hub.reply("p0", 0, with_subscriptions=with_subscriptions)
    # the collector out of the timing, as serve keeps it out of requests (server/gcschedule.py): left
    # on, it walked the lobby's thousands of sessions at some of these logins and not at others
    gc.collect()
    gc.disable()
    try:
        started = time.perf_counter()
        for n in range(players, players + logins):
            hub.guest_login(f"p{n}", f"*p{n}", "en")
            hub.reply(f"p{n}", 0, with_subscriptions=with_subscriptions)
        return (time.perf_counter() - started) / logins
    finally:
        gc.enable()


def restore_seconds(players: int, playing: float) -> float:
    """Seconds a new hub takes to restore what a hub with `players` sessions left in its store."""
    store, clock = StoreLike(), Clock()
    fill(sized_hub(players, clock=clock, timers=clock.timers, persistence=store), players, playing)
    journals = {uid: list(entries) for uid, entries in store.entries.items()}
    hub = sized_hub(players, clock=clock, timers=clock.timers, persistence=store)
    gc.collect()
    started = time.perf_counter()
    hub.restore(journals, max(journals, default=0) + 1, store.live())
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, nargs="+", default=[1_000, 10_000], help="lobby sizes")
    parser.add_argument("--logins", type=int, default=200, help="logins measured at each size")
    parser.add_argument("--rounds", type=int, default=3, help="runs at each size, the best kept")
    parser.add_argument("--playing", type=float, default=0.5, help="share of the lobby playing, in pairs")
    args = parser.parse_args()
    if min(args.players) < 1 or args.logins < 1 or args.rounds < 1 or not 0 <= args.playing <= 1:
        parser.error("--players, --logins and --rounds must be positive, --playing in [0, 1]")
    ok = True
    for stream, with_subscriptions in (("getMsg", False), ("getBMsg", True)):
        # the best of --rounds: the first hub of a size in a process also pays for the memory it takes
        # from the system (the first 10,000-player lobby cost three times the next)
        costs = [
            min(
                asyncio.run(cost(size, args.logins, with_subscriptions, args.playing))
                for _ in range(args.rounds)
            )
            for size in args.players
        ]
        figures = ", ".join(
            f"{size:,}: {seconds * 1e6:,.0f} us" for size, seconds in zip(args.players, costs, strict=True)
        )
        growth = costs[-1] / costs[0]
        passed = growth <= TARGET_GROWTH
        ok &= passed
        print(
            f"{stream}: a login and its first reply, by players in the lobby ({args.playing:.0%} of them "
            f"at games): {figures}"
        )
        print(
            f"{'PASS' if passed else 'FAIL'}: {stream} at {args.players[-1]:,} players x{growth:.2f} "
            f"the cost at {args.players[0]:,} (target <= {TARGET_GROWTH:g})"
        )
    largest = args.players[-1]
    print(
        f"a restart's restore of {largest:,} sessions ({args.playing:.0%} of them at games): "
        f"{restore_seconds(largest, args.playing):.2f} s"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
