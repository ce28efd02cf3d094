"""Take the screenshots that docs/client.md shows (docs/img/*.png): the lobby and a game in the client,
and the archive's pages.

    .venv/bin/python scripts/page_screenshots.py [FOLDER]

Starts `serve` on a fresh SQLite database filled by tests/static/archive.py (real zagram records as
rated games of Ala, Bob and Cyd) and opens the game and player pages in Debian's Chromium, at a
desktop's size (1280x900) and a phone's (390x844); then three guests play in the client as the browser
tests do (tests/static/test_client.py): the lobby as a newcomer sees it, the game after a capture on a
desktop (and in dark colours), and the phone aiming its next dot (and zoomed in around it).
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import expect, sync_playwright

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from server.store.database import migrate, open_engine  # noqa: E402
from tests.static.archive import fill  # noqa: E402
from tests.static.test_client import CAPTURE, Player, start_game  # noqa: E402
from tests.test_restart import Server  # noqa: E402

SHOTS = {  # file: (address, phone, the move to show or None)
    "game-page.png": ("/game/1", False, 79),
    "game-page-phone.png": ("/game/1", True, 79),
    "player-page.png": ("/player/Ala", False, None),
}


async def _migrated(url: str) -> None:
    engine = open_engine(url)
    await migrate(engine)
    await engine.dispose()


def main(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        url = f"sqlite+aiosqlite:///{work}/kropki.sqlite3"
        asyncio.run(_migrated(url))
        fill(url)
        with Server(Path(work), url).running() as server, sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
            for name, (address, phone, move) in SHOTS.items():
                size = {"width": 390, "height": 844} if phone else {"width": 1280, "height": 900}
                context = browser.new_context(viewport=size, is_mobile=phone, has_touch=phone)
                page = context.new_page()
                page.goto(server.base + address)
                expect(page.locator("body[data-ready]")).to_have_count(1)
                if move is not None:
                    page.click(f'#move-list [data-move="{move}"] button')
                    expect(page.locator("#move-counter")).to_contain_text(f"Move {move} ")
                page.screenshot(path=folder / name, full_page=not phone)
                context.close()
            _client_shots(browser, server, folder)
            browser.close()


def _client_shots(browser, server: Server, folder: Path) -> None:
    ala, bob, cyd = Player(browser, server), Player(browser, server, phone=True), Player(browser, server)
    start_game(ala, bob, size="20x20")
    for side, point in [*CAPTURE, ("blue", "cd"), ("red", "jk")]:
        (ala if side == "blue" else bob).play(point)
        (bob if side == "blue" else ala).sees_dot(point)
    cyd.log_in("Cyd")
    expect(cyd.page.locator("#tables li")).to_have_count(1)
    cyd.page.screenshot(path=folder / "client-lobby.png")
    cyd.page.click("#tables .watch")
    ala.sees_score(1, 0)
    expect(ala.page.locator("#watchers")).to_have_text("Watching: *Cyd")
    ala.page.screenshot(path=folder / "client-game.png")
    ala.play("ej")
    bob.sees_dot("ej")
    bob.page.tap('#board [data-point="fj"]')
    expect(bob.page.locator("#aim-marker")).to_have_count(1)
    bob.page.screenshot(path=folder / "client-game-phone.png")
    for _ in range(2):
        bob.page.tap("#zoom-in")  # around the aim
    bob.page.screenshot(path=folder / "client-game-phone-zoomed.png")
    ala.page.emulate_media(color_scheme="dark")
    expect(ala.page.locator("html")).to_have_attribute("data-theme", "dark")
    ala.page.screenshot(path=folder / "client-game-dark.png")
    for player in (ala, bob, cyd):
        player.close()


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "docs" / "img")
