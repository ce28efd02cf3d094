"""Invitations across a SIGKILL of a real `serve` process: pending ones are knowingly dropped (they live
in the hub alone: docs/protocol.md, "Sessions"), consistently for both players, and one withdrawn because
its inviter began a game stays withdrawn; the game begun comes back, and the players invite again."""

from __future__ import annotations

import signal
from pathlib import Path

from tests.test_restart import GAME_TYPE, Guest, Reply, Server, start_game


def invitation_lines(reply: Reply) -> list[str]:
    """The `vg`, `vs` and `vr` lines every reply repeats (after its sections)."""
    return [line for lines in reply.sections.values() for line in lines if line[:2] in ("vg", "vs", "vr")]


def test_invitations_are_dropped_at_a_crash_for_both_players_and_a_withdrawn_one_stays_gone(
    tmp_path: Path,
) -> None:
    server = Server(tmp_path)
    with server.running(migrate=True):
        ala, bob, cid, dan, eve = (
            Guest(server, f"{name.lower()}12345", f"*{name}") for name in ("Ala", "Bob", "Cid", "Dan", "Eve")
        )
        for guest in (ala, bob, cid, dan, eve):
            guest.login()
            guest.poll()
        ala.ok(co="zapraszam", whom=bob.nick, gameType=GAME_TYPE)
        assert [line[:6] for line in invitation_lines(bob.poll())] == ["vg*Ala"]
        uid, _, _ = start_game(cid, ala)  # Ala begins a game: her invitation to Bob is withdrawn
        assert invitation_lines(bob.poll()) == []
        eve.ok(co="zapraszam", whom=dan.nick, gameType=GAME_TYPE)
        assert [line[:6] for line in invitation_lines(dan.poll())] == ["vg*Eve"]
        assert [line[:6] for line in invitation_lines(eve.poll())] == ["vs*Dan"]
        assert server.stop(signal.SIGKILL) == -signal.SIGKILL

    with server.running():
        for guest in (ala, bob, cid, dan, eve):  # old ids and message numbers
            reply = guest.poll()
            assert invitation_lines(reply) == [], (guest.nick, reply)
            assert (uid in reply.sections) == (guest in (ala, cid)), (guest.nick, reply)
        assert bob.get(co="zaproszenieTak") == "err.noInvitation"
        assert dan.get(co="zaproszenieTak") == "err.noInvitation"
        again, _, _ = start_game(eve, dan)  # nobody is left busy answering a dropped invitation
        assert again > uid
        assert server.stop(signal.SIGTERM) == 0
    assert "Traceback" not in server.log(), server.log()
