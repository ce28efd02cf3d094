"""The client played with the keyboard alone and heard through a screen reader's eyes, in Debian's
Chromium: what a screen reader would say is read from the page's live region (#announcer)."""

from __future__ import annotations

from playwright.sync_api import Browser, expect

from tests.static.served import ServerInThread
from tests.static.test_client import CAPTURE, Player


def announced(player: Player, text: str) -> None:
    expect(player.page.locator("#announcer")).to_contain_text(text)


def test_a_refusal_an_invitation_and_a_capture_are_heard(
    players: tuple[Player, Player], browser: Browser, server: ServerInThread
) -> None:
    ala, bob = players
    cezary = Player(browser, server)  # a spectator hears both colours
    try:
        expect(ala.page.locator("#announcer")).to_have_attribute("aria-live", "polite")
        ala.log_in("Ala")
        bob.log_in("Bob")
        cezary.log_in("Cezary")
        ala.invite("*Bob")
        announced(bob, "*Ala invites you")
        bob.page.click("#reject-invitation")
        announced(ala, "*Bob rejected your invitation.")
        ala.page.click("#invitation button")  # the rejection seen
        ala.page.click('#players li[data-nick="*Bob"] .invite')  # "New game" is set already
        bob.accept()
        cezary.page.click("#tables li .watch")
        expect(cezary.page.locator("#turn")).to_contain_text("Watching")
        for colour, point in CAPTURE:
            (ala if colour == "blue" else bob).play(point)
        announced(cezary, "*Bob: 10, 9")  # red's last, ji
        ala.play("cd")  # blue's fourth dot closes the ring round red's cc
        for listener in (bob, cezary):
            announced(listener, "*Ala: 3, 4")
            announced(listener, "Captured! Blue 1, red 0")
    finally:
        cezary.close()
