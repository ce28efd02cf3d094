"""What a game start costs for the invitations pending in the lobby: every game start withdraws the
invitations its players sent (Invitations.withdraw_sent_by, called by Tables.game_started), and that
must not walk every pending invitation of the server.

Nor may its checks walk every open table: the cap of each player's unfinished games (Limits.games_of)
and the game tables the guests of an address hold (Limits.guest_tables).

In-process, on the hub itself (no HTTP): --tables games are begun between guests first (each guest
its own address), and --pending invitations kept out between guests who never answer them, then
--games pairs of other guests each begin a game by an accepted invitation. Measured in CPU time (so
that other processes on a shared machine count for little), each the median of --repeat runs: the
withdrawal alone for a pair that sent nothing else (its share of a game start), the two checks alone
for both players of a start (as a seek or a pool checks them), and the whole game start (invite,
accept, the table opened).

    .venv/bin/python benchmarks/game_starts.py --pending 2000 --games 500 --repeat 5
    .venv/bin/python benchmarks/game_starts.py --pending 0 --tables 2000 --games 300 --repeat 5
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from server.hub.clock import ManualTimers  # noqa: E402
from server.hub.hub import Hub  # noqa: E402
from server.hub.limits import Caps  # noqa: E402
from server.hub.model import Origin  # noqa: E402

FREE = "0808s0..a.F.n...."  # 8x8, free, the inviter blue, no clock


def checks(hub: Hub, nick: str) -> None:
    """What a game start checks of one of its players against the open tables (Limits.may_begin_a_game)."""
    player = hub.roster.online(nick)
    assert player is not None
    hub.ctx.limits.may_begin_a_game(hub.tables, player)


def one_run(pending: int, games: int, tables: int) -> tuple[float, float, float]:
    """Microseconds per game start: (the withdrawal alone, the checks of both players alone, the whole
    start by an accepted invitation)."""
    guests = 2 * (tables + pending + games)
    room = 2 * guests + 10  # guests may fill only part of the server (Caps.registered_share)
    open_most = 2 * (tables + games) + 10
    caps = Caps(players=room, players_per_address=room, tables=open_most, games_begun_per_address=room)
    hub = Hub(caps=caps, timers=ManualTimers(), rng=random.Random(1))
    for n in range(guests):  # each its own address: the guests' per-address caps hold no one back
        hub.guest_login(f"g{n:07d}", f"*G{n}", "en", Origin(f"10.{n >> 16}.{(n >> 8) & 255}.{n & 255}"))
    for n in range(pending, pending + tables):  # games going on meanwhile, each at its own table
        hub.invite(f"g{2 * n:07d}", f"*G{2 * n + 1}", FREE)
        hub.answer_invitation(f"g{2 * n + 1:07d}", "a")
    assert len(hub.tables) == 1 + tables
    for n in range(pending):
        hub.invite(f"g{2 * n:07d}", f"*G{2 * n + 1}", FREE)
    assert len(hub.invites.invitations) == pending
    pairs = [(2 * n, 2 * n + 1) for n in range(pending + tables, pending + tables + games)]

    started = time.process_time()  # CPU time: other processes on a shared machine do not count
    for blue, red in pairs:
        hub.invites.withdraw_sent_by((f"*G{blue}", f"*G{red}"))
    withdrawal = time.process_time() - started

    started = time.process_time()
    for blue, red in pairs:
        checks(hub, f"*G{blue}")
        checks(hub, f"*G{red}")
    checked = time.process_time() - started

    started = time.process_time()
    for blue, red in pairs:
        hub.invite(f"g{blue:07d}", f"*G{red}", FREE)
        hub.answer_invitation(f"g{red:07d}", "a")
    whole = time.process_time() - started
    assert len(hub.invites.invitations) == pending  # the accepted ones went, the others stayed
    return 1e6 * withdrawal / games, 1e6 * checked / games, 1e6 * whole / games


def main() -> None:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=formatter)
    parser.add_argument("--pending", type=int, default=2000, help="invitations kept out, never answered")
    parser.add_argument("--tables", type=int, default=0, help="game tables open before the starts")
    parser.add_argument("--games", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    runs = [one_run(args.pending, args.games, args.tables) for _ in range(args.repeat)]
    withdrawal, checked, whole = (statistics.median(run[n] for run in runs) for n in range(3))
    print(
        f"{args.tables:,} tables open, {args.pending:,} invitations pending, {args.games:,} games begun, "
        f"median of {args.repeat}:"
    )
    print(f"  the withdrawal of the starters' invitations: {withdrawal:,.1f} us per game start")
    print(f"  the checks of both players against the open tables: {checked:,.1f} us per game start")
    print(f"  a game start by an accepted invitation, whole: {whole:,.1f} us")


if __name__ == "__main__":
    main()
