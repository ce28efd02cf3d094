"""The admin's commands on the database (server/admin.py), run as an admin runs them: `migrate`, `user`,
`tournament-key`, the sanctions and `moderation log`."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from server.cli import main
from server.engine.game import Game
from server.engine.moves import parse_move
from server.engine.record import game_to_record
from server.hub.persistence import FinishedGame
from server.store.database import head_revision
from server.store.games import GameSummary
from server.store.idhash import MIN_COST
from server.store.store import Store
from tests.ports import free_port
from tests.store.test_accounts import stored_hash
from tests.test_cli import REPO_ROOT, run_cli


def test_migrate_creates_the_schema_and_is_idempotent(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path}/new/kropki.sqlite3"

    first = run_cli("migrate", "--db", url)
    again = run_cli("migrate", env={"KROPKI_DB": url})

    assert first.returncode == 0, first.stderr
    assert again.returncode == 0, again.stderr
    assert first.stdout == again.stdout == f"database schema at revision {head_revision()}\n"


def test_admin_user_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path}/k.sqlite3"
    assert main(["migrate", "--db", url]) == 0
    asyncio.run(_two_players_and_a_game(url))
    capsys.readouterr()

    def user(*args: str) -> tuple[int, str, str]:
        status = main(["user", "--db", url, *args])
        out, err = capsys.readouterr()
        return status, out, err

    shown = user("show", "alice")
    promoted = user("set-role", "Alice", "moderator")
    renamed = user("rename", "Alice", "Alicja")
    taken = user("rename", "Alicja", "BOB")
    bad = user("rename", "Alicja", "*Guest")
    deleted = user("delete", "Alicja")
    missing = user("show", "Alicja")

    assert shown[0] == 0 and "nick:        Alice" in shown[1] and "role:        none" in shown[1]
    assert "a@example.org" in shown[1] and "K4ZUPkUzXY" not in shown[1]
    assert promoted[0] == 0 and "role moderator" in promoted[1]
    assert renamed[0] == 0
    assert taken[0] == 1 and "taken" in taken[2]
    assert bad[0] == 1 and "nick" in bad[2]
    assert deleted[0] == 0 and "1 archived games" in deleted[1]
    assert missing[0] == 1 and "no account with the nick Alicja" in missing[2]
    games = asyncio.run(_games_of(url, "Bob"))
    assert [(game.blue, game.red) for game in games[0]] == [("deleted1", "Bob")]
    assert "PB[deleted1]" in games[1] and "Alice" not in games[1]


def test_bot_commands_make_a_bot_and_replace_its_token(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KROPKI_ID_HASH_COST", "10")  # as the server's (docs/operations.md)
    url = f"sqlite+aiosqlite:///{tmp_path}/k.sqlite3"
    assert main(["migrate", "--db", url]) == 0
    asyncio.run(_two_players_and_a_game(url))
    capsys.readouterr()

    def run(*args: str) -> tuple[int, str, str]:
        status = main([*args[:1], "--db", url, *args[1:]])
        out, err = capsys.readouterr()
        return status, out.strip(), err

    made = run("bot", "create", "DeepDots")
    replaced = run("bot", "token", "DeepDots")
    taken = run("bot", "create", "deepdots")
    reserved = run("bot", "create", "AI hard")
    person = run("bot", "token", "Bob")
    missing = run("bot", "token", "Nobody")
    shown = run("user", "show", "DeepDots")

    assert made[0] == replaced[0] == 0 and len(made[1]) == len(replaced[1]) == 43 and made[1] != replaced[1]
    assert taken[0] == reserved[0] == 1 and "taken" in taken[2] and "taken" in reserved[2]
    assert person[0] == 1 and "Bob is not a bot" in person[2]
    assert missing[0] == 1 and "no account with the nick Nobody" in missing[2]
    assert shown[0] == 0 and "bot:         yes" in shown[1]
    bots = asyncio.run(_bots_of(url, made[1], replaced[1]))
    assert bots == [None, "DeepDots"]  # the first token stopped working
    assert asyncio.run(_id_hash_of(url, "DeepDots")).startswith(f"scrypt${2**10}$")


async def _id_hash_of(url: str, nick: str) -> str:
    store = await Store.open(url, id_hash_cost=MIN_COST)
    try:
        return await stored_hash(store, nick)
    finally:
        await store.close()


async def _bots_of(url: str, *tokens: str) -> list[str | None]:
    store = await Store.open(url, id_hash_cost=MIN_COST)
    try:
        accounts = [await store.bots.account(token) for token in tokens]
    finally:
        await store.close()
    return [account.nick if account is not None else None for account in accounts]


def key_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str, str]]:
    """`tournament-key ARGS` on a new database: its exit status, what it printed and what it said wrong."""
    url = f"sqlite+aiosqlite:///{tmp_path}/k.sqlite3"
    assert main(["migrate", "--db", url]) == 0
    capsys.readouterr()

    def keys(*args: str) -> tuple[int, str, str]:
        status = main(["tournament-key", "--db", url, *args])
        out, err = capsys.readouterr()
        return status, out, err

    return keys


def test_tournament_key_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    keys = key_command(tmp_path, capsys)

    added = keys("add", "cup-bot", "--tournament", "Autumn Cup", "--registered-only")
    again = keys("add", "cup-bot")
    listed = keys("list")
    revoked = keys("revoke", "cup-bot")
    twice = keys("revoke", "cup-bot")

    key = added[1].strip()
    assert added[0] == 0 and len(key) >= 32
    assert again[0] == 1 and "exists already" in again[2]
    assert (
        listed[0] == 0
        and "cup-bot\tactive" in listed[1]
        and "'Autumn Cup', registered players only" in listed[1]
    )
    assert key not in listed[1]
    assert revoked == (0, "cup-bot: revoked\n", "")
    assert twice[0] == 1 and "no working key named cup-bot" in twice[2]
    assert "revoked" in keys("list")[1]
    assert key.encode() not in b"".join(p.read_bytes() for p in tmp_path.glob("k.sqlite3*"))


def test_db_goes_before_or_after_the_action(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path}/k.sqlite3"
    assert main(["migrate", "--db", url]) == 0
    asyncio.run(_two_players_and_a_game(url))
    capsys.readouterr()

    after = main(["user", "show", "alice", "--db", url]), capsys.readouterr()
    before = main(["user", "--db", url, "show", "alice"]), capsys.readouterr()
    keys = main(["tournament-key", "list", "--db", url]), capsys.readouterr()

    assert after[0] == 0 and "nick:        Alice" in after[1].out
    assert after[1].out == before[1].out
    assert keys[0] == 0 and keys[1].err == ""


async def _two_players_and_a_game(url: str) -> None:
    store = await Store.open(url, id_hash_cost=MIN_COST)
    await store.accounts.register("Alice", "K4ZUPkUzXY", "a@example.org", "en")
    await store.accounts.register("Bob", "BobBobBob0", "", "en")
    game = Game(8, 8)
    game.play(1, parse_move("aa", game.width, game.height))
    game.resign(2)
    record = game_to_record(game, black_name="Alice", white_name="Bob", date="2026-11-22")
    finished = FinishedGame(1, record, "Alice", "Bob", "3932noT4F0.0.0", game.result, False, None, 0, 1)
    store.writer.archive(finished, lambda number, accounts: None)
    await store.close()


async def _games_of(url: str, nick: str) -> tuple[list[GameSummary], str | None]:
    store = await Store.open(url, id_hash_cost=MIN_COST)
    try:
        games = await store.games.recent(nick, 10)
        return games, await store.games.sgf(games[0].number)
    finally:
        await store.close()


def test_an_admin_command_run_elsewhere_names_the_missing_database_and_creates_nothing(
    tmp_path: Path,
) -> None:
    """The default database is ./data/kropki.sqlite3 in the directory the command runs in: run from
    another directory, `user show` used to create an empty database there and then complain."""
    environ = {key: value for key, value in os.environ.items() if not key.startswith("KROPKI_")}
    refused = subprocess.run(
        [sys.executable, "-m", "server", "user", "show", "Alice"],
        cwd=tmp_path,
        env={**environ, "PYTHONPATH": str(REPO_ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode == 1
    assert f"there is no database at {tmp_path / 'data' / 'kropki.sqlite3'}" in refused.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_database_without_the_schema_is_named_in_the_refusal(tmp_path: Path) -> None:
    (tmp_path / "empty.sqlite3").touch()
    refused = run_cli("user", "--db", f"sqlite+aiosqlite:///{tmp_path}/empty.sqlite3", "show", "Alice")
    assert refused.returncode == 1
    assert (
        f"the database sqlite+aiosqlite:///{tmp_path}/empty.sqlite3 has an empty database" in refused.stderr
    )
    assert "run `kropki-server migrate`" in refused.stderr


def test_sanctions_and_the_moderation_log(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path}/k.sqlite3"
    assert main(["migrate", "--db", url]) == 0
    asyncio.run(_two_players_and_a_game(url))
    capsys.readouterr()

    def run(*args: str) -> tuple[int, str, str]:
        status = main([*args[:1], "--db", url, *args[1:]])
        out, err = capsys.readouterr()
        return status, out, err

    assert run("user", "set-role", "Bob", "admin")[1] == "Bob: role admin (from the player's next login)\n"
    muted = run("mute", "Alice", "--for", "2h", "--reason", "rude")
    banned = run("ban", "2001:db8:1:2::77", "--reason", "bots")
    kicked = run("kick", "*Troll")
    bad = run("mute", "*Troll", "--for", "2 hours")
    badnick = run("ban", "*no/such")
    lifted = run("unban", "2001:db8:1:2::1")
    log = run("moderation", "log")

    assert muted[0] == 0 and muted[1].startswith("Alice: mute 20") and muted[1].endswith(" UTC\n")
    assert banned[:2] == (0, "2001:db8:1:2::77: ban for good\n")
    assert kicked[:2] == (0, "*Troll: kick now\n")
    assert bad[0] == 1 and "duration" in bad[2]
    assert badnick[0] == 1 and "nick" in badnick[2].lower()
    assert lifted[:2] == (0, "2001:db8:1:2::1: 1 ban(s) lifted\n")  # the same /64
    rows = [line.split("\t") for line in log[1].splitlines()]
    assert [row[1:4] for row in rows] == [
        ["admin (CLI)", "set-role", "Bob"],
        ["admin (CLI)", "mute", "Alice"],
        ["admin (CLI)", "ban", "2001:db8:1:2::77"],
        ["admin (CLI)", "kick", "*Troll"],
        ["admin (CLI)", "unban", "2001:db8:1:2::1"],
    ]
    assert rows[1][5] == "rude" and rows[2][4] == "for good, network 2001:db8:1:2::/64"


def test_a_database_a_newer_version_upgraded_is_refused_by_every_command_and_left_as_it_is(
    tmp_path: Path,
) -> None:
    """An operator who goes back to the version before an upgrade: `migrate` (which the unit and the
    image run before every start) gave a traceback, `serve` advised running `migrate`."""
    database = tmp_path / "k.sqlite3"
    url = f"sqlite+aiosqlite:///{database}"
    assert run_cli("migrate", "--db", url).returncode == 0
    with sqlite3.connect(database) as connection:
        connection.execute("UPDATE alembic_version SET version_num = '9999'")
    connection.close()

    answers = [
        run_cli("migrate", "--db", url),
        run_cli("serve", "--migrate", "--port", str(free_port()), "--db", url),
        run_cli("serve", "--port", str(free_port()), "--db", url),
        run_cli("user", "show", "Alice", "--db", url),
    ]

    for answer in answers:
        assert answer.returncode == 1 and "Traceback" not in answer.stderr, answer.stderr
        last = answer.stderr.splitlines()[-1]
        assert last.startswith(f"kropki-server: error: the database {url} has schema revision 9999"), last
        assert "newer version" in last and "kropki-server migrate" not in last
    with sqlite3.connect(database) as connection:
        assert connection.execute("SELECT version_num FROM alembic_version").fetchall() == [("9999",)]
    connection.close()


@pytest.mark.parametrize(
    "command",
    [
        ["migrate"],
        ["user", "show", "Alice"],
        ["user", "set-role", "Alice", "admin"],
        ["bot", "create", "DeepDots"],
        ["tournament-key", "list"],
        ["ban", "*Troll"],
        ["moderation", "log"],
    ],
)
def test_a_database_out_of_reach_is_one_line_for_every_admin_command(command: list[str]) -> None:
    answer = run_cli(*command, "--db", "postgresql+asyncpg://kropki:hunter22@127.0.0.1:1/kropki")

    assert answer.returncode == 1 and "Traceback" not in answer.stderr, answer.stderr
    assert answer.stderr.splitlines() == [
        "kropki-server: error: cannot use the database at postgresql+asyncpg://kropki:***@127.0.0.1:1/kropki "
        "(cannot reach the database (ECONNREFUSED)): check --db or KROPKI_DB, and that it runs"
    ]


def test_a_locked_database_is_one_line_and_keeps_nothing(tmp_path: Path) -> None:
    database = tmp_path / "k.sqlite3"
    url = f"sqlite+aiosqlite:///{database}"
    assert run_cli("migrate", "--db", url).returncode == 0
    holder = sqlite3.connect(database, isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")  # another process writing, for longer than the busy timeout
        answer = run_cli("tournament-key", "add", "cup-bot", "--db", url)
        holder.execute("COMMIT")
        listed = run_cli("tournament-key", "list", "--db", url)
    finally:
        holder.close()

    assert answer.returncode == 1 and "Traceback" not in answer.stderr, answer.stderr
    assert answer.stdout == ""
    assert answer.stderr.splitlines() == [
        f"kropki-server: error: cannot use the database at {url} (database is locked): "
        "check --db or KROPKI_DB, and that it runs"
    ]
    assert listed.stdout == "no keys\n"


def test_a_key_that_could_never_be_listed_stored_or_used_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A name over the column's 80 characters was a traceback on PostgreSQL (stored on SQLite), an empty
    name or one with a tab or line break broke `list`'s lines, and a tournament no `tourn=` can name
    (a `/`, over 100 characters, `x`) made a key that every setUpTable refused."""
    keys = key_command(tmp_path, capsys)

    names = [keys("add", name) for name in ("", " ", "x" * 81, "cup\tbot", "cup\nbot")]
    tournaments = [keys("add", "cup-bot", "--tournament", name) for name in ("Cup/2026", "C" * 101, "x", "")]

    for status, out, err in names:
        assert (status, out) == (1, "") and "a key's name is 1 to 80 characters" in err, err
    for status, out, err in tournaments:
        assert (status, out) == (1, "") and "no tournament can be named" in err, err
    assert keys("list")[:2] == (0, "no keys\n")
    assert keys("add", "x" * 80, "--tournament", "C" * 100)[0] == 0


@pytest.mark.parametrize("last", ["-1", "0"])
def test_the_moderation_log_takes_a_positive_number_of_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], last: str
) -> None:
    """`--last -1` read the whole log on SQLite and was a traceback on PostgreSQL (LIMIT -1)."""
    with pytest.raises(SystemExit) as usage:
        main(["moderation", "log", "--last", last, "--db", f"sqlite+aiosqlite:///{tmp_path}/k.sqlite3"])
    assert usage.value.code == 2 and "--last" in capsys.readouterr().err


def test_migrate_where_the_database_folder_cannot_be_made_says_so(tmp_path: Path) -> None:
    (tmp_path / "data").write_text("a file where the folder should be")
    answer = run_cli("migrate", "--db", f"sqlite+aiosqlite:///{tmp_path}/data/kropki.sqlite3")

    assert answer.returncode == 1 and "Traceback" not in answer.stderr
    assert answer.stderr.startswith(
        f"kropki-server: error: cannot create the database directory {tmp_path / 'data'}: "
    ), answer.stderr
    assert (tmp_path / "data").read_text() == "a file where the folder should be"


@pytest.mark.parametrize("name", ["AI hard", "ai EASY", "Al medium"])
def test_an_account_is_not_renamed_to_an_ai_players_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    """Registration and `bot create` refuse the AI players' names and their look-alikes; `user rename`
    gave them to an account, which then showed up in the lobby and the archive as the server's AI."""
    url = f"sqlite+aiosqlite:///{tmp_path}/k.sqlite3"
    assert main(["migrate", "--db", url]) == 0
    asyncio.run(_two_players_and_a_game(url))
    capsys.readouterr()

    status = main(["user", "rename", "Alice", name, "--db", url])

    assert (status, capsys.readouterr().err) == (1, f"kropki-server: error: the nick {name} is taken\n")
    assert main(["user", "show", "Alice", "--db", url]) == 0


def test_a_sanctions_reason_is_one_clean_line_as_a_moderators_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The reason reaches the player (the mute line, a banned login's answer) and the log's one line per
    entry: a moderator's loses its line breaks, tabs and bidirectional controls (clean_text), the CLI's
    went in as typed, and a reason over 300 characters was stored whole."""
    url = f"sqlite+aiosqlite:///{tmp_path}/k.sqlite3"
    assert main(["migrate", "--db", url]) == 0
    capsys.readouterr()

    made = main(["mute", "*Troll", "--reason", " spam\nand\tmore \u202ereversed ", "--db", url])
    too_long = main(["ban", "*Troll", "--reason", "x" * 301, "--db", url])
    refusal = capsys.readouterr().err
    assert main(["moderation", "log", "--db", url]) == 0
    lines = capsys.readouterr().out.splitlines()

    assert (made, too_long) == (0, 1) and "at most 300 characters" in refusal
    assert len(lines) == 1 and lines[0].split("\t")[1:] == [
        "admin (CLI)",
        "mute",
        "*Troll",
        "for good",
        "spam and more reversed",
    ]
