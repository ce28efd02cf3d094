"""The game screen as lichess and playok players expect it (issue 21, points 2, 5, 6 and 8), in Debian's
Chromium against the server (tests/static/served.py): a board as large as the screen, full screen, a two-step
touch on a phone, sounds, the tab's title and notifications, spectators, tournament labels, the sayHi grace on
the clock, and a lobby that hides finished tables nobody is at. Sizes are element sizes, not pixels."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import Iterator
from urllib.parse import quote, urlencode
from urllib.request import urlopen

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.static.served import ServerInThread
from tests.static.test_client import CAPTURE, Player, start_game
from tests.test_restart import REPO_ROOT

# Every tone the page starts, by its frequency (client.js SOUNDS: move 660, capture 520, start 440,
# low time 880): the real Web Audio nodes play on; the test only listens in.
LISTEN_TO_SOUNDS = """
window.tones = [];
const realStart = OscillatorNode.prototype.start;
OscillatorNode.prototype.start = function (...args) {
  window.tones.push(this.frequency.value);
  return realStart.apply(this, args);
};
"""
# Every notification the page shows, then the real one.
LISTEN_TO_NOTIFICATIONS = """
window.shown = [];
const RealNotification = window.Notification;
window.Notification = class extends RealNotification {
  constructor(title, options) {
    super(title, options);
    window.shown.push(options.body);
  }
};
"""
MOVE, CAPTURE_TONE, START, LOW_TIME = 660, 520, 440, 880
PAPER = "rgb(251, 250, 245)"  # client.css --paper

ENCODE_URI_COMPONENT_KEEPS = "-_.!~*'()"  # the marks JavaScript's encodeURIComponent leaves as they are


def cell_size(page: Page) -> float:
    """The width on screen of one point's click target: the board's scale times one cell."""
    box = page.locator('#board [data-point="aa"]').bounding_box()
    assert box is not None
    return box["width"]


def no_sideways_scroll(page: Page) -> None:
    width = page.evaluate("document.documentElement.clientWidth")
    assert page.evaluate("document.documentElement.scrollWidth") <= width


def tones(page: Page) -> list[int]:
    return [round(tone) for tone in page.evaluate("window.tones")]


def test_a_39x32_board_takes_the_screen_and_full_screen_gives_it_all(players: tuple[Player, Player]) -> None:
    ala, bob = players  # Ala at 1280x900, Bob on a 390x844 phone
    start_game(ala, bob, size="39x32")
    # 13.5 px a cell before: the lobby and the chat took two columns beside the board
    assert cell_size(ala.page) >= 20
    board = ala.page.locator("#board").bounding_box()
    assert board is not None and board["y"] + board["height"] <= 900  # the whole board in view
    expect(ala.page.locator('[data-propose="resign"]')).to_be_in_viewport()
    no_sideways_scroll(ala.page)
    no_sideways_scroll(bob.page)
    assert bob.page.locator("#board").bounding_box()["width"] <= 390

    before = cell_size(ala.page)
    ala.page.click("#full-screen")
    expect(ala.page.locator("#lobby")).to_be_hidden()
    expect(ala.page.locator("#chat")).to_be_hidden()
    expect(ala.page.locator("#full-screen")).to_have_text("Leave full screen")
    assert cell_size(ala.page) > before
    # the browser's own full screen paints the element black behind dark text unless told otherwise; it
    # comes a moment after the click (requestFullscreen resolves later), so the colour is waited for
    expect(ala.page.locator("#app")).to_have_css("background-color", PAPER)
    ala.play("aa")  # the game goes on in full screen
    bob.sees_dot("aa")
    ala.page.click("#full-screen")
    expect(ala.page.locator("#lobby")).to_be_visible()
    expect(ala.page.locator("#full-screen")).to_have_text("Full screen")


def test_a_point_found_on_the_board_is_still_there_after_the_next_reply(
    players: tuple[Player, Player],
) -> None:
    ala, bob = players
    start_game(ala, bob, size="39x32")
    target = ala.page.locator('#board [data-point="aa"]').element_handle()
    bob.say("hello")  # a reply that renders the game screen again
    ala.sees_chat("hello")
    ala.play("bb")
    bob.sees_dot("bb")
    ala.sees_dot("bb")
    # the same element: one found by a click handler (or a test) between two replies is not thrown away
    assert target.evaluate("(rect) => rect.isConnected")


def test_a_phone_places_a_dot_in_two_taps_aiming_first(players: tuple[Player, Player]) -> None:
    ala, bob = players
    start_game(ala, bob, size="39x32")
    ala.play("aa")
    bob.sees_dot("aa")
    expect(bob.page.locator("#turn")).to_have_text("Your move")
    assert cell_size(bob.page) < 12  # far too small for a finger: hence the aiming

    bob.page.tap('#board [data-point="cc"]')  # the first tap only aims
    expect(bob.page.locator("#aim-marker")).to_have_count(1)
    expect(bob.page.locator("#aim-at")).to_contain_text("Aimed at 3, 3")
    expect(bob.page.locator('#board [data-dot="cc"]')).to_have_count(0)
    for button in ("#aim-place", '[data-nudge="1,0"]'):
        box = bob.page.locator(button).bounding_box()
        assert box is not None and box["width"] >= 44 and box["height"] >= 44  # a finger's size
    bob.page.tap('[data-nudge="1,0"]')  # one point to the right: dc
    expect(bob.page.locator("#aim-at")).to_contain_text("Aimed at 4, 3")
    bob.page.tap("#aim-place")
    bob.sees_dot("dc")
    ala.sees_dot("dc")
    expect(bob.page.locator("#aim")).to_be_hidden()
    expect(bob.page.locator('#board [data-dot="cc"]')).to_have_count(0)

    ala.play("ab")
    bob.sees_dot("ab")
    bob.page.tap('#board [data-point="ee"]')
    bob.page.tap('#board [data-point="ee"]')  # the same point again: placed
    ala.sees_dot("ee")
    # a mouse click (Ala's) places at once, as before
    ala.page.click('#board [data-point="ac"]')
    bob.sees_dot("ac")


@pytest.fixture
def listening(browser: Browser, server: ServerInThread) -> Iterator[tuple[Player, Player]]:
    ala, bob = Player(browser, server), Player(browser, server, phone=True)
    for player in (ala, bob):
        player.context.add_init_script(LISTEN_TO_SOUNDS)
        player.page.reload()
    yield ala, bob
    ala.close()
    bob.close()


def test_sounds_for_the_start_a_move_and_a_capture_and_the_title_says_whose_move(
    listening: tuple[Player, Player],
) -> None:
    ala, bob = listening
    start_game(ala, bob)
    for player in (ala, bob):
        player.page.wait_for_function(f"window.tones.includes({START})")
    expect(ala.page).to_have_title("● Your move · Kropki")
    expect(bob.page).to_have_title("Kropki")
    for side, point in CAPTURE:
        (ala if side == "blue" else bob).play(point)
        (bob if side == "blue" else ala).sees_dot(point)
    expect(ala.page).to_have_title("● Your move · Kropki")
    expect(bob.page).to_have_title("Kropki")
    assert MOVE in tones(bob.page) and CAPTURE_TONE not in tones(bob.page)
    bob.page.uncheck("#sound")  # the switch: Bob hears nothing more
    heard = len(tones(bob.page))
    ala.play("cd")  # closes the ring round cc
    bob.sees_score(1, 0)
    ala.page.wait_for_function(f"window.tones.includes({CAPTURE_TONE})")
    assert len(tones(bob.page)) == heard
    expect(bob.page).to_have_title("● Your move · Kropki")
    expect(ala.page).to_have_title("Kropki")
    bob.page.reload()  # the switch is remembered
    expect(bob.page.locator("#sound")).not_to_be_checked()


def test_an_invitation_and_your_move_are_notified_when_the_tab_is_in_the_background(
    whole_browser: Browser,
    server: ServerInThread,
) -> None:
    ala, bob = Player(whole_browser, server), Player(whole_browser, server)
    bob.context.grant_permissions(["notifications"], origin=server.base)
    bob.context.add_init_script(LISTEN_TO_NOTIFICATIONS)
    bob.page.reload()
    ala.log_in("Ala")
    bob.log_in("Bob")
    bob.page.check("#notify")  # the player opts in
    # the page really loses focus: Playwright's focus emulation off, another tab in front
    bob.context.new_cdp_session(bob.page).send("Emulation.setFocusEmulationEnabled", {"enabled": False})
    other_tab = bob.context.new_page()
    other_tab.bring_to_front()
    assert bob.page.evaluate("document.hasFocus()") is False

    ala.invite("*Bob")
    bob.page.wait_for_function("window.shown.length === 1")
    assert bob.page.evaluate("window.shown")[0].startswith("*Ala invites you")
    expect(bob.page).to_have_title("● Invitation · Kropki")
    bob.accept()  # a click: Bob looks at the page again, then goes back to the other tab
    expect(bob.page.locator("#red-name")).to_have_text("*Bob")
    other_tab.close()
    other_tab = bob.context.new_page()
    other_tab.bring_to_front()
    assert bob.page.evaluate("document.hasFocus()") is False
    ala.play("ee")
    bob.page.wait_for_function("window.shown.length === 2")
    assert bob.page.evaluate("window.shown")[1] == "Your move against *Ala"
    expect(bob.page).to_have_title("● Your move · Kropki")
    other_tab.close()
    ala.close()
    bob.close()


def test_spectators_are_shown_and_the_finished_table_leaves_the_lobby_once_empty(
    browser: Browser,
    server: ServerInThread,
) -> None:
    ala, bob, cyd = Player(browser, server), Player(browser, server, phone=True), Player(browser, server)
    start_game(ala, bob)
    cyd.log_in("Cyd")
    table = cyd.page.locator("#tables li")
    expect(table).to_have_count(1)
    expect(table).to_contain_text("2 here")  # both players, from getBMsg's `b` lines
    cyd.page.click("#tables .watch")
    for player in (ala, bob):
        expect(player.page.locator("#watchers")).to_have_text("Watching: *Cyd")
    expect(table).to_contain_text("3 here")

    ala.resign()
    expect(cyd.page.locator("#turn")).to_contain_text("*Bob wins by resignation")
    expect(table).to_have_count(1)  # finished, but people are still there
    for player in (ala, bob, cyd):
        player.page.click("#leave")
    dan = Player(browser, server, phone=True)
    dan.log_in("Dan")  # comes later: the whole lobby at once
    for player in (cyd, dan):
        expect(player.page.locator("#tables li")).to_have_count(0)
        expect(player.page.locator("#show-finished")).to_have_text("Show finished tables (1)")
    dan.page.click("#show-finished")
    expect(dan.page.locator("#tables li")).to_contain_text("*Bob wins by resignation")  # words, not B+R
    dan.page.select_option("#language", "ua")
    expect(dan.page.locator("#tables li")).to_contain_text("*Bob перемагає: суперник здався")
    dan.page.select_option("#language", "en")
    dan.page.click("#tables .watch")  # still reachable
    expect(dan.page.locator("#turn")).to_contain_text("*Bob wins by resignation")
    for player in (ala, bob, cyd, dan):
        player.close()


def set_up_table(server: ServerInThread, **query: str) -> int:
    made = subprocess.run(
        [sys.executable, "-m", "server", "tournament-key", "--db", server.db_url, "add", "cup"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    query = {"co": "setUpTable", "key": made.stdout.strip(), **query}
    with urlopen(f"{server.base}/a.kropki?{urlencode(query)}", timeout=10) as answer:
        text = answer.read().decode()
    assert text.startswith("ok."), text
    return int(text.removeprefix("ok."))


def test_a_tournament_game_is_labelled_and_its_clock_waits_out_the_say_hi(
    listening: tuple[Player, Player], server: ServerInThread
) -> None:
    ala, bob = listening
    ala.log_in("Ala")
    bob.log_in("Bob")
    # 9 s on each clock, after 8 s of sayHi for the first move: the clock must stand still meanwhile
    set_up_table(
        server,
        gameType="1010s0..a.F.a.9.5..",
        pl1="*Ala",
        pl2="*Bob",
        sayHiTimes="8.8",
        tourn="Autumn Cup",
        tRound="3",
    )
    set_up = time.monotonic()
    for player in (ala, bob):
        expect(player.page.locator("#event-label")).to_have_text("Autumn Cup, round 3 · Standings")
        href = player.page.locator("#event-label a").get_attribute("href")
        assert href == "tournament/Autumn%20Cup/standings"
    clock = ala.page.locator("#blue-clock")
    expect(clock).to_have_text("0:09")
    expect(clock).to_have_class("clock in-grace")
    # 4 s into the sayHi, however long the pages took to show the table (on a slow host, 4 s of sayHi
    # were over before a fixed wait after them was)
    ala.page.wait_for_timeout(max(0.0, set_up + 4 - time.monotonic()) * 1000)
    expect(clock).to_have_text("0:09")  # inside the sayHi: the server's clock does not run either
    expect(clock).to_have_text("0:08", timeout=10000)  # the grace spent, the clock runs
    ala.page.wait_for_function(f"window.tones.includes({LOW_TIME})")  # 9 s is under the 10 s warning
    assert LOW_TIME not in tones(bob.page)  # not Bob's clock
    ala.play("ee")
    bob.sees_dot("ee")


def test_a_tournament_name_with_escaped_characters_is_shown_and_linked_as_the_organiser_wrote_it(
    players: tuple[Player, Player], server: ServerInThread
) -> None:
    """The game type carries the name escaped as free text is (docs/protocol.md): `-` as `&#45;`, `@`
    as `@A`; the label, its round (read from /tournament/<name>) and its link need the name itself."""
    ala, bob = players
    ala.log_in("Ala")
    bob.log_in("Bob")
    name = 'Spring-Cup <"A"> O\'Neil@home'
    set_up_table(server, gameType="1010s0..a.F.n....", pl1="*Ala", pl2="*Bob", tourn=name, tRound="2")
    expect(ala.page.locator("#event-label")).to_have_text(f"{name}, round 2 · Standings")
    href = ala.page.locator("#event-label a").get_attribute("href")
    assert href == f"tournament/{quote(name, safe=ENCODE_URI_COMPONENT_KEEPS)}/standings"


def test_a_player_gives_the_opponent_time_and_pauses_their_clock(players: tuple[Player, Player]) -> None:
    """docs/client.md listed these as "Not done": zagram's `dodajeCzas`, and the `t` command through the
    pauseClock endpoint (the page sends no commands in its polls). Beside the opponent's clock, as
    lichess has its "+15 seconds"; on the phone, where the actions under the board have no row to
    spare."""
    ala, bob = players
    start_game(ala, bob)  # 5 minutes each, Ala (blue) on move: her clock runs
    beside_ala = bob.page.locator("#blue-clock-actions")  # Bob, on the phone, gives Ala time
    expect(beside_ala).to_be_visible()
    expect(bob.page.locator("#red-clock-actions")).to_be_hidden()  # not beside his own clock
    expect(ala.page.locator("#red-clock-actions")).to_be_visible()
    expect(ala.page.locator("#blue-clock-actions")).to_be_hidden()
    for _ in range(4):
        beside_ala.locator(".give-time").click()
    for player in (ala, bob):
        expect(player.page.locator("#blue-clock")).to_have_text(re.compile(r"^6:[2-5]\d$"))
    ala.sees_chat("*Bob added 30 s to the opponent's clock.")

    pause = beside_ala.locator(".pause-clock")
    expect(pause).to_have_attribute("title", "Pause the opponent's clock")
    pause.click()
    for player in (ala, bob):
        expect(player.page.locator("#blue-clock")).to_have_class("clock paused")
        expect(player.page.locator("#blue-clock")).to_have_attribute("title", "Paused")
    expect(pause).to_have_attribute("title", "Let the opponent's clock run")
    paused = ala.page.locator("#blue-clock").text_content()
    ala.page.wait_for_timeout(2100)
    expect(ala.page.locator("#blue-clock")).to_have_text(paused or "")  # it stands still
    ala.play("ee")  # a paused player may still move; Bob's clock runs
    bob.sees_dot("ee")
    pause.click()
    for player in (ala, bob):
        expect(player.page.locator("#blue-clock")).to_have_class("clock")
    expect(pause).to_have_attribute("title", "Pause the opponent's clock")

    ala.resign()
    for player in (ala, bob):
        for which in ("blue", "red"):
            expect(player.page.locator(f"#{which}-clock-actions")).to_be_hidden()


def layouts(player: Player, seconds: float) -> int:
    """How many times the page laid itself out in `seconds` left alone, by Chromium's own count."""
    cdp = player.context.new_cdp_session(player.page)
    cdp.send("Performance.enable")

    def count() -> int:
        metrics = cdp.send("Performance.getMetrics")["metrics"]
        return int(next(metric["value"] for metric in metrics if metric["name"] == "LayoutCount"))

    before = count()
    player.page.wait_for_timeout(seconds * 1000)
    return count() - before


def test_a_game_left_alone_is_laid_out_again_only_when_a_clock_shows_another_second(
    players: tuple[Player, Player],
) -> None:
    """The clocks are drawn every half second, and the running one's text was written every time, the
    same or not: the page was laid out twice a second (21 times in 10 s of a game left alone,
    docs/performance.md), at a player's CPU and battery."""
    ala, bob = players
    start_game(ala, bob)  # 5 minutes each, *Ala on move: her clock runs
    expect(bob.page.locator("#blue-clock")).to_have_text(re.compile(r"^[45]:\d\d$"))
    seen = layouts(bob, 6)
    assert seen <= 9, seen  # six or seven seconds shown: 7 layouts (13 before)


def test_the_page_reads_each_colours_rights_as_the_server_does(players: tuple[Player, Player]) -> None:
    ala, _ = players
    rights = ala.page.evaluate(
        """async () => {
          const p = await import('/protocol.js');
          const desc = (opt) => p.describeGameType(`0808s0..s.F.a.60.5.${opt}.`);
          return ["", "ua", "_SRAP_srap", "_SRATP_s", "c___SUsuenJo_hn"].map((opt) =>
            [1, 2].map((colour) => ["T", "P"].filter((right) => p.mayDo(desc(opt), colour, right)).join("")));
        }"""
    )
    assert rights == [["TP", "TP"], ["TP", "TP"], ["P", "P"], ["TP", ""], ["", ""]]
