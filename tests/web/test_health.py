"""The liveness probe and the app's answer to paths it does not know."""

from __future__ import annotations

from aiohttp.test_utils import TestClient

from server import __version__


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
