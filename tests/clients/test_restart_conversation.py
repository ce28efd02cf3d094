"""MultiPoints and roboCup, as ported in tests/clients, through a crash of a real server process: an
organiser's two-cross tournament table, two MultiPoints players and a MultiPoints spectator, a SIGKILL
in the middle of the game, and the same clients carrying on after the restart without logging in."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlencode

from tests.clients.multipoints import MultiPoints, encode
from tests.clients.robocup import RoboCupReader, game_settings, set_up_table_query
from tests.test_cli import REPO_ROOT
from tests.test_restart import Server

TOURNAMENT = "robocup restart cup"


def get(server: Server, path_and_query: str) -> str:
    with urllib.request.urlopen(server.base + path_and_query, timeout=10) as response:
        assert response.status == 200
        return response.read().decode()


def poll(server: Server, mp: MultiPoints) -> None:
    mp.handle_text(get(server, mp.url()))
    assert not mp.failures and not mp.disposed, (mp.failures, mp.raw)


def read(server: Server, reader: RoboCupReader) -> None:
    reader.handle_response(get(server, "/a.kropki?" + urlencode(reader.query())))


def live_dots(server: Server, uid: int) -> dict[tuple[int, int], bool]:
    """The table's dots from its live record (`/table/<n>.sgf`), numbered as MultiPoints numbers them."""
    record = get(server, f"/table/{uid}.sgf")
    dots: dict[tuple[int, int], bool] = {}
    for prop, values in _properties(record):
        if prop in ("AB", "AW", "B", "W"):
            for value in values:
                dots[(ord(value[0]) - 96, ord(value[1]) - 96)] = prop in ("AW", "W")
    return dots


def _properties(record: str) -> list[tuple[str, list[str]]]:
    return [
        (name, re.findall(r"\[([^\]]*)\]", values))
        for name, values in re.findall(r"([A-Z]+)((?:\[[^\]]*\])+)", record)
    ]


def key_for(server: Server) -> str:
    made = subprocess.run(
        [sys.executable, "-m", "server", "tournament-key", "--db", server.db_url, "add", "robocup"]
        + ["--tournament", TOURNAMENT],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return made.stdout.strip()


def test_multipoints_and_robocup_carry_on_through_a_crash_mid_game(tmp_path: Path) -> None:
    server = Server(tmp_path)
    ala, bob, eve = (
        MultiPoints("*Ala", "101010"),
        MultiPoints("*Bob", "202020"),
        MultiPoints("*Eve", "303030"),
    )
    reader = RoboCupReader()
    with server.running(migrate=True):
        key = key_for(server)
        for mp in (ala, bob, eve):
            assert (
                get(server, f"/a.kropki?co=guestLogin&idGracza={mp.secret}&opis={encode(mp.my_name)}&lang=ru")
                == ""
            )
            poll(server, mp)
        read(server, reader)
        query = set_up_table_query(key, "*Ala", "*Bob", game_settings(), TOURNAMENT, 1)
        answer = get(server, "/a.kropki?" + urlencode(query))
        assert answer.startswith("ok."), answer
        uid = answer.split(".")[1]
        for mp in (ala, bob):
            poll(server, mp)
        eve.subscribe(uid)
        poll(server, eve)
        for mp, x, y in [(ala, 2, 2), (bob, 24, 24), (ala, 2, 3)]:
            mp.make_move(uid, x, y)
            for each in (ala, bob, eve):
                poll(server, each)
        ala.send_chat("0", "before the crash")
        bob.send_chat(uid, "good luck")
        for each in (ala, bob, eve):
            poll(server, each)
        read(server, reader)
        before = live_dots(server, int(uid))
        assert len(before) == 8 + 3, "two crosses and three moves"
        assert server.stop(signal.SIGKILL) == -signal.SIGKILL

    with server.running():
        for mp in (ala, bob, eve):  # no new login: the same ids and message numbers
            poll(server, mp)
            poll(server, mp)
            assert mp.tabs[uid].dots == before, mp.my_name
        for mp in (ala, bob, eve):  # MultiPoints shows a history line like a new one: none comes twice
            assert mp.lobby_chat.count(("*Ala", "before the crash")) == 1, mp.my_name
            assert [text for _, text, _ in mp.tabs[uid].chat].count("good luck") == 1, mp.my_name
        bob.make_move(uid, 24, 23)
        for mp in (bob, ala, eve):
            poll(server, mp)
        after = live_dots(server, int(uid))
        assert after[(24, 23)] is True
        for mp in (ala, bob, eve):
            assert mp.tabs[uid].dots == after, mp.my_name
        bob.propose(uid, "resign")
        poll(server, bob)
        deadline = time.monotonic() + 10
        while not reader.results and time.monotonic() < deadline:  # the x line comes once it is archived
            read(server, reader)
            time.sleep(0.05)
        read(server, reader)
        assert reader.results == [("won", "*Ala", "*Bob")]
        assert reader.warnings == []
        assert server.stop(signal.SIGTERM) == 0
    assert "Traceback" not in server.log()
