"""An opponent who closes the tab (docs/client.md, "An opponent who left"), in Debian's Chromium at 1280x900
and on a 390x844 phone, against the server (tests/static/served.py) whose times are short (`--away-after 31`,
the least it takes, and `--claim-after 10`): the player left is told, sees when the claim opens, and claims
the win; in an untimed ranked game of one move each only "Call it off" is offered, and the game is shown as
not rated."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, expect

from server.config import Settings
from tests.static.served import ServerInThread
from tests.static.test_client import Player

AWAY_AFTER, CLAIM_AFTER = 31, 10
NOTICED = (AWAY_AFTER + 5 + 10) * 1000  # the sweep's 5 s, and some room (ms)


@pytest.fixture
def server(settings: Settings) -> Iterator[ServerInThread]:
    flags = ["--away-after", str(AWAY_AFTER), "--claim-after", str(CLAIM_AFTER)]
    with ServerInThread(settings.db_url, flags=flags).running() as running:
        yield running


def start(inviter: Player, invited: Player, *, kind: str, minutes: str) -> None:
    """`inviter` invites `invited` (both logged in) to a 10x10 standard game, `inviter` blue."""
    page = inviter.page
    nick = invited.page.locator("#me").inner_text()
    expect(page.locator(f'#players li[data-nick="{nick}"]')).to_have_count(1)
    inviter.set_new_game()
    page.select_option("#kind", kind)
    page.fill("#minutes", minutes)
    page.click(f'#players li[data-nick="{nick}"] .invite')
    expect(invited.page.locator("#invitation")).to_contain_text("invites you")
    invited.accept()
    expect(page.locator("#red-name")).to_have_text(nick)


def test_the_tab_closed_is_told_the_win_claimed_and_a_short_game_called_off_unrated(
    browser: Browser, server: ServerInThread
) -> None:
    ala, bob = Player(browser, server), Player(browser, server)
    cid, dan = Player(browser, server, phone=True), Player(browser, server)
    for player, nick in ((ala, "Ala"), (bob, "Bob"), (cid, "Cid"), (dan, "Dan")):
        player.log_in(nick)
    start(ala, bob, kind="F", minutes="5")  # a timed free game
    start(dan, cid, kind="R", minutes="0")  # an untimed ranked one, *Dan blue
    for point in ("bb", "hh", "bc", "hg"):  # two moves each
        mover, other = (ala, bob) if point in ("bb", "bc") else (bob, ala)
        mover.play(point)
        other.sees_dot(point)
    dan.play("bb")  # one move each
    cid.sees_dot("bb")
    cid.play("hh")
    dan.sees_dot("hh")

    bob.page.close()  # the tabs closed: nothing says so but silence
    dan.page.close()

    away = ala.page.locator("#absence")
    expect(away).to_contain_text("*Bob has left the game.", timeout=NOTICED)
    expect(away).to_contain_text(re.compile(r"you may claim the win or call the game off at .+ \(in \d+ s\)"))
    ala.sees_chat("*Bob has left the game. If they are not back within 10 s, *Ala may claim the win")
    expect(cid.page.locator("#absence")).to_contain_text("*Dan has left the game.", timeout=NOTICED)

    claim = ala.page.locator("#claim-win")
    expect(claim).to_be_visible(timeout=(CLAIM_AFTER + 10) * 1000)
    expect(ala.page.locator("#absence")).to_contain_text("*Bob has not come back.")
    claim.click()
    ala.sees_chat("*Ala won: *Bob left the game and did not come back.")
    expect(ala.page.locator("#turn")).to_contain_text("Game over")
    expect(away).to_be_hidden()

    call_off = cid.page.locator("#call-off")
    expect(call_off).to_be_visible(timeout=(CLAIM_AFTER + 10) * 1000)
    expect(cid.page.locator("#claim-win")).to_have_count(0)  # one move each: no win to claim
    cid.sees_chat("*Cid may call the game off (too few moves to win it).")
    call_off.click()
    cid.sees_chat("The game was called off: a player left it.")
    cid.sees_chat("Not rated: the game was cancelled.")
    expect(cid.page.locator("#absence")).to_be_hidden()
    # the phone's box and buttons fit the screen
    width = cid.page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390

    for player in (ala, cid):
        player.close()
    for player in (bob, dan):
        assert player.errors == []
        player.context.close()
