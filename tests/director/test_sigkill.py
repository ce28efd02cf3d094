"""A swiss tournament run by a real `serve` process that is killed (SIGKILL) in the middle of its first
round: after the restart the same tables go on, nothing is paired twice, and the second round follows
the first as if nothing had happened."""

from __future__ import annotations

import json
import signal
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote, urlencode

from server.config import Settings
from tests.test_cli import run_cli
from tests.test_restart import Guest, Server

CUP = "Kill Cup"


def hosted(server: Server) -> dict:
    with urllib.request.urlopen(f"{server.base}/tournament/{quote(CUP)}", timeout=10) as response:
        return json.loads(response.read())


def wait_for(server: Server, done: Callable[[dict], bool], seconds: float = 30.0) -> dict:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        answer = hosted(server)
        if done(answer):
            return answer
        time.sleep(0.2)
    raise AssertionError(f"not reached in {seconds} s: {hosted(server)}")


def test_a_swiss_killed_mid_round_goes_on_with_the_same_tables(tmp_path: Path, settings: Settings) -> None:
    server = Server(tmp_path, settings.db_url)  # the suite's database: SQLite, or PostgreSQL in that half
    with server.running(migrate=True):
        made = run_cli("tournament-key", "--db", server.db_url, "add", "cup-bot")
        assert made.returncode == 0, made.stderr
        key = made.stdout.split()[-1]
        query = {
            "co": "createTournament",
            "key": key,
            "tourn": CUP,
            "kind": "swiss",
            "rounds": "2",
            "gameType": "1010stanF0.600.5",
            "start": str(int(time.time()) + 2),
            "sayHi": "0",
        }
        with urllib.request.urlopen(f"{server.base}/a.kropki?{urlencode(query)}", timeout=10) as response:
            assert response.read().decode() == "ok"
        players = [Guest(server, f"k{n}pw", f"*K{n}") for n in range(1, 5)]
        for player in players:
            player.login()
            assert player.get(co="joinTournament", tourn=CUP) == "ok"
        first = wait_for(server, lambda answer: len(answer["tables"]) == 2)
        by_nick = {player.nick: player for player in players}
        tables = [(entry["table"], entry["blue"], entry["red"]) for entry in first["tables"]]
        (done_uid, done_blue, done_red), (open_uid, open_blue, _) = tables
        by_nick[done_blue].move(done_uid, "cc")
        by_nick[done_red].ok(co="propose", table=str(done_uid), proposal="resign")
        by_nick[open_blue].move(open_uid, "dd")
        assert server.stop(signal.SIGKILL) == -signal.SIGKILL

    with server.running():
        after = hosted(server)
        assert [(entry["table"], entry["blue"], entry["red"]) for entry in after["tables"]] == tables
        assert after["hosted"]["round"] == 1 and after["hosted"]["state"] == "running"
        assert [entry["state"] for entry in after["tables"]] == ["finished", "playing"]
        for player in players:
            player.poll()  # the same ids: the sessions came back
        open_red = next(entry["red"] for entry in after["tables"] if entry["table"] == open_uid)
        by_nick[open_red].ok(co="propose", table=str(open_uid), proposal="resign")
        second = wait_for(
            server, lambda answer: answer["hosted"]["round"] == 2 and len(answer["tables"]) == 4
        )
        met = {frozenset((entry["blue"], entry["red"])) for entry in second["tables"]}
        assert len(met) == 4, "round 2 pairs players who have not met"
        assert server.stop(signal.SIGTERM) == 0
    assert "Traceback" not in server.log(), server.log()
