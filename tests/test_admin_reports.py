"""The admin's `report list` and `report close` on the database (server/adminreports.py), as an admin
runs them: one report, a list, all against a player or from a reporter, each closed with the trail a
moderator's closing leaves; bad input refused with one line, changing nothing."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from server.cli import main
from server.store.idhash import MIN_COST
from server.store.reports import NewReport
from server.store.store import Store
from server.web.closing import MOST_AT_ONCE


async def _reports(url: str) -> None:
    """1 to 3 against *Troll (by Ala, Bob, Cid), 4 against Bob by Ala."""
    store = await Store.open(url, id_hash_cost=MIN_COST)
    try:
        for by, whom in (("Ala", "*Troll"), ("Bob", "*Troll"), ("Cid", "*troll"), ("Ala", "Bob")):
            await store.reports.make(NewReport(by, by.lower(), "", whom, "", "", "", "spam", []))
    finally:
        await store.close()


@pytest.fixture
def run(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    url = f"sqlite+aiosqlite:///{tmp_path}/k.sqlite3"
    assert main(["migrate", "--db", url]) == 0
    asyncio.run(_reports(url))
    capsys.readouterr()

    def run(*args: str, command: str = "report") -> tuple[int, str, str]:
        status = main([command, "--db", url, *args])
        out, err = capsys.readouterr()
        return status, out, err

    return run


TROLLS = [(1, "*Troll"), (2, "*Troll"), (3, "*troll")]


def open_numbers(listed: str) -> list[str]:
    return [line.split("\t")[0] for line in listed.splitlines()]


def test_reports_are_listed_and_closed_one_by_number_then_many_against_a_player(run) -> None:
    status, listed, _ = run("list")
    assert status == 0 and open_numbers(listed) == ["1", "2", "3", "4"]
    assert listed.splitlines()[0].split("\t")[2:] == ["Ala", "*Troll", "a player", "spam"]

    assert run("close", "4", "--note", "banter")[:2] == (0, "1 report(s) closed (none); 0 more open\n")
    closed = run("close", "--against", "*Troll", "--action", "mute", "--for", "1h", "--reason", "spam")
    assert closed[:2] == (0, "3 report(s) closed (mute); 0 more open\n")
    assert run("list")[1] == "no open reports\n"

    log = [line.split("\t") for line in run("log", command="moderation")[1].splitlines()]
    assert [row[1:5] for row in log] == [
        ["admin (CLI)", "report", "Bob", "report 4 (a player): none"],
        ["admin (CLI)", "mute", "*troll", log[1][4]],  # the newest report names it so
        *[["admin (CLI)", "report", nick, f"report {n} (a player): mute"] for n, nick in TROLLS],
    ]
    assert log[0][5] == "banter" and log[1][5] == "spam"


def test_bad_closings_are_one_line_and_close_nothing(run) -> None:
    too_many = [str(number) for number in range(1, MOST_AT_ONCE + 2)]
    refused = [
        run("close"),
        run("close", "1", "--against", "*Troll"),
        run("close", "1", "99"),
        run("close", *too_many),
        run("close", "1", "4", "--action", "ban"),
        run("close", "--from", "*Nobody"),
        run("close", "--against", "a.b"),
        run("close", "1", "--for", "2 hours", "--action", "mute"),
    ]
    assert [status for status, _, _ in refused] == [1] * len(refused)
    assert all(err.startswith("kropki-server: error: ") and err.count("\n") == 1 for _, _, err in refused)
    assert "99" in refused[2][2] and str(MOST_AT_ONCE) in refused[3][2]
    assert open_numbers(run("list")[1]) == ["1", "2", "3", "4"]
    assert run("close", "--from", "ALA")[:2] == (0, "2 report(s) closed (none); 0 more open\n")
    assert open_numbers(run("list")[1]) == ["2", "3"]
