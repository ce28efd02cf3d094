"""The guest private lines setting (`c guestprivates`, kept with the account) and the moderators' closing
of many reports (`closemany`, `kropki-server report close`) on a real `serve` process whose storage
fails for real (its SQLite file on a small tmpfs filled up, or its PostgreSQL turned read-only): each is
refused clearly (`err.storage`, the stream's storage line, one line from the command), nothing of it is
half done, no 500, and each goes through once storage is back."""

from __future__ import annotations

import json
import time
from pathlib import Path

from server.hub.limits import STORAGE_REFUSED
from tests.conftest import NewDatabase
from tests.test_cli import run_cli
from tests.test_renamed_crash import auth, registered
from tests.test_restart import Guest, Server
from tests.test_storage_stop import failing_storage, readyz


def setting(player: Guest, command: str) -> list[str]:
    """The `aguestprivates` lines and the storage refusals (a server line) of the player's poll with
    `command`."""
    lines = player.poll(command).lines(0)
    return [line for line in lines if line.startswith("aguestprivates") or STORAGE_REFUSED in line]


def reported(reporter: Guest, whom: str) -> None:
    answer = reporter.get(co="report", whom=whom, reason="spam")
    assert answer.startswith("ok."), answer


def open_reports(moderator: Guest) -> list[int]:
    return [found["number"] for found in json.loads(moderator.get(co="moderate", what="reports"))["reports"]]


def until_ready(server: Server) -> None:
    deadline = time.monotonic() + 30
    while readyz(server)[0] != 200:
        assert time.monotonic() < deadline, server.log()
        time.sleep(0.2)


async def test_a_full_disk_refuses_the_setting_and_closing_many_reports_and_changes_nothing(
    tmp_path: Path, new_database: NewDatabase
) -> None:
    with failing_storage(tmp_path, new_database) as (server, breaker):
        with server.running(migrate=True):
            bob, mod = registered(server, "Bob"), registered(server, "Mod")
            made_moderator = run_cli("user", "set-role", "Mod", "moderator", "--db", server.db_url)
            assert made_moderator.returncode == 0, made_moderator.stderr
            mod.ok(co="usunGracza")
            assert auth(server, co="loguj", opisGracza="Mod", idGracza=mod.secret).startswith("ok.")
            ala, cid = Guest(server, "ala123", "*Ala"), Guest(server, "cid456", "*Cid")
            for player in (bob, mod, ala, cid):
                if player.nick.startswith("*"):
                    player.login()
                player.poll()
            reported(ala, "Bob")
            reported(cid, "Bob")
            assert setting(bob, "c1.guestprivates.off") == ["aguestprivates.off"]
            numbers = open_reports(mod)
            assert len(numbers) == 2

            await breaker.break_storage()
            assert ala.get(co="dodajWpis", table="0", newMsgs="anyone?") == "err.storage"
            assert [STORAGE_REFUSED in line for line in setting(bob, "c2.guestprivates.on")] == [True]
            assert setting(bob, "c3.guestprivates.") == ["aguestprivates.off"]
            closing = mod.get(co="moderate", what="closemany", against="Bob", action="ban", reason="spam")
            assert closing == "err.storage", closing
            by_cli = run_cli("report", "close", "--against", "Bob", "--action", "ban", "--db", server.db_url)
            assert by_cli.returncode == 1 and "Traceback" not in by_cli.stderr, by_cli.stderr
            assert by_cli.stderr.startswith("kropki-server: error: cannot use the database"), by_cli.stderr
            assert open_reports(mod) == numbers
            assert bob.poll().status == "ok"  # not banned: no sanction was made

            await breaker.mend()
            until_ready(server)
            assert open_reports(mod) == numbers
            assert setting(bob, "c4.guestprivates.on") == ["aguestprivates.on"]
            closing = mod.get(co="moderate", what="closemany", against="Bob", action="none")
            assert closing == "ok.2.0", closing
            assert open_reports(mod) == []
        log = server.log()
        assert "Traceback" not in log and "request failed" not in log, log
