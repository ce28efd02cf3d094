"""What hiding ignored players' lines costs a poll (issue 43.7): the reply of a reader who ignores
nobody must cost what it cost before ignoring existed, and a reader who ignores someone pays only for
their own reply.

In-process, on the hub itself (no HTTP, so that the figure is the reply's own and not the network's):
--readers guests in the lobby, and for --rounds rounds one of --speakers says a lobby chat line, then
every reader polls with the msgNo of its last reply (`Hub.receive` with no commands, then `Hub.reply`,
as the web layer calls them). The CPU time of the replies is measured (so that other processes on a
shared machine count for little), per reply, for the readers who ignore nobody and, with --ignoring,
for a share of readers who each ignore one of the speakers (their replies hide that speaker's lines).
Each figure is the median of --repeat runs.

    .venv/bin/python benchmarks/ignoring.py --readers 2000 --rounds 50 --repeat 5
    .venv/bin/python benchmarks/ignoring.py --readers 2000 --rounds 50 --repeat 5 --ignoring 0.1
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
from server.protocol.codec import encode_client_text, parse_commands  # noqa: E402


def one_run(readers: int, rounds: int, speakers: int, ignoring: float) -> tuple[float, float | None]:
    """Microseconds per reply: (readers who ignore nobody, readers who ignore a speaker or None)."""
    room = 2 * readers + 10  # guests may fill only part of the server (Caps.registered_share)
    timers = ManualTimers()
    hub = Hub(caps=Caps(players=room, players_per_address=room), timers=timers, rng=random.Random(1))
    secrets = [f"r{n:07d}" for n in range(readers)]
    for n, secret in enumerate(secrets):
        hub.guest_login(secret, f"*Reader{n}", "en")
    ignorers = set(secrets[speakers : speakers + int(readers * ignoring)])
    for number, secret in enumerate(sorted(ignorers), 1):
        hub.receive(secret, parse_commands(f"c{number}.ignore._*Reader{number % speakers}"))
    seen = {secret: 0 for secret in secrets}
    for secret in secrets:  # the whole state once, as every client's first poll
        hub.reply(secret, 0, with_subscriptions=False)
        seen[secret] = hub.counter.last
    groups = [[secret for secret in secrets if secret not in ignorers], sorted(ignorers)]
    spent = [0.0, 0.0]
    said = dict.fromkeys(secrets[:speakers], 100)
    for round_ in range(rounds):
        timers.advance(60.0 / rounds * speakers / 20 + 0.1)  # within every speaker's 20 lines a minute
        speaker = secrets[round_ % speakers]
        said[speaker] += 1
        hub.receive(speaker, parse_commands(f"c{said[speaker]}.0.{encode_client_text(f'line {round_}')}"))
        last = hub.counter.last
        for index, group in enumerate(groups):
            started = time.process_time()  # CPU time: other processes on a shared machine do not count
            for secret in group:
                hub.receive(secret, [])
                hub.reply(secret, seen[secret], with_subscriptions=False)
                seen[secret] = last
            spent[index] += time.process_time() - started
    plain, hiding = (1e6 * spent[i] / (len(groups[i]) * rounds) if groups[i] else None for i in (0, 1))
    assert plain is not None
    return plain, hiding


def main() -> None:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=formatter)
    parser.add_argument("--readers", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--speakers", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--ignoring", type=float, default=0.0, help="share of readers who ignore a speaker")
    args = parser.parse_args()
    runs = [one_run(args.readers, args.rounds, args.speakers, args.ignoring) for _ in range(args.repeat)]
    plain = statistics.median(run[0] for run in runs)
    print(f"readers who ignore nobody: {plain:.2f} µs a reply (median of {args.repeat} runs)")
    hiding = [run[1] for run in runs if run[1] is not None]
    if hiding:
        print(f"readers who ignore a speaker: {statistics.median(hiding):.2f} µs a reply")


if __name__ == "__main__":
    main()
