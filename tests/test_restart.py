"""Restarts of a real `serve` process in the middle of a game: a clean stop (SIGTERM) and a crash
(SIGKILL). The same clients poll on with their old ids and message numbers and finish the same game;
nothing the server acknowledged is lost, and the sessions, the clocks, the chat and the archive come back
as they were."""

from __future__ import annotations

import asyncio
import http.client
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlencode

import pytest

from server.config import Settings
from server.store.idhash import MIN_COST
from tests.ports import free_port
from tests.store.test_server_lock import live_rows, lock_file
from tests.test_cli import REPO_ROOT, run_cli, wait_for_healthz
from tests.web.zagram import Reply, parse_reply

GAME_TYPE = "0808stanF0.300.0"  # 8x8, free, 300 s each and no increment: nobody runs out of time
START_SECONDS = 300
# Blue on the top rows, red on the bottom rows, dots two points apart: no move can enclose anything.
GAME = [
    ("B", "aa"), ("W", "ah"), ("B", "ca"), ("W", "ch"), ("B", "ea"), ("W", "eh"), ("B", "ga"), ("W", "gh"),
    ("B", "ac"), ("W", "af"), ("B", "cc"), ("W", "cf"), ("B", "ec"), ("W", "ef"), ("B", "gc"), ("W", "gf"),
]  # fmt: skip
HALF = 8
PORT_TRIES = 3  # starts of a server whose port another process took meanwhile (Server.running)
NODE = re.compile(r";([BW])\[([^\]]*)\]")


class Server:
    """`python -m server serve` on one port and one SQLite file, started and stopped as often as asked.

    The log goes to a file (a pipe nobody reads would fill up and block the server)."""

    def __init__(
        self, tmp_path: Path, db_url: str | None = None, *, ai_workers: int = 0, flags: Sequence[str] = ()
    ) -> None:
        self.tmp_path = tmp_path
        self.ai_workers = ai_workers  # no AI players unless asked: these tests count lobby events
        self.flags = list(flags)  # more of serve's flags
        self.db = tmp_path / "data" / "kropki.sqlite3"
        self.db_url = db_url or f"sqlite+aiosqlite:///{self.db}"
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.runs = 0
        self.process: subprocess.Popen[str] | None = None
        self.log_path = tmp_path / "server-0.log"

    @contextmanager
    def running(self, *, migrate: bool = False) -> Iterator[Server]:
        """Started and listening. A first start whose port another process took since free_port chose it
        (make test's parts pick ports side by side) starts again on another port; a restart keeps
        its port, which its clients know."""
        for _ in range(PORT_TRIES):
            self._start(migrate)
            if not self._port_was_taken() or self.runs > 1:
                break
            self.port = free_port()
            self.base = f"http://127.0.0.1:{self.port}"
        try:
            try:
                wait_for_healthz(f"{self.base}/healthz", self.process)
            except AssertionError as failure:
                raise AssertionError(f"{failure}\n{self.log()}") from None
            yield self
        finally:
            assert self.process is not None
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()

    def _start(self, migrate: bool) -> None:
        self.runs += 1
        self.log_path = self.tmp_path / f"server-{self.runs}.log"
        env = {key: value for key, value in os.environ.items() if not key.startswith("KROPKI_")}
        command = [sys.executable, "-m", "server", "serve", "--port", str(self.port)]
        command += ["--ai-workers", str(self.ai_workers), "--id-hash-cost", str(MIN_COST)]  # as conftest's
        command += ["--db", self.db_url] + (["--migrate"] if migrate else [])
        command += self.flags
        with self.log_path.open("w") as log:
            self.process = subprocess.Popen(
                command, cwd=REPO_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, text=True
            )

    def _port_was_taken(self) -> bool:
        """Waits until the server's own log says it listens on its port (False), or it stopped: True if
        because another process had the port. A /healthz answer alone does not tell: the process that
        took the port answered it, and a browser test then ran against that process until it went away
        (connection refused, in make test's browser part on 2026-11-30)."""
        assert self.process is not None
        deadline = time.monotonic() + 30
        while f"listening on {self.base} " not in self.log():
            if self.process.poll() is not None:
                return "the address is in use" in self.log()
            assert time.monotonic() < deadline, f"the server did not listen within 30 s:\n{self.log()}"
            time.sleep(0.05)
        return False

    def stop(self, sig: signal.Signals) -> int:
        assert self.process is not None
        self.process.send_signal(sig)
        return self.process.wait(timeout=15)

    def log(self) -> str:
        return self.log_path.read_text()


class Guest:
    """A zagram client speaking the old-style requests, which answer once the action is on disk."""

    def __init__(self, server: Server, secret: str, nick: str) -> None:
        self.server = server
        self.secret = secret
        self.nick = nick
        self.seen = 0

    def get(self, **params: str) -> str:
        query = urlencode({**params, "idGracza": self.secret})
        with urllib.request.urlopen(f"{self.server.base}/a.kropki?{query}", timeout=10) as response:
            assert response.status == 200
            return response.read().decode()

    def login(self) -> None:
        assert self.get(co="guestLogin", opis=self.nick, lang="en") == ""

    def poll(self, commands: str = "x") -> Reply:
        """A poll as a client makes it, with the last message number it has read."""
        reply = parse_reply(self.get(co="getMsg", msgNo=str(self.seen), msgFromClient=commands))
        self.seen = reply.last
        return reply

    def ok(self, **params: str) -> None:
        answer = self.get(**params)
        assert answer == "", f"{self.nick} {params}: {answer}"

    def move(self, table: int, where: str) -> None:
        self.ok(co="graczStawiaKropke", table=str(table), where=where)


def sgf_text(server: Server, number: int) -> str:
    with urllib.request.urlopen(f"{server.base}/sgf/{number}", timeout=10) as response:
        assert response.status == 200
        assert response.headers.get_content_type() == "application/x-go-sgf"
        return response.read().decode()


def moves_of(record: str) -> list[tuple[str, str]]:
    """The (colour, point) of every move in an `sr` line or an SGF record."""
    return NODE.findall(record)


def clocks(lines: list[str]) -> tuple[int, int, int]:
    """The newest `f` line as (side on move, blue's seconds, red's seconds)."""
    flags = [line for line in lines if line.startswith("f")]
    assert flags, lines
    side, times = flags[-1][1:].split("_")
    # as MultiPoints' handleGameFlags: `timeLimitsAsString.split("\\.")[0]` and `[1]`, the rest ignored
    blue, red = times.split(".")[:2]
    return int(side), int(blue), int(red)


def table_state(spectator: Guest, table: int) -> list[str]:
    """The table's full state as a newcomer gets it: the spectator leaves, sits down again and polls."""
    spectator.ok(co="zmienStol", newTable="0")
    spectator.ok(co="zmienStol", newTable=str(table))
    return spectator.poll().lines(table)


def start_game(ala: Guest, bob: Guest) -> tuple[int, Guest, Guest]:
    """Ala invites Bob, Bob accepts; returns (table, blue, red) as the `d` line says."""
    ala.ok(co="zapraszam", whom=bob.nick, gameType=GAME_TYPE)
    bob.ok(co="zaproszenieTak")
    reply = bob.poll()
    ala.poll()
    tables = [uid for uid in reply.sections if uid != 0]
    assert len(tables) == 1, reply
    uid = tables[0]
    (description,) = reply.lines(uid, f"d{uid}.")
    blue_nick, red_nick = description.split(".")[-2:]
    assert {blue_nick, red_nick} == {ala.nick, bob.nick}
    return (uid, ala, bob) if blue_nick == ala.nick else (uid, bob, ala)


def play(uid: int, blue: Guest, red: Guest, nodes: list[tuple[str, str]]) -> None:
    for colour, point in nodes:
        (blue if colour == "B" else red).move(uid, point)


def archive_number(guest: Guest, uid: int, result: str) -> int:
    """Poll until the lobby's `x` line for the table carries the result and the archive number."""
    deadline = time.monotonic() + 10
    while True:
        for line in guest.poll().lines(0, f"x{uid}."):
            _, _, shown, number = line.split(".")
            if shown == result and number:
                return int(number)
        assert time.monotonic() < deadline, f"game at table {uid} was not archived"
        time.sleep(0.1)


def half_a_game(server: Server) -> tuple[Guest, int, Guest, Guest]:
    """Ala and Bob start a game at table 1 and play its first half; Eve is there to watch."""
    ala, bob, eve = (
        Guest(server, *who) for who in (("ala123", "*Ala"), ("bob456", "*Bob"), ("eve789", "*Eve"))
    )
    for guest in (ala, bob, eve):
        guest.login()
        guest.poll()
    uid, blue, red = start_game(ala, bob)
    assert uid == 1, "table numbers start at 1 in a fresh database"
    play(uid, blue, red, GAME[:HALF])
    ala.ok(co="dodajWpis", table=str(uid), newMsgs="hello before the restart")
    return eve, uid, blue, red


def finish_and_check_archive(server: Server, uid: int, blue: Guest, red: Guest, played: int) -> None:
    """The same clients play on, blue resigns, and the archive has every move of both runs."""
    play(uid, blue, red, GAME[played:])
    blue.ok(co="propose", table=str(uid), proposal="resign")
    number = archive_number(red, uid, "W+R")
    assert archive_number(blue, uid, "W+R") == number
    sgf = sgf_text(server, number)
    assert moves_of(sgf) == GAME
    assert "RE[W+R]" in sgf
    assert f"PB[{blue.nick}]" in sgf and f"PW[{red.nick}]" in sgf


def seated_back(player: Guest, uid: int) -> tuple[Reply, list[tuple[str, str]]]:
    """The player's first poll after the restart, with its old id and msgNo: still at the table, with
    the table's whole state."""
    reply = player.poll()
    assert reply.status == "ok"
    assert uid in reply.sections, f"{player.nick} is seated back at table {uid}: {reply}"
    (record,) = reply.lines(uid, "sr")
    return reply, moves_of(record)


def test_a_server_whose_port_another_process_took_starts_on_another_one(tmp_path: Path) -> None:
    """The harness itself: with make test's parts side by side, another process can take the port
    free_port chose before the server binds it; the server then stops, and the test must not go on
    against whatever holds the port (a browser test met connection refused that way)."""
    server = Server(tmp_path)
    taken = server.port
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", taken))
        squatter.listen()
        with server.running(migrate=True):
            assert server.port != taken and "the address is in use" in (tmp_path / "server-1.log").read_text()
            with urllib.request.urlopen(f"{server.base}/healthz", timeout=5) as answer:
                assert answer.status == 200


def test_sigterm_mid_game_then_the_same_clients_finish_the_same_game(tmp_path: Path) -> None:
    server = Server(tmp_path)
    with server.running(migrate=True):
        eve, uid, blue, red = half_a_game(server)
        # Gifts make both clocks differ from the starting 300 s, so a reset would show.
        red.ok(co="dodajeCzas", stol=str(uid), ile="200")
        blue.ok(co="dodajeCzas", stol=str(uid), ile="100")
        time.sleep(1.5)  # blue's clock runs: it must come back as it was at the stop, not as at the gift
        state = table_state(eve, uid)
        before = clocks(state)
        (record,) = [line for line in state if line.startswith("sr")]
        chat = [line for line in state if line.startswith("cr")]
        assert any(line.endswith(".hello before the restart") for line in chat), chat
        assert before[0] == 1
        assert START_SECONDS + 200 - 10 < before[1] < START_SECONDS + 200 - 1, (
            "blue is on move: their clock runs"
        )
        assert START_SECONDS + 100 - 2 <= before[2] <= START_SECONDS + 100
        assert server.stop(signal.SIGTERM) == 0
    assert "Traceback" not in server.log(), server.log()
    assert "store closed" in server.log(), server.log()

    with server.running():
        assert f"table restored uid={uid} moves={HALF} result=None" in server.log()
        for player in (blue, red):
            reply, nodes = seated_back(player, uid)
            assert nodes == GAME[:HALF]
            assert reply.lines(uid, "sr") == [record], "the same record, with each move's time left"
            assert reply.lines(uid, "cr")[: len(chat)] == chat, "every chat line is back, with its time and n"
            restart_line = reply.lines(uid, "cr")[len(chat) :]
            assert len(restart_line) == 1, reply.lines(uid, "cr")
            assert re.fullmatch(r"cr\d+_\d+\.\.restart\.The server is restarting; .*", restart_line[0])
            assert clocks(reply.lines(uid))[0] == 1
        after = clocks(table_state(eve, uid))
        assert after[0] == 1
        assert abs(after[2] - before[2]) <= 1, (before, after, "red was not on move: nothing gained or lost")
        assert before[1] - 2 <= after[1] <= before[1], (before, after, "blue's clock as it was at the stop")
        time.sleep(1.2)
        assert clocks(table_state(eve, uid)) == after, "the player on move has a grace after the restart"
        finish_and_check_archive(server, uid, blue, red, HALF)
        assert server.stop(signal.SIGTERM) == 0
    assert "Traceback" not in server.log(), server.log()


def test_sigkill_mid_game_loses_no_acknowledged_move(tmp_path: Path) -> None:
    server = Server(tmp_path)
    with server.running(migrate=True):
        eve, uid, blue, red = half_a_game(server)
        play(uid, blue, red, GAME[HALF : HALF + 2])  # the last moves before the crash, both acknowledged
        state = table_state(eve, uid)
        before = clocks(state)
        chat = [line for line in state if line.startswith("cr")]
        assert before[0] == 1
        # One more move is on its way when the server dies: it may or may not have been taken.
        answers: list[str | Exception] = []

        def send() -> None:
            try:
                answers.append(blue.get(co="graczStawiaKropke", table=str(uid), where=GAME[HALF + 2][1]))
            except (OSError, http.client.HTTPException) as error:  # the connection dies with the server
                answers.append(error)

        sender = threading.Thread(target=send)
        sender.start()
        # A few ms: depending on timing the move is then lost, or taken but not answered, or answered;
        # all three happen, and the checks below hold for each.
        time.sleep(0.004)
        assert server.stop(signal.SIGKILL) == -signal.SIGKILL
        sender.join(timeout=15)
        assert not sender.is_alive()
    assert len(answers) == 1 and (answers[0] == "" or isinstance(answers[0], Exception)), answers
    acknowledged = answers == [""]
    assert "Traceback" not in server.log(), server.log()

    with server.running():
        reply, nodes = seated_back(blue, uid)
        played = len(nodes)
        assert nodes == GAME[:played], "the moves come back in order, none changed"
        assert played == HALF + 3 if acknowledged else played in (HALF + 2, HALF + 3), (acknowledged, nodes)
        assert reply.lines(uid, "cr") == chat, "every chat line is back, and nothing said at a crash"
        red_reply, red_nodes = seated_back(red, uid)
        assert red_nodes == nodes and red_reply.lines(uid, "cr") == chat
        after = clocks(table_state(eve, uid))
        assert after[0] == (1 if played == HALF + 2 else 2)
        # The clocks come back as journalled with the last move: the time since then is not charged.
        assert before[1] - 1 <= after[1] <= before[1] + 1 and before[2] - 1 <= after[2] <= before[2] + 1
        finish_and_check_archive(server, uid, blue, red, played)
        assert server.stop(signal.SIGTERM) == 0
    assert "Traceback" not in server.log(), server.log()


def test_sigkill_in_a_team_game_keeps_its_turn_order_and_who_left_the_game(tmp_path: Path) -> None:
    """docs/teams.md: two against two, *Cid leaves, the server is killed; the same clients come back to
    the same turn, *Cid is out for good, and the archive names both teams."""
    server = Server(tmp_path)
    with server.running(migrate=True):
        ala, bob, cid, dan = (
            Guest(server, *who)
            for who in (("ala1", "*Ala"), ("bob1", "*Bob"), ("cid1", "*Cid"), ("dan1", "*Dan"))
        )
        for guest in (ala, bob, cid, dan):
            guest.login()
            guest.poll()
        ala.ok(co="zapraszam", whom="*Bob,*Cid,*Dan", gameType="0808s0..a.F.a.300.0..")  # *Ala's team blue
        for guest in (bob, cid, dan):
            guest.ok(co="zaproszenieTak")
        uid = 1
        assert dan.poll().lines(uid, f"d{uid}.")[0].endswith(".*Ala,*Cid.*Bob,*Dan")
        for guest, point in ((ala, "aa"), (bob, "ah"), (cid, "ca"), (dan, "ch"), (ala, "ea")):
            guest.move(uid, point)
        cid.ok(co="zmienStol", newTable="0")  # out of the game: *Ala plays every move of team one now
        bob.move(uid, "eh")  # side 2; next, side 1 (not *Cid's 3)
        assert clocks(dan.poll().lines(uid))[0] == 1
        assert server.stop(signal.SIGKILL) == -signal.SIGKILL

    with server.running():
        reply, nodes = seated_back(dan, uid)
        assert nodes == [("B", "aa"), ("W", "ah"), ("B", "ca"), ("W", "ch"), ("B", "ea"), ("W", "eh")]
        assert reply.lines(uid, f"x{uid}.") == [f"x{uid}.1.-."]
        assert uid not in cid.poll().sections  # not seated back: out of the game
        assert any(line.endswith("left3.*Cid left the game.") for line in table_state(cid, uid))  # may watch
        assert "notPlayer" in cid.get(co="graczStawiaKropke", table=str(uid), where="ga")
        assert "notYourTurn" in dan.get(co="graczStawiaKropke", table=str(uid), where="gh")
        for guest, point in ((ala, "ga"), (dan, "gh")):
            guest.move(uid, point)
        for guest in (ala,):
            guest.ok(co="propose", table=str(uid), proposal="resign")  # the last of team one
        sgf = sgf_text(server, archive_number(bob, uid, "W+R"))
        assert "PB[*Ala, *Cid]PW[*Bob, *Dan]" in sgf and len(moves_of(sgf)) == 8
        assert server.stop(signal.SIGTERM) == 0
    assert "Traceback" not in server.log(), server.log()


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "sigkill"])
def test_a_finished_game_stays_archived_and_numbers_are_not_reused(
    tmp_path: Path, stop: signal.Signals
) -> None:
    server = Server(tmp_path)
    with server.running(migrate=True):
        ala, bob = Guest(server, "ala123", "*Ala"), Guest(server, "bob456", "*Bob")
        for guest in (ala, bob):
            guest.login()
            guest.poll()
        uid, blue, red = start_game(ala, bob)
        assert uid == 1
        play(uid, blue, red, GAME[:4])
        blue.ok(co="propose", table=str(uid), proposal="resign")
        number = archive_number(blue, uid, "W+R")
        sgf = sgf_text(server, number)
        assert moves_of(sgf) == GAME[:4] and "RE[W+R]" in sgf
        assert server.stop(stop) == (0 if stop == signal.SIGTERM else -signal.SIGKILL)

    with server.running():
        assert sgf_text(server, number) == sgf, "the archive is on disk"
        reply = ala.poll()
        assert list(reply.sections) == [0, uid], "the players are still at the table of the game that is over"
        assert any(re.fullmatch(rf"x{uid}\.\d\.W\+R\.{number}", line) for line in reply.lines(0, "x")), reply
        bob.poll()
        for guest in (ala, bob):
            guest.ok(co="zmienStol", newTable="0")
            guest.poll()
        second, blue, red = start_game(ala, bob)
        assert second == uid + 1, "a table number is never used twice"
        play(second, blue, red, GAME[:2])
        red.ok(co="propose", table=str(second), proposal="resign")
        assert archive_number(red, second, "B+R") == number + 1
        assert moves_of(sgf_text(server, number + 1)) == GAME[:2]
        assert sgf_text(server, number) == sgf
        assert server.stop(signal.SIGTERM) == 0
    assert "Traceback" not in server.log(), server.log()


def database_bytes(server: Server) -> bytes:
    """The SQLite file with its WAL and shared memory: free pages and uncheckpointed writes included."""
    return b"".join(path.read_bytes() for path in server.db.parent.glob(server.db.name + "*"))


def said(lines: list[str]) -> list[str]:
    """The text of chat lines."""
    return [line.split(".", 3)[3] for line in lines]


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "sigkill"])
def test_clients_poll_on_with_their_old_ids_and_msg_nos(tmp_path: Path, stop: signal.Signals) -> None:
    server = Server(tmp_path)
    with server.running(migrate=True):
        ala, bob, eve = (
            Guest(server, *who) for who in (("Qx7alA_1", "*Ala"), ("Zq9boB.2", "*Bob"), ("Ev3.eve_", "*Eve"))
        )
        for guest in (ala, bob, eve):
            guest.login()
            guest.poll()
        uid, blue, red = start_game(ala, bob)
        play(uid, blue, red, GAME[:4])
        eve.ok(co="zmienStol", newTable=str(uid))  # Eve follows the game
        eve.ok(co="changeLang", na="pl")
        eve.poll()
        reader = Guest(server, "1234567", "")  # roboCup's anonymous reader: an id that never logged in
        assert reader.poll().status == "sd"
        # MultiPoints numbers its commands and sends again every one above the last k it read
        assert ala.poll(f"c1.{uid}.first").processed == 1
        assert ala.poll(f"c2.{uid}.second").processed == 2  # taken, but say its reply was lost
        bob.ok(co="dodajWpis", table="0", newMsgs="said before the stop")
        assert server.stop(stop) == (0 if stop == signal.SIGTERM else -signal.SIGKILL)
    content = database_bytes(server)
    assert b"*Eve" in content and not [g.secret for g in (ala, bob, eve) if g.secret.encode() in content]

    with server.running():
        assert "sessions restored restored=3 ended=0" in server.log()
        reply = ala.poll(f"c2.{uid}.second")  # sent again with her old msgNo
        assert (reply.status, reply.processed) == ("ok", 2)
        assert [moves_of(line) for line in reply.lines(uid, "sr")] == [GAME[:4]], reply
        restart = ["The server is restarting; games go on when it is back."] if stop == signal.SIGTERM else []
        # she had both lines before the stop: the whole state does not show them to her again
        assert said(reply.lines(uid, "cr")) == restart
        assert reply.lines(0, "pr") == ["pr*Ala.*Bob.*Eve"] and "i*Ala..F.en" in reply.lines(0, "i")
        eve_reply = eve.poll()
        assert eve_reply.status == "ok" and eve_reply.lines(uid, "sr"), "Eve still follows the game"
        assert "i*Eve..F.pl" in eve_reply.lines(0, "i")
        bob_reply, nodes = seated_back(bob, uid)
        assert nodes == GAME[:4]
        assert said(bob_reply.lines(uid, "cr")) == ["first", "second", *restart], (
            "the resent line is said once"
        )
        play(uid, blue, red, GAME[4:6])  # the next moves, with the old ids
        for player in (blue, red):
            assert [moves_of(line) for line in player.poll().lines(uid, "sa")] == [[GAME[4]], [GAME[5]]]

        lobby = reader.poll()  # its msgNo from before the stop: the whole lobby, not a gap
        assert lobby.status == "sd" and "said before the stop" in said(lobby.lines(0, "cr"))
        bob.ok(co="dodajWpis", table="0", newMsgs="!register")
        assert said(reader.poll().lines(0, "ca")) == ["!register"], "then the stream goes on"

        eve.ok(co="usunGracza")
        assert eve.poll().status == "sd", "logging out still ends a session"
        assert server.stop(signal.SIGTERM) == 0
    assert "Traceback" not in server.log(), server.log()
    content = database_bytes(server)
    assert b"*Ala" in content and not [g.secret for g in (ala, bob, eve) if g.secret.encode() in content]


def state_and_parent(stat: Path) -> tuple[str, int] | None:
    """A process's state letter and parent from /proc/<pid>/stat; None when it is gone."""
    try:
        fields = stat.read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return fields[0], int(fields[1])


def running_children(pid: int) -> list[int]:
    """The processes that `pid` started and that still run (zombies waiting to be reaped do not)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        known = state_and_parent(stat)
        if known is not None and known[1] == pid and known[0] != "Z":
            found.append(int(stat.parent.name))
    return found


def still_running(pid: int) -> bool:
    known = state_and_parent(Path(f"/proc/{pid}/stat"))
    return known is not None and known[0] != "Z"


def test_a_killed_server_leaves_no_search_worker_behind(tmp_path: Path) -> None:
    server = Server(tmp_path, ai_workers=1)
    with server.running(migrate=True):
        ala = Guest(server, "ala123", "*Ala")
        ala.login()
        ala.ok(co="zapraszam", whom="AI easy", gameType="0505s0..a.A.a.60.2..")  # the table opens at once
        uid = next(uid for uid in ala.poll().sections if uid != 0)
        ala.move(uid, "cc")
        deadline = time.monotonic() + 30
        while not any(";W[" in line for line in ala.poll().lines(uid, "sa")):  # the computer answered
            assert time.monotonic() < deadline, "the computer did not move"
            time.sleep(0.2)
        assert server.process is not None
        workers = running_children(server.process.pid)
        assert workers, "the search runs in a worker process"
        assert server.stop(signal.SIGKILL) == -signal.SIGKILL

    deadline = time.monotonic() + 10
    while left := [pid for pid in workers if still_running(pid)]:
        assert time.monotonic() < deadline, f"processes left behind by the killed server: {left}"
        time.sleep(0.2)


def test_a_second_server_is_refused_until_the_first_is_killed(tmp_path: Path, settings: Settings) -> None:
    """Two servers on one database would hand out the same table numbers, and the second's stop would
    put "restarting" lines in the first one's journal: the second is refused at start, writing nothing,
    with a line naming the first; the lock of a killed server does not block the next start."""
    for folder in ("first", "next"):
        (tmp_path / folder).mkdir()
    url, lock = settings.db_url, lock_file(settings.db_url)
    server = Server(tmp_path / "first", url)
    with server.running():
        assert server.process is not None
        ala = Guest(server, "ala123", "*Ala")
        ala.login()
        ala.ok(co="dodajWpis", table="0", newMsgs="said before")
        ala.poll()
        journal = asyncio.run(live_rows(url))["journal"]
        holder = lock.read_text() if lock else None

        refused = run_cli("serve", "--port", str(free_port()), "--db", url)

        assert refused.returncode == 1
        (line,) = refused.stderr.splitlines()
        named = f"pid {server.process.pid} on host {socket.gethostname()}, port {server.port}"
        assert re.fullmatch(
            rf"kropki-server: error: another kropki-server is serving this database: {re.escape(named)}, "
            r"since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(lock: .+\)",
            line,
        ), line
        assert line.endswith(f"(lock: {lock})") if lock else "(lock: PostgreSQL advisory lock " in line
        assert asyncio.run(live_rows(url))["journal"] == journal
        assert lock is None or lock.read_text() == holder
        assert ala.poll().status == "ok", "the first server serves on"
        assert server.stop(signal.SIGKILL) == -signal.SIGKILL

    after = Server(tmp_path / "next", url)
    with after.running():
        assert after.process is not None
        assert lock is None or lock.read_text().startswith(f"pid {after.process.pid} on host ")
        bob = Guest(after, "bob456", "*Bob")
        bob.login()
        assert said(bob.poll().lines(0, "cr")) == ["said before"], "no line from the refused server"
        assert after.stop(signal.SIGTERM) == 0
