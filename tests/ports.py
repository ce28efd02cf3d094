"""Ports for the servers the tests and benchmarks start: chosen below the kernel's ephemeral range.

A port from `bind(("127.0.0.1", 0))` comes from the ephemeral range, the same range every outgoing
connection takes its local port from, and make test's four parts open thousands of those side by side. So
a port chosen that way and let go could be taken by any connection before the server bound it (a browser
test then ran against another process, 2026-11-30). The kernel hands out no port below the range, so a
port chosen there can be taken only by another test choosing the same one: one in many thousands, at
random, and tested by a bind.
"""

from __future__ import annotations

import random
import socket
from pathlib import Path

LOWEST = 10_000  # above the well-known services' ports (PostgreSQL's 5432, Redis's 6379)
EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")
_CHOOSE = random.SystemRandom()  # not the random module's state, which tests and Hypothesis seed


def ephemeral_start() -> int:
    """The first port the kernel hands out on its own (32768 where it does not say)."""
    try:
        return int(EPHEMERAL_RANGE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32_768


def free_port() -> int:
    """A port below the ephemeral range that nothing on 127.0.0.1 holds now."""
    highest = max(ephemeral_start(), LOWEST + 1_000)
    while True:
        port = _CHOOSE.randrange(LOWEST, highest)
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
        return port
