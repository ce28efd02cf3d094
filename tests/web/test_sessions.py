"""Sessions survive a clean restart of the app on the same database (SQLite or PostgreSQL): clients poll
on with their ids and message numbers, as MultiPoints does, and the database never holds an id."""

from __future__ import annotations

from pathlib import Path

from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient
from sqlalchemy import select

from server.app import create_app
from server.config import Settings
from server.store.database import open_engine
from server.store.models import Base
from tests.web.zagram import Zagram, parse_reply

ALA_ID, BOB_ID = "Qx7alA_1", "Zq9boB.2"  # ids nothing else in the database could contain by chance


async def started(aiohttp_client: AiohttpClient, settings: Settings) -> TestClient:
    return await aiohttp_client(create_app(settings))


async def test_after_a_restart_the_clients_poll_on_with_their_old_ids(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    client = await started(aiohttp_client, settings)
    ala, bob = Zagram(client, ALA_ID, "*Ala"), Zagram(client, BOB_ID, "*Bob")
    for player in (ala, bob):
        assert await player.login() == ""
        await player.poll(b=True, msg_no="0.0")
    ala.send("v", 0, "s.*Bob.0808stanF0.0.0")  # blue: the inviter
    await ala.poll(b=True)
    bob.send("v", 0, "a")
    reply = await bob.poll(b=True)
    uid = next(table for table in reply.sections if table)
    (description,) = reply.lines(uid, f"d{uid}.")
    blue, red = (ala, bob) if description.endswith(".*Ala.*Bob") else (bob, ala)
    blue.send("s", uid, "aa")
    await blue.poll(b=True)
    ala.say(uid, "before")
    await ala.poll(b=True)
    assert ala.acknowledged == 2 + (blue is ala)
    await client.close()  # a clean stop, as at SIGTERM

    client = await started(aiohttp_client, settings)
    ala.client = bob.client = client
    ala.say(uid, "after")  # sent with the commands above k, as MultiPoints resends them
    ala.acknowledged -= 1  # and as if the reply to "before" had been lost: it is sent again too
    reply = await ala.poll(b=True)

    assert reply.status == "ok" and reply.processed == len(ala.commands)
    assert reply.lines(uid, "sr") == ["sr(;B[aa])"]
    said = [line.split(".", 3)[3] for line in reply.lines(uid, "c")]
    # "before" reached her before the stop: the whole state does not show it to her again
    assert said == ["The server is restarting; games go on when it is back.", "after"]
    assert "i*Ala..F.en" in reply.lines(0, "i") and reply.lines(0, "b*Ala.") == [f"b*Ala.0.{uid}"]
    bob_reply = await bob.poll(b=True)  # Bob's first poll since the restart, with his old msgNo
    assert bob_reply.status == "ok" and bob_reply.lines(uid, "sr") == ["sr(;B[aa])"]
    red.send("s", uid, "hh")  # the next move, with the old id
    assert (await red.poll(b=True)).lines(uid, "sa") == ["sa;W[hh]"]
    assert (await blue.poll(b=True)).lines(uid, "sa") == ["sa;W[hh]"]

    body = await ala.get(co="usunGracza", playerId=ALA_ID)
    assert body == ""
    assert parse_reply(await ala.get(co="getMsg", playerId=ALA_ID, msgNo=str(ala.seen))).status == "sd"
    await client.close()
    assert await no_id_in_the_database(settings, ALA_ID, BOB_ID)


async def no_id_in_the_database(settings: Settings, *ids: str) -> bool:
    """Every value of every table, and for SQLite every byte of the files (free pages and WAL)."""
    engine = open_engine(settings.db_url)
    rows = []
    async with engine.connect() as connection:
        for table in Base.metadata.sorted_tables:
            rows += [repr(row) for row in await connection.execute(select(table))]
    values = "".join(rows)
    await engine.dispose()
    assert "*Bob" in values, "the reading works: Bob's session is stored"
    assert not [secret for secret in ids if secret in values]
    if settings.db_url.startswith("sqlite"):
        path = Path(settings.db_url.removeprefix("sqlite+aiosqlite:///"))
        content = b"".join(p.read_bytes() for p in path.parent.glob(path.name + "*"))
        assert not [secret for secret in ids if secret.encode() in content]
    return True
