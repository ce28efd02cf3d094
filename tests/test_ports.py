"""The ports the tests' servers get: never one the kernel may hand to somebody's outgoing connection."""

from __future__ import annotations

import socket

from tests.ports import LOWEST, ephemeral_start, free_port


def test_a_free_port_lies_below_the_ephemeral_range_and_can_be_listened_on() -> None:
    ports = {free_port() for _ in range(50)}

    assert all(LOWEST <= port < ephemeral_start() for port in ports)
    assert len(ports) > 40  # chosen at random: parts side by side do not walk the same sequence
    with socket.socket() as server:
        server.bind(("127.0.0.1", ports.pop()))
        server.listen()


def test_a_port_held_by_a_listener_is_never_chosen() -> None:
    held = []
    try:
        for port in range(LOWEST, LOWEST + 200):
            listener = socket.socket()
            try:
                listener.bind(("127.0.0.1", port))
            except OSError:
                listener.close()
                continue
            listener.listen()
            held.append(listener)
        taken = {listener.getsockname()[1] for listener in held}
        chosen = {free_port() for _ in range(500)}
    finally:
        for listener in held:
            listener.close()

    assert not chosen & taken
