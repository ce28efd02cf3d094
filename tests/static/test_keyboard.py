"""The client played with the keyboard alone and heard through a screen reader's eyes, in Debian's
Chromium: every step is a key press (Tab to a control, Enter or Space on it, arrows on the board),
never a click; what a screen reader would say is read from the page's live region (#announcer) and
from Chromium's accessibility tree (role queries, aria snapshots)."""

from __future__ import annotations

import re

from playwright.sync_api import Browser, Locator, Page, expect

from tests.static.served import ServerInThread
from tests.static.test_client import CAPTURE, Player, another_program_logs_in

TABS_AT_MOST = 120  # more Tab presses than the longest way to any control of the page
# A line of an aria snapshot: a role a player operates, with no name after it.
_OPERATED = "button|link|textbox|combobox|checkbox|spinbutton|application|listbox"
_UNNAMED = re.compile(rf"^\s*- ({_OPERATED})\s*(\[.*\])?:?\s*$")
# The focused element in a few words: tag, id, the start of its text
_FOCUSED = "(({ tagName, id, textContent }) => `${tagName}#${id} ${textContent.slice(0, 30)}`)"


def tab_to(page: Page, target: Locator) -> None:
    """Tab forwards, as a player does, until `target` has the focus; fails if Tab never gets there."""
    for _ in range(TABS_AT_MOST):
        if target.evaluate("(element) => element === document.activeElement"):
            return
        page.keyboard.press("Tab")
    raise AssertionError(f"Tab never reached {target}")


def tab_round(page: Page) -> list[str]:
    """The elements Tab visits from the focused one until it is back there (through the browser's own
    stop, outside the page, if the page lets the focus go): a keyboard trap would never come back."""
    page.keyboard.press("Tab")
    start = page.evaluate(f"{_FOCUSED}(document.activeElement)")
    visited = [start]
    for _ in range(TABS_AT_MOST):
        page.keyboard.press("Tab")
        focused = page.evaluate(f"{_FOCUSED}(document.activeElement)")
        if focused == start:
            return visited
        visited.append(focused)
    raise AssertionError(f"Tab never came back to {start}")


def focus_in(page: Page, selector: str) -> bool:
    return page.locator(selector).evaluate("(dialog) => dialog.contains(document.activeElement)")


def focus_held_in(page: Page, selector: str) -> None:
    """Tab and Shift+Tab, twice round the dialog's controls, never reach the page under it: the focus is
    in the dialog, or (after its last control) at the browser's own stop, out of the page."""
    controls = len(tab_round(page))
    for key in ["Tab"] * 2 * controls + ["Shift+Tab"] * 2 * controls:
        page.keyboard.press(key)
        assert focus_in(page, selector) or page.evaluate("document.activeElement === document.body"), key


def log_in_by_keys(player: Player, nick: str) -> None:
    page = player.page
    tab_to(page, page.locator("#nick"))
    page.keyboard.type(nick)
    page.keyboard.press("Enter")
    expect(page.locator("#me")).to_have_text(f"*{nick}")
    expect(page.get_by_role("heading", name="Players")).to_be_focused()  # the form gone, the lobby's start


def announced(player: Player, text: str) -> None:
    expect(player.page.locator("#announcer")).to_contain_text(text)


def unnamed_controls(page: Page) -> list[str]:
    """The controls on screen that a screen reader would read without a name."""
    lines = page.locator("body").aria_snapshot().splitlines()
    return [line.strip() for line in lines if _UNNAMED.match(line)]


def keyboard_players(browser: Browser, server: ServerInThread) -> tuple[Player, Player]:
    return Player(browser, server), Player(browser, server)


def test_a_whole_game_by_keyboard_heard_through_the_live_region(
    browser: Browser, server: ServerInThread
) -> None:
    ala, bob = keyboard_players(browser, server)
    try:
        log_in_by_keys(ala, "Ala")
        log_in_by_keys(bob, "Bob")
        page = ala.page
        expect(page.locator('#players li[data-nick="*Bob"]')).to_have_count(1)
        # "New game": a 10 x 10 board, no-territory rules (STOP), no starting crosses, Ala blue, all by keys
        tab_to(page, page.locator("#new-game summary"))
        page.keyboard.press("Enter")
        for field, key in [("#size", "1"), ("#rules", "n"), ("#crosses", "0"), ("#who", "m")]:
            tab_to(page, page.locator(field))
            page.keyboard.press(key)
        expect(page.locator("#size")).to_have_value("10x10")
        expect(page.locator("#rules")).to_have_value("n")
        expect(page.locator("#who")).to_have_value("a")
        tab_to(page, page.locator('#players li[data-nick="*Bob"] .invite'))
        page.keyboard.press("Enter")

        announced(bob, "*Ala invites you")
        tab_to(bob.page, bob.page.locator("#accept-invitation"))
        bob.page.keyboard.press("Space")

        # the board: focused by Tab, named, its cursor moved by arrows and said with its point's state
        board = page.get_by_role("application", name="Board")
        tab_to(page, board)
        expect(board).to_have_css("outline-style", "solid")  # the focus is seen
        expect(page.locator("#turn")).to_have_text("Your move")
        announced(ala, "6, 6: empty")  # the cursor starts in the middle of an empty board
        for key in ["ArrowLeft", "ArrowLeft", "ArrowUp"]:
            page.keyboard.press(key)
        announced(ala, "4, 5: empty")
        expect(page.locator("#board .cursor")).to_have_count(1)
        page.keyboard.press("Enter")
        ala.sees_dot("de")
        bob.sees_dot("de")  # through the server
        announced(ala, "4, 5: blue dot")
        announced(bob, "*Ala: 4, 5")  # the opponent's move, said

        tab_to(bob.page, bob.page.get_by_role("application", name="Board"))
        expect(bob.page.locator("#turn")).to_have_text("Your move")
        announced(bob, "4, 5: blue dot")  # the cursor starts on the last move
        bob.page.keyboard.press("ArrowRight")
        bob.page.keyboard.press(" ")
        ala.sees_dot("ee")
        announced(ala, "*Bob: 5, 5")

        # chat by keys: the line is heard by the other player
        tab_to(bob.page, bob.page.get_by_role("textbox", name="Message"))
        bob.page.keyboard.type("good luck")
        bob.page.keyboard.press("Enter")
        announced(ala, "*Bob: good luck")

        # a proposal and its answer; the answer's button keeps the focus while the page is drawn again
        tab_to(page, page.locator('[data-propose="undo"]'))
        page.keyboard.press("Enter")
        accept = bob.page.locator("#accept-proposal")
        tab_to(bob.page, accept)
        ala.say("please")  # a chat line draws Bob's page again under his focus
        announced(bob, "*Ala: please")
        bob.page.keyboard.press("Enter")
        expect(bob.page.locator('#board [data-dot="ee"]')).to_have_count(0)
        expect(page.locator('#board [data-dot="ee"]')).to_have_count(0)

        # STOP on Bob's move, heard by Ala; then Bob resigns (asked once, then done), and Ala leaves
        tab_to(bob.page, bob.page.get_by_role("button", name="STOP"))
        bob.page.keyboard.press("Enter")
        announced(ala, "*Bob pressed STOP.")
        tab_to(bob.page, bob.page.locator('[data-propose="resign"]'))
        bob.page.keyboard.press("Enter")
        bob.page.keyboard.press("Enter")
        expect(page.locator("#turn")).to_contain_text("Game over")
        tab_to(page, page.locator("#leave"))
        page.keyboard.press("Enter")
        expect(page.locator("#game")).to_be_hidden()
    finally:
        ala.close()
        bob.close()


def test_every_control_has_a_name_in_the_players_language(browser: Browser, server: ServerInThread) -> None:
    ala, bob = keyboard_players(browser, server)
    try:
        assert unnamed_controls(ala.page) == []
        log_in_by_keys(ala, "Ala")
        log_in_by_keys(bob, "Bob")
        ala.invite("*Bob")
        bob.accept()
        expect(ala.page.locator("#game")).to_be_visible()
        assert unnamed_controls(ala.page) == []
        assert unnamed_controls(bob.page) == []

        ala.page.select_option("#language", "pl")
        expect(ala.page.locator("html")).to_have_attribute("lang", "pl")
        expect(ala.page.get_by_role("application", name="Plansza")).to_be_visible()
        expect(ala.page.get_by_role("textbox", name="Wiadomość")).to_be_visible()
        assert unnamed_controls(ala.page) == []
    finally:
        ala.close()
        bob.close()


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


def test_an_auto_login_links_question_is_a_dialog_a_keyboard_answers(
    browser: Browser, server: ServerInThread
) -> None:
    """The question holds the focus, first on Cancel (the answer that changes nothing), and is read out
    by its title and text; Escape answers Cancel and leaves the focus in the log-in form; Continue by keys
    takes the session over."""
    player = Player(browser, server)
    try:
        another_program_logs_in(player, server)
        page = player.page
        link = f"{server.base}/index.html?id=abc123&opis=*Dora"
        page.goto(link)
        question = page.get_by_role("alertdialog", name="Take over a session?")
        opens = re.compile(r"^This link opens the session of \*Dora ")
        expect(question).to_have_accessible_description(opens)
        expect(page.locator("#takeover-no")).to_be_focused()
        focus_held_in(page, "#takeover")
        page.keyboard.press("Escape")
        expect(question).to_be_hidden()
        expect(page.locator("#nick")).to_be_focused()
        expect(page.locator("#me")).to_have_text("")  # declined: nothing taken over

        page.goto(link)
        expect(page.locator("#takeover-no")).to_be_focused()
        page.keyboard.press("Shift+Tab")
        expect(page.locator("#takeover-yes")).to_be_focused()
        page.keyboard.press("Enter")
        expect(page.locator("#me")).to_have_text("*Dora")
        expect(question).to_be_hidden()
    finally:
        player.close()


def test_a_connection_notice_in_a_dialog_goes_when_the_connection_is_back(
    browser: Browser, server: ServerInThread
) -> None:
    """A "Connection lost" shows in an open dialog's own line (the notice bar is inert under it), and goes
    from there when the server answers again, as it goes from the notice bar."""
    ala, bob = keyboard_players(browser, server)
    try:
        ala.page.goto(f"{server.base}/?transport=poll")  # a failed long poll is what says it
        log_in_by_keys(ala, "Ala")
        bob.log_in("Bob")
        page = ala.page
        tab_to(page, page.locator('#players li[data-nick="*Bob"] .mod-menu'))
        page.keyboard.press("Enter")
        notice = page.get_by_role("dialog", name="Report or moderate").locator(".notice")
        ala.context.set_offline(True)
        bob.say("still there?")  # ends Ala's waiting poll: the next one fails
        expect(notice).to_have_text("Connection lost; trying again…")
        expect(notice).to_be_visible()
        ala.context.set_offline(False)
        bob.say("back?")  # ends the first long poll after it
        expect(notice).to_be_hidden()
        expect(page.locator("#notice")).to_be_hidden()
        expect(page.locator("#mod-reason")).to_be_focused()
    finally:
        ala.close()
        bob.close()


def test_the_focus_stays_in_view_when_its_control_goes_and_escape_withdraws_a_sure(
    browser: Browser, server: ServerInThread
) -> None:
    """A control that goes with what it answered (an invitation rejected or accepted, a proposal
    accepted, a resignation done) leaves the keyboard's focus on the lobby's player list or on the game's
    turn line (which says whose move it is, and does nothing on Enter), not at the page's start; a
    button's "Sure?" is its name while it asks, and Escape withdraws it."""
    ala, bob = keyboard_players(browser, server)
    try:
        log_in_by_keys(ala, "Ala")
        log_in_by_keys(bob, "Bob")
        page = bob.page
        # Bob's browser without checkVisibility (Safari before 17.4): the page's fallback finds the focus
        page.evaluate("delete Element.prototype.checkVisibility")
        # Bob's row drawn first: a row appearing under a click moves "New game" from under it
        expect(ala.page.locator('#players li[data-nick="*Bob"]')).to_have_count(1)
        ala.invite("*Bob")
        tab_to(page, page.locator("#reject-invitation"))
        page.keyboard.press("Enter")
        expect(page.get_by_role("heading", name="Players")).to_be_focused()
        ala.page.click("#invitation button")  # the rejection seen
        ala.page.click('#players li[data-nick="*Bob"] .invite')
        tab_to(page, page.locator("#accept-invitation"))
        page.keyboard.press("Enter")
        turn = page.locator("#turn")
        expect(turn).to_have_text("*Ala to move")
        expect(turn).to_be_focused()

        ala.play("cc")
        ala.page.click('[data-propose="undo"]')
        tab_to(page, page.locator("#accept-proposal"))
        page.keyboard.press("Enter")
        expect(ala.page.locator('#board [data-dot="cc"]')).to_have_count(0)
        expect(turn).to_be_focused()

        resign = page.get_by_role("button", name="Resign")
        tab_to(page, resign)
        page.keyboard.press("Enter")
        asking = page.locator('[data-propose="resign"]')
        ala.say("sure?")  # the page drawn again while it asks
        bob.sees_chat("*Ala: sure?")
        expect(asking).to_have_accessible_name("Sure? Click again")
        page.keyboard.press("Escape")
        assert asking.text_content() == "Resign"  # at once, not when the 4 s are over
        page.keyboard.press("Enter")  # asks again: Escape did not leave it ready to resign
        expect(asking).to_have_text("Sure? Click again")
        expect(turn).not_to_contain_text("Game over")
        page.keyboard.press("Enter")
        expect(turn).to_contain_text("Game over")
        expect(turn).to_be_focused()
        expect(asking).to_be_hidden()
    finally:
        ala.close()
        bob.close()


def test_escape_hides_the_notice_bar(browser: Browser, server: ServerInThread) -> None:
    """A click hides the notice bar; Escape does it for a keyboard, which cannot reach the bar (no control),
    and leaves the focus where it was."""
    player = Player(browser, server)
    try:
        page = player.page
        tab_to(page, page.locator("#nick"))
        page.keyboard.type("Dorota")
        register = page.get_by_role("button", name="Register")
        tab_to(page, register)
        page.keyboard.press("Enter")
        notice = page.locator("#notice")
        expect(notice).to_have_text("Choose a password to register; without one you play as a guest.")
        page.keyboard.press("Escape")
        expect(notice).to_be_hidden()
        expect(register).to_be_focused()
    finally:
        player.close()
