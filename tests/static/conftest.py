"""The browser tests' fixtures: one Chromium for them all, the server, two players; and every browser test
fails when the pages' Content-Security-Policy refused anything in it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, sync_playwright

from server.config import Settings
from tests.static.served import ServerInThread
from tests.static.test_client import CHROMIUM, REFUSED_BY_POLICY, Player


@pytest.fixture(scope="package")
def browser() -> Iterator[Browser]:
    """One Chromium for every browser test (each test's players have contexts of their own): a launch
    costs about 1.6 s of CPU. Ended with the package's last test, before any other package's event loops."""
    if not Path(CHROMIUM).exists():
        pytest.fail("make test installs Debian's chromium (scripts/ensure-debian-package chromium chromium)")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield launched
        launched.close()


@pytest.fixture
def server(settings: Settings) -> Iterator[ServerInThread]:
    """With an AI worker, so that the computer's players are in the lobby as `serve` has them."""
    with ServerInThread(settings.db_url, ai_workers=1).running() as running:
        yield running


@pytest.fixture
def players(browser: Browser, server: ServerInThread) -> Iterator[tuple[Player, Player]]:
    ala, bob = Player(browser, server), Player(browser, server, phone=True)
    yield ala, bob
    ala.close()
    bob.close()


@pytest.fixture(autouse=True)
def nothing_refused_by_the_policy() -> Iterator[None]:
    REFUSED_BY_POLICY.clear()
    yield
    refused, REFUSED_BY_POLICY[:] = list(REFUSED_BY_POLICY), []
    assert refused == [], "the Content-Security-Policy refused what a page did"
