"""Section "frames" of benchmarks/abuse.py: one client's flood of WebSocket frames on `/push`.

From an address of its own (127.0.0.2: the server's --unlimited 127.0.0.1 does not cover it), one client
opens an anonymous push connection and sends frames of one kind as fast as its socket takes them, for
--frame-seconds each kind: text (a command frame), ping, binary. Whenever the server closes the
connection, it waits RECONNECT_DELAY and opens another (each opening is a request for the limits).
Meanwhile a player at 127.0.0.1, in a process of its own, polls every 60 ms (a quiet poll, answered at
once) and its round trips are measured.

Printed for each kind: frames sent a second, connections opened, the server's CPU a second, the player's
round trips. Before 2026-12-02 the server read every frame however long the flood went on (binary ones
were skipped, pings answered): one connection took a core, and the player's p99 went from 7 ms to
240 ms (binary) and 690 ms (text). Targets: the player's p99 under 100 ms (the project's latency target),
the server's CPU under a quarter of a core.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import multiprocessing
import os
import socket
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path

from stream import HOST, Server, connect, ms, parse_head, percentile

FLOODER = "127.0.0.2"
RECONNECT_DELAY = 0.5  # seconds the flooder waits before opening a closed connection again
POLL_EVERY = 0.06  # seconds between the player's polls (the per-id limit: 20 a second)
TARGET_P99 = 0.1
TARGET_CPU = 0.25  # the server's CPU seconds a second during a flood
KINDS = {"text": 0x1, "binary": 0x2, "ping": 0x9}
PAYLOADS = {"text": b"c1.0.hi", "binary": b"x", "ping": b"p"}
MASK = b"\x01\x02\x03\x04"


def masked(opcode: int, payload: bytes) -> bytes:
    """A client's frame (RFC 6455: a client masks its frames), of at most 125 bytes."""
    head = bytes([0x80 | opcode, 0x80 | len(payload)])
    return head + MASK + bytes(b ^ MASK[i % 4] for i, b in enumerate(payload))


@dataclass
class Flood:
    frames: int = 0
    opened: int = 0  # connections the server upgraded
    refused: int = 0  # openings answered otherwise (429 once the address's requests are spent)


async def _open(port: int) -> socket.socket | None:
    """A push connection from FLOODER, or None when the server does not upgrade it."""
    loop = asyncio.get_running_loop()
    raw = socket.socket()
    raw.setblocking(False)
    raw.bind((FLOODER, 0))
    await loop.sock_connect(raw, (HOST, port))
    key = base64.b64encode(os.urandom(16)).decode()
    await loop.sock_sendall(
        raw,
        (
            f"GET /push?co=getMsg&msgNo=0 HTTP/1.1\r\nHost: {HOST}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode(),
    )
    head = await loop.sock_recv(raw, 65536)
    if head.startswith(b"HTTP/1.1 101"):
        return raw
    raw.close()
    return None


async def _drain(raw: socket.socket) -> None:
    """Read all the server sends (its answers, the whole state) until it closes."""
    loop = asyncio.get_running_loop()
    while await loop.sock_recv(raw, 1 << 20):
        pass


async def flood(port: int, kind: str, seconds: float) -> Flood:
    loop = asyncio.get_running_loop()
    frame = masked(KINDS[kind], PAYLOADS[kind])
    chunk = frame * (65536 // len(frame))
    figures = Flood()
    stop_at = time.monotonic() + seconds
    while time.monotonic() < stop_at:
        raw = await _open(port)
        if raw is None:
            figures.refused += 1
            await asyncio.sleep(RECONNECT_DELAY)
            continue
        figures.opened += 1
        reader = asyncio.create_task(_drain(raw))
        try:
            while time.monotonic() < stop_at and not reader.done():
                async with asyncio.timeout(max(0.01, stop_at - time.monotonic())):
                    await loop.sock_sendall(raw, chunk)
                figures.frames += len(chunk) // len(frame)
        except (OSError, TimeoutError):
            pass
        finally:
            reader.cancel()
            raw.close()
        if time.monotonic() < stop_at:
            await asyncio.sleep(RECONNECT_DELAY)
    return figures


def player(port: int, stop_at: float, timeout: float, results: Connection) -> None:
    """In a process of its own: a guest's quiet polls, every POLL_EVERY seconds, timed."""
    seconds: list[float] = []
    failures: list[str] = []

    async def main() -> None:
        conn = await connect(port, timeout)
        status, body = await conn.get("/a.kropki?co=guestLogin&idGracza=fr1&opis=%2AProbe&lang=en")
        if (status, body) != (200, b""):
            failures.append(f"login answered {status} {body[:40]!r}")
            return
        seen = 0
        while time.monotonic() < stop_at:
            started = time.monotonic()
            try:
                async with asyncio.timeout(timeout):
                    status, body = await conn.get(f"/a.kropki?co=getMsg&idGracza=fr1&msgNo={seen}")
            except (OSError, TimeoutError) as failure:
                failures.append(f"{type(failure).__name__}: {failure}")
                conn = await connect(port, timeout)
                continue
            seconds.append(time.monotonic() - started)
            head = parse_head(body)
            if status != 200 or head is None:
                failures.append(f"poll answered {status} {body[:40]!r}")
            else:
                seen = head[0]
            await asyncio.sleep(POLL_EVERY)

    asyncio.run(main())
    results.send((seconds, failures))


def frames_section(args: argparse.Namespace, workdir: Path) -> bool:
    server = Server(args.python, args.log_level, workdir, None)
    server.start()
    met = True
    try:
        for kind in ("none", *KINDS):
            seconds = args.frame_seconds
            receiving, sending = multiprocessing.get_context("fork").Pipe(duplex=False)
            prober = multiprocessing.get_context("fork").Process(
                target=player,
                args=(server.port, time.monotonic() + seconds, args.timeout, sending),
                daemon=True,
            )
            cpu_before, started = server.cpu_seconds(), time.monotonic()
            prober.start()
            figures = asyncio.run(flood(server.port, kind, seconds)) if kind != "none" else Flood()
            if kind == "none":
                time.sleep(seconds)
            prober.join(seconds + args.timeout + 5)
            elapsed = time.monotonic() - started
            cpu = (server.cpu_seconds() - cpu_before) / elapsed
            times, failures = receiving.recv() if receiving.poll(1) else ([], ["no report"])
            times.sort()
            p99 = percentile(times, 99) if times else float("inf")
            judged = kind != "none"
            kind_met = not judged or (p99 < TARGET_P99 and cpu < TARGET_CPU and not failures)
            met = met and kind_met
            name = "no flood" if kind == "none" else f"{kind} frames"
            print(
                f"{name}: {figures.frames / seconds:,.0f} sent a second, {figures.opened} connections "
                f"opened, {figures.refused} refused; server CPU {cpu:.2f} s a second"
            )
            print(
                f"    the player's polls: {len(times)}, {len(failures)} failed; ms {ms(times, 50, 99)}"
                + (f" (targets p99 < {TARGET_P99 * 1000:.0f} ms, CPU < {TARGET_CPU})" if judged else "")
                + ("" if kind_met else "  MISSED")
            )
            for failure in failures[:3]:
                print(f"    {failure}")
    finally:
        server.stop()
    return met


def frames_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("section frames")
    group.add_argument("--frame-seconds", type=float, default=10.0, help="length of each kind's flood")
