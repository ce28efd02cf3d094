"""What sealing and opening a message between members costs (server/cluster/signing.py), in-process.

For messages of the sizes the cluster sends (a few lobby lines; a table's whole state; a member's
whole lobby part with --people people), the time to seal one (HMAC-SHA256 of the channel and the
message, as the sender does before publishing) and to open one (the header's pattern, the MAC
checked, freshness and counter, the JSON read), beside what the link paid before messages were
sealed (json.dumps on the way out, json.loads on the way in); and what a message that fails its
signature costs a receiver, which is what a flood of forgeries costs it.

    .venv/bin/python benchmarks/seal.py [--people 1000] [--rounds 20000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from server.cluster.signing import Opener, Seal  # noqa: E402

SECRET = "0123456789abcdef" * 4
CHANNEL = "kropki:lobby"


def messages(people: int) -> dict[str, dict[str, object]]:
    """Payloads shaped as server/cluster/lobby.py builds them."""
    lines = [["pa*Guest1234", False], ["i*Guest1234..F.en", False], ["ca1795938579_0.*Ala.1.hi", False]]
    moves = ".".join(f"{x % 39}-{x % 32}" for x in range(200))
    state = {"b": [{"state": [1234, "refresh", ["d1234.3932noT4r0.180.15.*Ala.*Bob", f"s{moves}"], []]}]}
    part = [f"pr{'.'.join(f'*Guest{n}' for n in range(people))}"]
    part += [f"i*Guest{n}.1500.F.en" for n in range(people)]
    part += [f"d{n}.3932noT4r0.180.15.*Guest{2 * n}.*Guest{2 * n + 1}" for n in range(people // 4)]
    part += [f"ca1795938{n:03}_0.*Guest{n}.1.a line of lobby chat number {n}" for n in range(100)]
    return {
        "lobby lines": {"n": 41, "l": lines},
        "table state": {"n": 7, **state},
        f"lobby part, {people} people": {"n": 41, "part": part},
    }


def per_call(call: Callable[[], object], rounds: int) -> float:
    """Microseconds per call, the best of three runs."""
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(rounds):
            call()
        best = min(best, time.perf_counter() - start)
    return best / rounds * 1e6


async def measure(people: int, smallest_rounds: int) -> None:
    """In an event loop, as the link runs: a dropped message may schedule its log line."""
    logging.getLogger("server.cluster.signing").setLevel(logging.ERROR)  # the drops' line, not measured
    columns = ("bytes", "dumps", "seal", "loads", "open", "forged")
    print(f"{'message':<26} " + " ".join(f"{column:>8}" for column in columns) + "  (µs)")
    for name, payload in messages(people).items():
        text = json.dumps(payload, separators=(",", ":"))
        rounds = max(20, smallest_rounds * 200 // max(200, len(text)))
        seal = Seal("kropki-b", SECRET)
        dumps = per_call(lambda: json.dumps(payload, separators=(",", ":")), rounds)  # noqa: B023
        sealing = per_call(lambda: seal.seal(CHANNEL, text), rounds)  # noqa: B023
        loads = per_call(lambda: json.loads(text), rounds)  # noqa: B023
        # every message opened once, in order: counters rise as they do on the wire
        opener = Opener("kropki-a", [SECRET])
        sealed = iter([seal.seal(CHANNEL, text) for _ in range(3 * rounds)])
        opening = per_call(lambda: opener.open(CHANNEL, next(sealed)), rounds)  # noqa: B023
        forged = Seal("kropki-b", "another secret altogether, 0123456789").seal(CHANNEL, text)
        dropping = per_call(lambda: opener.open(CHANNEL, forged), rounds)  # noqa: B023
        assert opener.dropped["signature"] == 3 * rounds and opener.dropped["replay"] == 0
        opener.close()
        print(
            f"{name:<26} {len(forged):>8,} {dumps:>8.1f} {sealing:>8.1f} {loads:>8.1f} {opening:>8.1f} "
            f"{dropping:>8.1f}"
        )
    print("seal: on top of dumps; open: the header, MAC, freshness, counter and loads; forged: dropped")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--people", type=int, default=1000, help="people in the whole lobby part")
    parser.add_argument("--rounds", type=int, default=20000, help="calls timed for the smallest message")
    args = parser.parse_args()
    asyncio.run(measure(args.people, args.rounds))


if __name__ == "__main__":
    main()
