"""The browser tests' fixtures: one Chromium for them all, the server, two players; and every browser test
fails when the pages' Content-Security-Policy refused anything in it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Playwright, sync_playwright

from server.config import Settings
from tests.static.served import ServerInThread
from tests.static.test_client import CHROMIUM, HEADLESS_SHELL, REFUSED_BY_POLICY, Player


@pytest.fixture(scope="package")
def playwright() -> Iterator[Playwright]:
    with sync_playwright() as driver:
        yield driver


def launched(playwright: Playwright, executable: str) -> Browser:
    """`executable` is /usr/bin/<Debian's package of that name>."""
    package = Path(executable).name
    if not Path(executable).exists():
        pytest.fail(f"make test installs Debian's {package} (`make test-packages`)")
    return playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])


@pytest.fixture(scope="package")
def browser(playwright: Playwright) -> Iterator[Browser]:
    """One Chromium for every browser test (each test's players have contexts of their own): a launch
    costs about 1.6 s of CPU. Ended with the package's last test, before any other package's event loops.
    Chromium's headless shell (what Playwright itself runs headless): Blink and V8 as in the browser,
    without the desktop browser around them, it takes a third less CPU over these tests than the whole
    Chromium (docs/performance.md, "The test suite's length")."""
    shell = launched(playwright, HEADLESS_SHELL)
    yield shell
    shell.close()


@pytest.fixture(scope="package")
def whole_browser(playwright: Playwright) -> Iterator[Browser]:
    """The whole Chromium, for a test that needs the desktop browser's focus: in the headless shell a page
    keeps the focus when another tab is brought to the front."""
    whole = launched(playwright, CHROMIUM)
    yield whole
    whole.close()


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
