"""A large board on a phone (issue 47, item 5), in Debian's Chromium against the server
(tests/static/served.py): a 39x32 board at 390x844 zoomed by a pinch and by the buttons
(server/static/zoom.js), panned by a finger, a dot placed by two taps while zoomed landing on the point under
the finger, the aim followed out of view; the header on one line and the chat in view under the board; and the
same zoom with a mouse at 1280x900. Fingers are real touch events sent to Chromium (CDP's
Input.dispatchTouchEvent, as Playwright's own tap does); where a point is on the screen is worked out here
from the board's box and its viewBox, not asked of the page's code."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from tests.static.served import ServerInThread
from tests.static.test_client import Player, start_game
from tests.static.test_game_screen import cell_size, no_sideways_scroll

MARGIN, CELL = 22, 20  # board.js: a point's place in the SVG's units is MARGIN + n * CELL
SGF_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
PHONE_HEIGHT = 844
USABLE = 24  # px: WCAG 2.2's smallest target (2.5.8); the aim makes a finger's imprecision harmless


def sgf(x: int, y: int) -> str:
    return SGF_LETTERS[x] + SGF_LETTERS[y]


def view_box(page: Page) -> list[float]:
    return page.evaluate("document.querySelector('#board').getAttribute('viewBox').split(' ').map(Number)")


def drawing_area(page: Page) -> dict[str, float]:
    """The board's content box on the screen (inside its border), where the viewBox is drawn."""
    return page.evaluate(
        """() => {
            const board = document.querySelector("#board"), box = board.getBoundingClientRect();
            const style = getComputedStyle(board), px = (name) => parseFloat(style[name]);
            const left = box.left + px("borderLeftWidth") + px("paddingLeft");
            const top = box.top + px("borderTopWidth") + px("paddingTop");
            return { left, top, width: box.right - px("borderRightWidth") - px("paddingRight") - left,
                     height: box.bottom - px("borderBottomWidth") - px("paddingBottom") - top };
        }"""
    )


def on_screen(page: Page, x: int, y: int) -> tuple[float, float]:
    """Where point (x, y) is drawn: the viewBox fitted into the content box, centred (SVG's default)."""
    left, top, width, height = view_box(page)
    area = drawing_area(page)
    scale = min(area["width"] / width, area["height"] / height)
    offset_x = area["left"] + (area["width"] - width * scale) / 2
    offset_y = area["top"] + (area["height"] - height * scale) / 2
    return offset_x + (MARGIN + x * CELL - left) * scale, offset_y + (MARGIN + y * CELL - top) * scale


def point_size(page: Page) -> float:
    """A point's cell on the screen, from the board's box and viewBox (the game page has no targets)."""
    _, _, width, height = view_box(page)
    area = drawing_area(page)
    return min(area["width"] / width, area["height"] / height) * CELL


def points_in_view(page: Page) -> tuple[range, range]:
    left, top, width, height = view_box(page)
    first_x, first_y = -(-(left - MARGIN) // CELL), -(-(top - MARGIN) // CELL)
    return (
        range(int(first_x), int((left + width - MARGIN) // CELL) + 1),
        range(int(first_y), int((top + height - MARGIN) // CELL) + 1),
    )


def gesture(page: Page, moves: list[list[tuple[float, float]]]) -> None:
    """Fingers down at moves[0], through the rest as fast as CDP goes, lifted while still moving: one
    CDP session, which keeps the touch."""
    session = page.context.new_cdp_session(page)
    for index, points in enumerate(moves):
        touch_points = [{"x": x, "y": y, "id": finger} for finger, (x, y) in enumerate(points)]
        kind = "touchStart" if index == 0 else "touchMove"
        session.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": touch_points})
    session.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
    session.detach()


def pinch(page: Page, spread_from: float, spread_to: float, steps: int = 10) -> None:
    """Two fingers on the board's middle, moving apart (or together) along a line."""
    area = drawing_area(page)
    x, y = area["left"] + area["width"] / 2, area["top"] + area["height"] / 2
    spreads = [spread_from + (spread_to - spread_from) * step / steps for step in range(steps + 1)]
    gesture(page, [[(x - spread / 2, y), (x + spread / 2, y)] for spread in spreads])


def swipe(page: Page, start: tuple[float, float], end: tuple[float, float], steps: int = 10) -> None:
    (x0, y0), (x1, y1) = start, end
    gesture(
        page, [[(x0 + (x1 - x0) * step / steps, y0 + (y1 - y0) * step / steps)] for step in range(steps + 1)]
    )


def bobs_move_on_a_39x32_board(players: tuple[Player, Player]) -> tuple[Player, Player]:
    ala, bob = players  # Ala at 1280x900, Bob on a 390x844 phone
    start_game(ala, bob, size="39x32")
    ala.play("aa")
    bob.sees_dot("aa")
    expect(bob.page.locator("#turn")).to_have_text("Your move")
    return ala, bob


def test_a_pinch_zooms_a_finger_pans_and_two_taps_place_the_dot_under_the_finger(
    players: tuple[Player, Player],
) -> None:
    ala, bob = bobs_move_on_a_39x32_board(players)
    page = bob.page
    whole = cell_size(page)
    assert whole < 12  # 9.3 px: no finger hits that
    expect(page.locator("#zoom-out")).to_be_disabled()

    pinch(page, 60, 240)  # the fingers four times as far apart
    zoomed = cell_size(page)
    assert zoomed >= USABLE and 3.5 * whole <= zoomed <= 4.5 * whole
    expect(page.locator("#board")).to_have_class(re.compile(r"\bzoomed\b"))
    expect(page.locator("#zoom-out")).to_be_enabled()
    assert view_box(page)[2] < 804 / 3.5  # a quarter of the board's width in view

    before = view_box(page)
    area = drawing_area(page)
    middle = (area["left"] + area["width"] / 2, area["top"] + area["height"] / 2)
    swipe(page, middle, (middle[0] - 100, middle[1] - 50))  # the board follows the finger
    after = view_box(page)
    units = zoomed / CELL  # pixels per SVG unit
    assert abs((after[0] - before[0]) - 100 / units) < 2 and abs((after[1] - before[1]) - 50 / units) < 2
    expect(page.locator("#board [data-dot]")).to_have_count(1)  # a drag places nothing
    expect(page.locator("#aim")).to_be_hidden()

    xs, ys = points_in_view(page)
    x, y = xs[2], ys[3]  # not the middle: off-centre errors show
    finger = on_screen(page, x, y)
    # at once after a quick drag: had it flung the board, Chromium would take this tap as the one
    # that stops the fling and click nothing
    page.touchscreen.tap(*finger)
    expect(page.locator("#aim-at")).to_contain_text(f"Aimed at {x + 1}, {y + 1}")
    expect(page.locator("#board [data-dot]")).to_have_count(1)
    assert view_box(page) == after  # aiming at a point in view does not move the board
    page.touchscreen.tap(*finger)  # the same place again: played there
    bob.sees_dot(sgf(x, y))
    ala.sees_dot(sgf(x, y))
    expect(page.locator("#aim")).to_be_hidden()
    assert view_box(page) == after  # the reply redraws the board at the same zoom


def test_the_buttons_zoom_around_the_aim_and_a_nudged_aim_stays_in_view(
    players: tuple[Player, Player],
) -> None:
    ala, bob = bobs_move_on_a_39x32_board(players)
    page = bob.page
    for button in ("#zoom-in", "#zoom-out", "#zoom-fit"):
        box = page.locator(button).bounding_box()
        assert box is not None and box["width"] >= 44 and box["height"] >= 44  # a finger's size
    whole = cell_size(page)
    page.tap('#board [data-point="kg"]')  # aim first, on the whole board
    expect(page.locator("#aim-at")).to_contain_text("Aimed at 11, 7")
    aimed = on_screen(page, 10, 6)
    page.tap("#zoom-in")
    page.tap("#zoom-in")
    assert abs(cell_size(page) - 2.25 * whole) < 0.5  # 1.5 x 1.5 times
    zoomed = on_screen(page, 10, 6)
    assert abs(zoomed[0] - aimed[0]) < 1 and abs(zoomed[1] - aimed[1]) < 1  # the aim stays under the finger
    while page.locator("#zoom-in").is_enabled():
        page.tap("#zoom-in")
    assert cell_size(page) >= 40  # as far as it goes: seven points across a phone
    expect(page.locator("#board [data-dot]")).to_have_count(1)

    xs, _ = points_in_view(page)
    nudges = xs[-1] - 10 + 2  # two points past the right edge of the view
    for _ in range(nudges):
        page.tap('[data-nudge="1,0"]')
    x = 10 + nudges
    expect(page.locator("#aim-at")).to_contain_text(f"Aimed at {x + 1}, 7")
    assert x in points_in_view(page)[0]  # the board followed the aim
    page.tap("#aim-place")
    bob.sees_dot(sgf(x, 6))
    ala.sees_dot(sgf(x, 6))

    page.tap("#zoom-fit")  # the whole board again
    assert cell_size(page) < 12
    assert view_box(page) == [0, 0, 2 * MARGIN + 38 * CELL, 2 * MARGIN + 31 * CELL]
    expect(page.locator("#zoom-fit")).to_be_disabled()


def test_on_a_phone_the_header_is_one_line_and_the_chat_is_in_view_under_the_board(
    players: tuple[Player, Player],
) -> None:
    ala, bob = bobs_move_on_a_39x32_board(players)
    page = bob.page
    header = page.locator("header").bounding_box()
    assert header is not None and header["height"] <= 56  # 100 px before, on two lines
    for switch in ("#language", "#theme", "#sound", "#logout"):
        expect(page.locator(switch)).to_be_in_viewport()  # all there, on that line
    page.evaluate("scrollTo(0, 0)")  # the page as it opens
    board = page.locator("#board").bounding_box()
    assert board is not None and board["y"] + board["height"] <= PHONE_HEIGHT
    for part in ("#chat-tabs", "#chat-lines", "#chat-text", "#chat-form button"):
        box = page.locator(part).bounding_box()
        assert box is not None and box["y"] >= board["y"] + board["height"]  # under the board
        assert box["y"] + box["height"] <= PHONE_HEIGHT, part  # and in view without scrolling
    actions = page.locator("#actions").bounding_box()
    assert actions is not None and actions["height"] <= 2 * 44  # six buttons in two rows
    chat = page.locator("#chat").bounding_box()
    lobby = page.locator("#lobby").bounding_box()
    assert chat is not None and lobby is not None and chat["y"] < lobby["y"]  # the lobby's lists below
    no_sideways_scroll(page)
    bob.say("hello from the phone")
    ala.sees_chat("hello from the phone")
    assert page.evaluate("scrollY") == 0


def test_a_mouse_zooms_with_the_buttons_and_ctrl_wheel_drags_and_still_clicks_a_point(
    players: tuple[Player, Player],
) -> None:
    ala, bob = players
    start_game(ala, bob, size="39x32")
    page = ala.page
    whole = cell_size(page)
    page.click("#zoom-in")
    assert abs(cell_size(page) - 1.5 * whole) < 0.5
    area = drawing_area(page)
    middle = (area["left"] + area["width"] / 2, area["top"] + area["height"] / 2)
    page.mouse.move(*middle)
    page.keyboard.down("Control")
    page.mouse.wheel(0, -100)  # Ctrl and the wheel (a touchpad's pinch) zoom the board, not the page
    page.keyboard.up("Control")
    assert abs(cell_size(page) - 2.25 * whole) < 0.5

    before = view_box(page)
    page.mouse.down()
    page.mouse.move(middle[0] - 150, middle[1], steps=10)
    page.mouse.up()
    after = view_box(page)
    assert abs((after[0] - before[0]) - 150 / (cell_size(page) / CELL)) < 2
    expect(page.locator("#board [data-dot]")).to_have_count(0)  # a drag is not a click

    xs, ys = points_in_view(page)
    x, y = xs[1], ys[-2]
    page.mouse.click(*on_screen(page, x, y))  # a mouse places at once, zoomed or not
    ala.sees_dot(sgf(x, y))
    bob.sees_dot(sgf(x, y))
    page.click("#zoom-fit")
    assert abs(cell_size(page) - whole) < 0.5
    expect(page.locator('[data-propose="resign"]')).to_be_in_viewport()


def test_the_game_page_replay_zooms_as_the_client_does(
    players: tuple[Player, Player], server: ServerInThread
) -> None:
    ala, bob = players
    start_game(ala, bob, size="39x32")
    ala.play("aa")
    bob.play("bb")
    ala.resign()
    expect(bob.page.locator("#sgf")).to_be_visible()  # archived as game 1
    page = bob.context.new_page()  # the phone
    page.goto(server.base + "/game/1")
    expect(page.locator("body[data-ready]")).to_have_count(1)
    whole = point_size(page)
    pinch(page, 60, 180)
    assert abs(point_size(page) - 3 * whole) < 0.5
    page.tap("#zoom-in")
    assert abs(point_size(page) - 4.5 * whole) < 0.5
    page.click("#first")  # another move shown: the same zoom
    expect(page.locator("#board .dot")).to_have_count(0)
    assert abs(point_size(page) - 4.5 * whole) < 0.5
    page.tap("#zoom-fit")
    assert abs(point_size(page) - whole) < 0.5
    no_sideways_scroll(page)
    page.close()


def test_escape_gives_the_aim_up_and_the_focus_goes_back_to_the_board(players: tuple[Player, Player]) -> None:
    """The aim is as passing as a dialog: Escape gives it up and plays nothing, and a focus in its box (a
    nudge tapped) goes back to the board, where the aim began; a tap then aims afresh. "Cancel" does the
    same."""
    ala, bob = players
    start_game(ala, bob)
    ala.play("aa")
    bob.sees_dot("aa")
    page = bob.page
    page.tap('#board [data-point="ee"]')
    expect(page.locator("#aim-at")).to_contain_text("Aimed at 5, 5")
    nudge = page.locator('[data-nudge="1,0"]')
    nudge.tap()
    expect(page.locator("#aim-at")).to_contain_text("Aimed at 6, 5")
    expect(nudge).to_be_focused()
    page.keyboard.press("Escape")
    expect(page.locator("#aim")).to_be_hidden()
    expect(page.locator("#board")).to_be_focused()
    page.tap('#board [data-point="fe"]')  # the point aimed at before: had the aim stayed, played now
    expect(page.locator("#aim-at")).to_contain_text("Aimed at 6, 5")
    page.keyboard.press("Escape")  # the focus on the board: it stays there
    expect(page.locator("#aim")).to_be_hidden()
    expect(page.locator("#board")).to_be_focused()
    page.tap('#board [data-point="fe"]')
    page.tap("#aim-cancel")  # as Escape: its box gone, the focus back on the board
    expect(page.locator("#aim")).to_be_hidden()
    expect(page.locator("#board")).to_be_focused()
    expect(page.locator("#turn")).to_have_text("Your move")
    for player in (ala, bob):
        expect(player.page.locator("#board [data-dot]")).to_have_count(1)
