"""The liveness and readiness probes, and the app's answer to paths it does not know."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest
from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from server import __version__
from server.app import create_app
from server.config import Settings
from server.store.database import check_schema
from server.web import health
from server.web.common import STORE_KEY


async def test_healthz_answers_ok_with_version_and_is_never_cached(client: TestClient) -> None:
    response = await client.get("/healthz")

    assert response.status == 200
    assert response.content_type == "application/json"
    assert await response.json() == {"status": "ok", "version": __version__}
    assert response.headers["Cache-Control"] == "no-store"


async def test_unknown_path_is_404_not_500(client: TestClient) -> None:
    response = await client.get("/no-such-page?idGracza=abc")

    assert response.status == 404


async def test_healthz_rejects_other_methods(client: TestClient) -> None:
    response = await client.post("/healthz")

    assert response.status == 405


async def test_strangers_share_one_readiness_check_a_second_and_the_operators_is_fresh(
    aiohttp_client: AiohttpClient, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """/readyz is open to the internet and each check asks the database (2.1 ms of CPU): before, one
    address's 200 requests a second kept 40% of a core on it, many addresses more. Strangers now share
    the last answer while it is younger than PUBLIC_AGE, and one check under way; whoever may read
    /metrics is checked afresh, and what that finds is what strangers are told next."""
    client = await aiohttp_client(create_app(dataclasses.replace(settings, trusted_proxies=("127.0.0.1",))))
    checks = 0

    async def counted(engine: AsyncEngine) -> None:
        nonlocal checks
        checks += 1
        await asyncio.sleep(0.05)  # a check under way while the others come
        await check_schema(engine)

    monkeypatch.setattr(health, "check_schema", counted)
    monkeypatch.setattr(health, "PUBLIC_AGE", 3600.0)

    async def stranger(n: int) -> tuple[int, dict[str, object]]:
        response = await client.get("/readyz", headers={"X-Forwarded-For": f"198.51.{n}.9"})
        return response.status, await response.json()

    ready = (200, {"status": "ready", "version": __version__})
    assert await asyncio.gather(*(stranger(n) for n in range(20))) == [ready] * 20
    assert [await stranger(n) for n in range(20, 40)] == [ready] * 20
    assert checks == 1

    async with client.app[STORE_KEY].engine.begin() as connection:
        await connection.execute(text("UPDATE alembic_version SET version_num = '0001'"))
    assert await stranger(40) == ready  # the shared answer, not asked again
    operator = await client.get("/readyz")
    assert operator.status == 503 and "kropki-server migrate" in (await operator.json())["reason"]
    assert await stranger(41) == (503, {"status": "unready"})
    assert checks == 2

    monkeypatch.setattr(health, "PUBLIC_AGE", 0.0)
    assert await stranger(42) == (503, {"status": "unready"})
    assert checks == 3
