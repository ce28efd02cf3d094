"""A damaged journal costs only its damaged entries: they are set aside for inspection, the rest comes
back after a restart (SQLite or PostgreSQL)."""

from __future__ import annotations

from pytest_aiohttp import AiohttpClient
from sqlalchemy import func, insert, select, update

from server.app import create_app
from server.config import Settings
from server.store.database import open_engine
from server.store.models import JournalEntry, JournalSetAside
from server.web.common import HUB_KEY
from tests.web.zagram import Zagram


async def test_rows_that_are_not_json_are_set_aside_and_everything_else_is_restored(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    client = await aiohttp_client(create_app(settings))
    ala, bob = Zagram(client, "alaAla11", "*Ala"), Zagram(client, "bobBob22", "*Bob")
    for player in (ala, bob):
        assert await player.login() == ""
        await player.poll(b=True, msg_no="0.0")
    ala.send("v", 0, "s.*Bob.0808stanF0.0.0")
    await ala.poll(b=True)
    bob.send("v", 0, "a")
    reply = await bob.poll(b=True)
    uid = next(table for table in reply.sections if table)
    blue = ala if reply.lines(uid, f"d{uid}.")[0].endswith(".*Ala.*Bob") else bob
    blue.send("s", uid, "aa")
    await blue.poll(b=True)
    ala.say(uid, "first")
    ala.say(uid, "second")
    await ala.poll(b=True)
    await client.close()

    engine = open_engine(settings.db_url)
    async with engine.begin() as connection:
        chat = (
            (
                await connection.execute(
                    select(JournalEntry.seq).where(JournalEntry.uid == uid, JournalEntry.kind == "chat")
                )
            )
            .scalars()
            .first()
        )
        await connection.execute(
            update(JournalEntry)
            .where(JournalEntry.uid == uid, JournalEntry.seq == chat)
            .values(data='{"t": 1,')
        )
        lobby_seq = await connection.scalar(select(func.max(JournalEntry.seq)).where(JournalEntry.uid == 0))
        await connection.execute(
            insert(JournalEntry).values(uid=0, seq=lobby_seq + 1, kind="chat", data="[1, 2]")
        )
    await engine.dispose()

    client = await aiohttp_client(create_app(settings))
    ala.client = client
    reply = await ala.poll(b=True, msg_no="0.0")

    assert reply.lines(uid, "sr") == ["sr(;B[aa])"]
    restarting = "The server is restarting; games go on when it is back."
    assert [line.split(".", 3)[3] for line in reply.lines(uid, "c")] == ["second", restarting]
    lobby = client.server.app[HUB_KEY].lobby.chat.lines()  # type: ignore[union-attr]
    assert [line.split(".", 3)[3] for line in lobby] == [restarting]
    await client.close()
    engine = open_engine(settings.db_url)
    async with engine.connect() as connection:
        aside = (await connection.execute(select(JournalSetAside).order_by(JournalSetAside.uid))).all()
        left = (
            (await connection.execute(select(JournalEntry.seq).where(JournalEntry.uid == uid)))
            .scalars()
            .all()
        )
    await engine.dispose()
    assert [(row.uid, row.seq, row.data) for row in aside] == [
        (0, lobby_seq + 1, "[1, 2]"),
        (uid, chat, '{"t": 1,'),
    ]
    assert all("JSON" in row.reason for row in aside)
    assert chat not in left
