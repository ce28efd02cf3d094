"""The public answers' sending budget (server/web/budget.py): its turns on a clock of the test's own, then
on the real app: the answers of a tournament paced at --public-rate and turned away with 503 past the
longest wait, a big answer sent a slice at a time within it, a player's poll answered at once meanwhile,
and /metrics telling the operator."""

from __future__ import annotations

import asyncio
import dataclasses
import json

import pytest
from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient

from server.app import create_app
from server.config import Settings
from server.web.budget import BURST, MEGABYTE, MIN_CHARGE, Overbooked, SendingBudget
from server.web.common import STORE_KEY
from server.web.shared import SHARED_ANSWERS_KEY
from tests.conftest import served
from tests.web.test_big_answers import NAME, TABLES, filled
from tests.web.test_connections import guarded
from tests.web.zagram import Zagram


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_budget_left_alone_sends_its_burst_at_once_then_paces_at_its_rate() -> None:
    clock = Clock()
    budget = SendingBudget(MEGABYTE, clock=clock)
    assert budget.first(MIN_CHARGE) == 0  # 0.25 s of the rate: the burst
    assert budget.first(MIN_CHARGE) == pytest.approx(0.25)
    assert budget.more(MEGABYTE // 2) == pytest.approx(0.75)
    assert budget.backlog() == pytest.approx(1.0)
    clock.now += 60  # a minute idle saves nothing beyond the burst
    assert budget.backlog() == 0
    assert budget.first(MIN_CHARGE) == 0
    assert budget.first(MIN_CHARGE) == pytest.approx(0.25)


def test_an_answer_counts_at_least_the_least_charge() -> None:
    budget = SendingBudget(MEGABYTE, clock=Clock())
    for _ in range(4):
        budget.first(10)  # a few bytes each, counted as MIN_CHARGE
    assert budget.backlog() == pytest.approx(4 * MIN_CHARGE / MEGABYTE)


def test_an_answer_that_would_wait_too_long_is_refused_and_promised_nothing() -> None:
    budget = SendingBudget(MEGABYTE, most_wait=1.0, clock=Clock())
    waits = [budget.first(MIN_CHARGE) for _ in range(5)]
    assert waits == pytest.approx([0, 0.25, 0.5, 0.75, 1.0])
    with pytest.raises(Overbooked) as refused:
        budget.first(MIN_CHARGE)
    assert refused.value.retry_after == 2  # 1.25 s, rounded up: a client that waits so long gets a turn
    assert budget.refused == 1 and budget.backlog() == pytest.approx(1.25)  # nothing promised to it
    assert budget.more(MEGABYTE) == pytest.approx(2.0)  # an answer begun is never refused its next slice


def at_rate(settings: Settings, megabytes: int) -> Settings:
    return dataclasses.replace(settings, public_rate=megabytes)


async def tournament_of_six(client: TestClient) -> str:
    """A tournament's standings.json, its six tables set up by an organiser's script."""
    key = await client.app[STORE_KEY].tournaments.add_key("cup-bot", "Autumn Cup", False)
    for n in range(6):
        query = {"co": "setUpTable", "key": key, "gameType": "2020stanF0.60.5", "tourn": "Autumn Cup"}
        answer = await client.get("/a.kropki", params=query | {"pl1": f"*A{n}", "pl2": f"*B{n}"})
        assert (await answer.text()).startswith("ok.")
    return "/tournament/Autumn Cup/standings.json"


async def test_answers_past_the_longest_wait_are_refused_with_retry_after_and_a_poll_is_not_held(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    """At 1 MB a second, each answer counted as 256 KB: the first at once, the next a quarter of a second
    apart, and those that would wait past the longest wait (0.6 s here) refused at once: of eight asked
    together, three served and five refused (up to five served if they arrive up to 0.4 s apart on a
    busy host). A player's poll meanwhile is answered at once: the players' requests are not in the
    budget."""
    client = await served(aiohttp_client, at_rate(settings, 1))
    page = await tournament_of_six(client)
    budget = client.app[SHARED_ANSWERS_KEY].budget
    budget.most_wait = 0.6
    ala = Zagram(client, "ala123", "*Ala")
    assert await ala.login() == ""
    await ala.poll()
    loop = asyncio.get_running_loop()
    began = loop.time()

    answers = [asyncio.create_task(client.get(page)) for _ in range(8)]
    await asyncio.sleep(0.05)
    polled = loop.time()
    await ala.poll()
    poll_took = loop.time() - polled
    statuses = [
        (response.status, response.headers.get("Retry-After")) for response in await asyncio.gather(*answers)
    ]
    answered = statuses.count((200, None))

    assert 3 <= answered <= 5 and statuses.count((503, "1")) == 8 - answered  # before: every one at once
    assert loop.time() - began >= 0.5 - 0.05  # the third waited two turns
    assert poll_took < 0.25
    assert budget.refused == 8 - answered
    metrics = await (await client.get("/metrics")).text()
    assert f"kropki_public_answers_refused_total {8 - answered}.0" in metrics
    assert "kropki_public_answers_backlog_seconds" in metrics


async def test_a_big_answer_goes_out_a_slice_at_a_time_within_the_rate(settings: Settings) -> None:
    """A tournament's whole tables, about 6 MB plain, at 4 MB a second: no sooner than the rate allows
    after the burst (before: as fast as the client took it). It comes whole."""
    await filled(settings)
    async with guarded(create_app(at_rate(settings, 4)), 100) as served_app:
        reader = await served_app.connect()
        loop = asyncio.get_running_loop()
        reader.send(f"/tournament/{NAME}")
        status, _, body = await reader.answer(timeout=30)  # built (seconds under load), and sent once
        assert status == 200
        size = len(body.encode())
        await asyncio.sleep(1.0)  # the budget is left alone again
        began = loop.time()
        status, _, body = await reader.request(f"/tournament/{NAME}")
        took = loop.time() - began
    assert status == 200 and json.loads(body)["tables"][-1]["table"] == TABLES
    assert took >= size / (4 * MEGABYTE) - BURST - 0.05
