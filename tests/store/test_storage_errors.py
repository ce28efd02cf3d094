"""A storage error is told by its class, SQLSTATE and constraint, never by the values the database quotes
back: PostgreSQL's DETAIL ("Failing row contains (...)", "Key (...)=(...) already exists") holds the row
refused, here a chat line, a session's id hash and a moderator's reason. The writes are refused for real:
a CHECK constraint added with SQL before the server writes."""

from __future__ import annotations

import asyncio
import logging

import pytest
from aiohttp.test_utils import TestClient
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import create_async_engine

from server.cli import main
from server.config import Settings
from server.logs import OneLineFormatter
from server.store.outage import described
from server.web.common import STORE_KEY
from tests.conftest import POSTGRES
from tests.ports import free_port
from tests.test_cli import run_cli
from tests.web.zagram import Zagram

postgres_only = pytest.mark.skipif(
    not POSTGRES, reason="PostgreSQL: set KROPKI_TEST_DB (scripts/with-postgres)"
)
DROPPED = "a write was refused by the database and is dropped"


async def refuse(url: str, table: str, constraint: str, check: str) -> None:
    """The database refuses, from now on, every row of `table` for which `check` is false."""
    engine = create_async_engine(url)
    async with engine.begin() as connection:
        await connection.execute(text(f"ALTER TABLE {table} ADD CONSTRAINT {constraint} CHECK ({check})"))
    await engine.dispose()


def written(caplog: pytest.LogCaptureFixture) -> str:
    """Everything logged, as caplog shows it and as the server writes it (server/logs.py)."""
    formatter = OneLineFormatter()
    return caplog.text + "\n".join(formatter.format(record) for record in caplog.records)


@postgres_only
async def test_a_refused_chat_line_is_logged_without_its_text(
    client: TestClient, settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    await refuse(settings.db_url, "journal", "journal_refused", "data NOT LIKE '%Hush%'")
    ala = Zagram(client, "AlaSecr1", "*Ala")
    await ala.login()
    ala.say(0, "Hush, the code is 4711")
    answered = await ala.poll()
    await client.app[STORE_KEY].writer.flush()  # a chat line's reply does not wait for its write

    logged = written(caplog)
    assert "Hush" not in logged and "4711" not in logged and "Failing row" not in logged
    [dropped] = [r for r in caplog.records if r.getMessage().startswith(DROPPED)]
    line = dropped.getMessage()
    assert "IntegrityError" in line and "23514" in line and "journal_refused" in line, line
    assert answered.status == "ok" and "Failing row" not in str(answered.sections)


@postgres_only
async def test_a_refused_session_row_is_logged_without_the_players_id_hash(
    client: TestClient, settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    await refuse(settings.db_url, "sessions", "sessions_refused", "lang <> 'pl'")
    secret = "AlaSecr1"
    ala = Zagram(client, secret, "*Ala")
    answer = await ala.login(lang="pl")
    await ala.poll()
    await client.app[STORE_KEY].writer.flush()

    id_hmac = client.app[STORE_KEY].writer.id_hmac(secret)
    assert any(r.getMessage().startswith(DROPPED) for r in caplog.records)
    logged = written(caplog)
    assert "sessions_refused" in logged
    assert id_hmac not in logged and secret not in logged and "Failing row" not in logged
    assert id_hmac not in answer and "Failing row" not in answer


@postgres_only
def test_an_admin_command_the_database_refuses_is_one_line_without_its_values(
    settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    asyncio.run(refuse(settings.db_url, "moderation_log", "moderation_refused", "reason NOT LIKE '%Hush%'"))
    status = main(["mute", "*Troll", "--reason", "Hush, he knows 4711", "--db", settings.db_url])
    out, err = capsys.readouterr()

    assert status == 1
    assert "IntegrityError" in err and "23514" in err and "moderation_refused" in err, err
    assert "Hush" not in out + err and "4711" not in out + err and "Failing row" not in err


@postgres_only
def test_a_start_the_database_refuses_is_told_without_the_row(settings: Settings) -> None:
    """The first start stores the key of the sessions' id HMACs: refused, PostgreSQL's DETAIL quoted the
    key itself in the traceback `serve` ended with."""
    asyncio.run(refuse(settings.db_url, "server_state", "state_refused", "name <> 'session_hmac_key'"))
    refused = run_cli("serve", "--port", str(free_port()), "--db", settings.db_url)

    assert refused.returncode == 1
    assert "state_refused" in refused.stderr.splitlines()[-1], refused.stderr
    assert "Failing row" not in refused.stderr and "session_hmac_key" not in refused.stderr


async def test_a_storage_error_in_a_trace_keeps_its_values_out(
    settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    """Any log line with the trace of a storage error (a bug's "command failed", "request failed"):
    the database's own text about the error stands in for its message. SQLite's names only the
    constraint; PostgreSQL's DETAIL quotes the row."""
    engine = create_async_engine(settings.db_url, hide_parameters=True)
    try:
        async with engine.begin() as connection:
            await connection.execute(
                text("INSERT INTO server_state (name, value) VALUES (:name, 'one')"), {"name": "Hush4711"}
            )
        with pytest.raises(IntegrityError) as refused:
            async with engine.begin() as connection:
                await connection.execute(
                    text("INSERT INTO server_state (name, value) VALUES (:name, 'two')"),
                    {"name": "Hush4711"},
                )
    finally:
        await engine.dispose()
    try:
        raise RuntimeError("command failed") from refused.value
    except RuntimeError:
        logging.getLogger("server.hub.stream").exception("command failed")
    line = OneLineFormatter().format(caplog.records[-1])

    assert "IntegrityError" in line and "Hush4711" not in line, line
    assert "Hush4711" not in described(refused.value)
    if POSTGRES:
        assert "23505" in line and "server_state_pkey" in line, line
