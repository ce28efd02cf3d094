"""A renamed account's seat moving (server/hub/seating.py, `follow_rename`) attacked on a real `serve`
process: SIGKILL at the worst moment. After the restart the seat is the account's under its new nick
alone, the game is playable by it, and nobody else is seated (docs/operations.md, "Accounts (admins)")."""

from __future__ import annotations

import json
import signal
import sqlite3
import time
import urllib.request
from contextlib import closing
from pathlib import Path
from urllib.parse import urlencode

from tests.store.test_accounts import registered_id
from tests.test_cli import run_cli
from tests.test_restart import GAME, Guest, Server, moves_of, play, start_game, table_state


def auth(server: Server, **params: str) -> str:
    with urllib.request.urlopen(f"{server.base}/auth.py?{urlencode(params)}", timeout=10) as response:
        return response.read().decode()


def registered(server: Server, nick: str) -> Guest:
    """A registered player, as zagram's client logs in: `rejestruj` with the id made from a password."""
    player = Guest(server, registered_id(nick, "pw"), nick)
    assert auth(server, co="rejestruj", opisGracza=nick, idGracza=player.secret, email="v") == (
        "ok.zarejestrowalem."
    )
    return player


def journal(server: Server, uid: int) -> list[tuple[int, str, dict[str, str]]]:
    with closing(sqlite3.connect(server.db)) as database:
        rows = database.execute("SELECT seq, kind, data FROM journal WHERE uid = ? ORDER BY seq", (uid,))
        return [(seq, kind, json.loads(data)) for seq, kind, data in rows]


def until_journalled(server: Server, uid: int, kind: str) -> list[tuple[int, str, dict[str, str]]]:
    deadline = time.monotonic() + 10
    while True:
        entries = journal(server, uid)
        if any(entry_kind == kind for _, entry_kind, _ in entries):
            return entries
        assert time.monotonic() < deadline, f"no {kind!r} entry stored: {entries}"
        time.sleep(0.05)


def renamed_and_back(server: Server) -> tuple[Guest, Guest, int, int]:
    """Alice and Bob play, Bob logs out on move, an admin renames him Robert and he logs in again with the
    nick his id is made from: his seat moves to Robert. Returns (alice, robert, the table, moves played)."""
    alice, bob = registered(server, "Alice"), registered(server, "Bob")
    for player in (alice, bob):
        player.poll()
    uid, blue, red = start_game(alice, bob)
    played = 2 if blue is bob else 3  # Bob on move
    play(uid, blue, red, GAME[:played])
    bob.ok(co="usunGracza")
    renamed = run_cli("user", "rename", "Bob", "Robert", "--db", server.db_url)
    assert renamed.returncode == 0, renamed.stderr
    assert auth(server, co="loguj", opisGracza="Bob", idGracza=bob.secret).startswith("ok.zalogowanyNaSerwer")
    bob.nick = "Robert"
    return alice, bob, uid, played


def plays_on_as_robert(server: Server, alice: Guest, robert: Guest, uid: int, played: int) -> None:
    """After the restart: Robert sits at the game, on move, and plays; the lobby names Alice and Robert
    alone, and the record has every move."""
    reply = robert.poll()
    assert uid in reply.sections, (reply, server.log())
    robert.move(uid, GAME[played][1])
    alice.move(uid, GAME[played + 1][1])
    eve = Guest(server, "eve789", "*Eve")
    eve.login()
    (described,) = eve.poll().lines(0, f"d{uid}.")
    assert sorted(described.split(".")[-2:]) == ["Alice", "Robert"], described
    (record,) = [line for line in table_state(eve, uid) if line.startswith("sr")]
    assert moves_of(record) == GAME[: played + 2]


def test_a_kill_right_after_the_renamed_entry_is_stored_leaves_the_seat_robert_s(tmp_path: Path) -> None:
    """The journal is cut after the `renamed` entry, as a kill right after its commit leaves it. Before,
    a `seat` entry followed it, which the writer could commit apart (its thread takes a batch while the
    loop adds to the queue, and a batch ends at 500 jobs): cut there, the seat was Robert's nick's but
    owned by the account's old key, and Robert was refused `notYourSeat`."""
    server = Server(tmp_path)
    with server.running(migrate=True):
        alice, robert, uid, played = renamed_and_back(server)
        entries = until_journalled(server, uid, "renamed")
        assert server.stop(signal.SIGKILL) == -signal.SIGKILL
    [renamed_at] = [seq for seq, kind, _ in entries if kind == "renamed"]
    with closing(sqlite3.connect(server.db)) as database, database:
        database.execute("DELETE FROM journal WHERE uid = ? AND seq > ?", (uid, renamed_at))

    with server.running():
        assert auth(server, co="loguj", opisGracza="Bob", idGracza=robert.secret).startswith(
            "ok.zalogowanyNaSerwer"
        )
        plays_on_as_robert(server, alice, robert, uid, played)
        assert server.stop(signal.SIGTERM) == 0
    assert "Traceback" not in server.log(), server.log()
