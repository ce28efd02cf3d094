"""Moderation from the built-in client (docs/client.md, "Moderation"), in Debian's Chromium against the server
(tests/static/served.py): a moderator mutes a troll flooding the lobby from a chat line, lifts the mute on the
moderation page, and bans the troll from its name, which keeps a fresh guest from the same network out; a
player reports a line, and the report reaches the moderation page, where an admin closes it."""

from __future__ import annotations

from playwright.sync_api import Browser, expect

from tests.static.served import ServerInThread
from tests.static.test_client import Player
from tests.static.test_keyboard import focus_held_in, focus_in, tab_to
from tests.test_cli import run_cli


def staff(browser: Browser, server: ServerInThread, nick: str, role: str) -> Player:
    """A registered player whom the machine's admin gave a role, logged in again to have it."""
    player = Player(browser, server)
    player.log_in(nick, "moderator's password", register=True)
    named = run_cli("user", "--db", server.db_url, "set-role", nick, role)
    assert named.returncode == 0, named.stderr
    player.page.click("#logout")
    player.log_in(nick, "moderator's password")
    expect(player.page.locator("#moderation-open")).to_be_visible()
    return player


def line_menu(player: Player, text: str) -> None:
    player.page.locator("#chat-lines li", has_text=text).locator(".mod-menu").click()
    expect(player.page.locator("#mod-dialog")).to_be_visible()


def test_a_moderator_mutes_a_flooding_troll_lifts_it_and_bans_its_network(
    browser: Browser, server: ServerInThread
) -> None:
    mod = staff(browser, server, "Mod", "moderator")
    troll, ala = Player(browser, server), Player(browser, server, phone=True)
    troll.log_in("Troll")
    ala.log_in("Ala")
    expect(ala.page.locator(".mod-menu")).not_to_have_count(0)
    expect(ala.page.locator("#moderation-open")).to_be_hidden()  # not a moderator
    for number in range(3):
        troll.say(f"BUY CHEAP GOLD {number}")
    mod.sees_chat("BUY CHEAP GOLD 2")

    line_menu(mod, "BUY CHEAP GOLD 2")
    mod.page.select_option("#mod-reason", "spam")
    mod.page.select_option("#mod-for", "1h")
    mod.page.click("#mod-mute")
    expect(mod.page.locator("#notice")).to_have_text("Done.")
    expect(troll.page.locator("#notice")).to_contain_text("You are muted until")
    expect(troll.page.locator("#notice")).to_contain_text("(spam)")
    troll.page.fill("#chat-text", "BUY CHEAP GOLD 3")
    troll.page.click("#chat-form button")  # refused: the line stays in the box, the notice says why
    expect(troll.page.locator("#notice")).to_contain_text("You are muted")
    expect(troll.page.locator("#chat-text")).to_have_value("BUY CHEAP GOLD 3")
    ala.say("is it over?")
    mod.sees_chat("is it over?")
    expect(mod.page.locator("#chat-lines")).not_to_contain_text("BUY CHEAP GOLD 3")

    mod.page.click("#moderation-open")
    sanction = mod.page.locator("#mod-sanctions li", has_text="*Troll")
    expect(sanction).to_contain_text("muted")
    sanction.locator(".mod-lift").click()
    expect(mod.page.locator("#mod-sanctions")).to_have_text("No active sanctions.")
    mod.page.click("#moderation-close")
    troll.say("sorry")
    mod.sees_chat("sorry")

    mod.page.locator('#players li[data-nick="*Troll"] .mod-menu').click()
    mod.page.select_option("#mod-for", "1d")
    mod.page.fill("#mod-details", "gold again")
    mod.page.click("#mod-ban")
    expect(troll.page.locator("#notice")).to_contain_text("You are banned from this server until")
    expect(mod.page.locator('#players li[data-nick="*Troll"]')).to_have_count(0)
    fresh = Player(browser, server)  # the troll's next guest, from the same network
    fresh.page.fill("#nick", "Guest4711")
    fresh.page.click("#login button[type=submit]")
    expect(fresh.page.locator("#notice")).to_contain_text("You are banned from this server until")
    expect(fresh.page.locator("#notice")).to_contain_text("spam: gold again")
    for player in (mod, troll, ala, fresh):
        player.close()


def test_a_report_reaches_the_moderation_page_and_is_closed(browser: Browser, server: ServerInThread) -> None:
    boss = staff(browser, server, "Boss", "admin")
    ala, troll = Player(browser, server), Player(browser, server)
    ala.log_in("Ala")
    troll.log_in("Troll")
    troll.say("you are all idiots")
    ala.sees_chat("you are all idiots")
    expect(ala.page.locator("#chat-lines li .mod-menu")).to_have_count(1)  # on the others' lines

    line_menu(ala, "you are all idiots")
    expect(ala.page.locator("#mod-mute")).to_have_count(0)  # a player reports; only moderators sanction
    ala.page.select_option("#mod-reason", "insults")
    ala.page.click("#mod-report")
    expect(ala.page.locator("#notice")).to_have_text("Thank you: your report reached the moderators.")

    boss.page.click("#moderation-open")
    report = boss.page.locator("#mod-reports li.mod-report")
    expect(report).to_have_count(1)
    expect(report.locator("p").first).to_contain_text("*Ala reports *Troll (lobby): insults")
    expect(report.locator(".mod-context .reported")).to_have_text("*Troll: you are all idiots")
    report.locator("select").first.select_option("delete")
    report.locator(".mod-closing input").fill("rude")
    report.locator(".mod-close-report").click()
    expect(boss.page.locator("#mod-reports")).to_have_text("No open reports.")
    expect(boss.page.locator("#mod-log")).to_contain_text("report 1 (lobby): delete")
    expect(ala.page.locator("#chat-lines")).not_to_contain_text("you are all idiots")
    for player in (boss, ala, troll):
        player.close()


def test_a_moderator_closes_the_selected_reports_then_all_against_a_troll_in_polish(
    browser: Browser, server: ServerInThread
) -> None:
    """`what=closemany` from the page: the reports ticked, then every open report against the player one
    names, with the page's action choices; the answer `ok.<closed>.<still open>` and the refusals read
    in the page's language, and a refusal closes nothing."""
    boss = staff(browser, server, "Boss", "admin")
    ala, troll, cid = Player(browser, server), Player(browser, server), Player(browser, server)
    ala.log_in("Ala")
    troll.log_in("Troll")
    cid.log_in("Cid")
    for number in range(3):
        troll.say(f"BUY CHEAP GOLD {number}")
    cid.say("hello all")
    ala.sees_chat("hello all")
    for line in ("BUY CHEAP GOLD 0", "BUY CHEAP GOLD 1", "BUY CHEAP GOLD 2", "hello all"):
        line_menu(ala, line)
        ala.page.select_option("#mod-reason", "spam")
        ala.page.click("#mod-report")
        expect(ala.page.locator("#mod-dialog")).to_have_count(0)
    boss.page.select_option("#language", "pl")
    page = boss.page

    page.click("#moderation-open")
    reports = page.locator("#mod-reports li.mod-report")
    notice = page.locator("#moderation .notice")  # the page's own: the notice bar is under it
    expect(reports).to_have_count(4)
    page.click("#mod-close-selected")  # nothing ticked: nothing asked
    expect(notice).to_have_text("Najpierw zaznacz zgłoszenia do zamknięcia.")
    for number in ("1", "4"):  # one against *Troll, one against *Cid
        page.locator(f'li.mod-report[data-report="{number}"] .mod-select').check()
    page.select_option("#mod-many-action", "mute")
    page.click("#mod-close-selected")
    expect(notice).to_have_text("Kara zamyka zgłoszenia tylko jednego gracza naraz.")
    expect(reports).to_have_count(4)  # refused: nothing closed

    page.select_option("#mod-many-action", "none")
    page.fill("#mod-many-note", "checked")
    page.click("#mod-close-selected")
    expect(notice).to_have_text("Zamknięto zgłoszeń: 2; wciąż otwartych: 0.")
    expect(reports).to_have_count(2)
    expect(page.locator("#mod-log")).to_contain_text("report 4 (lobby): none")

    second = page.locator('li.mod-report[data-report="2"]')
    expect(second.locator(".mod-close-against")).to_have_text("Zamknij wszystkie zgłoszenia na *Troll")
    second.locator("select").first.select_option("mute")
    second.locator("select").nth(1).select_option("1h")
    second.locator(".mod-close-against").click()
    expect(notice).to_have_text("Zamknięto zgłoszeń: 2; wciąż otwartych: 0.")
    expect(page.locator("#mod-reports")).to_have_text("Brak otwartych zgłoszeń.")
    expect(page.locator("#mod-log")).to_contain_text("report 3 (lobby): mute")
    expect(page.locator("#mod-sanctions li", has_text="*Troll")).to_have_count(1)  # one mute for both
    expect(troll.page.locator("#notice")).to_contain_text("You are muted until")
    for player in (boss, ala, troll, cid):
        player.close()


def test_the_moderation_page_and_a_players_menu_are_dialogs_a_keyboard_works(
    browser: Browser, server: ServerInThread
) -> None:
    """Opened by Enter, each holds the focus while it is open (Tab goes round its controls only), Escape
    closes it, and the focus is back on what opened it; a report closed and a refusal keep the focus in
    the page, and the refusal is seen and heard there, not in the notice bar under it."""
    boss = staff(browser, server, "Boss", "admin")
    ala, troll = Player(browser, server), Player(browser, server)
    ala.log_in("Ala")
    troll.log_in("Troll")
    troll.say("you are all idiots")
    line_menu(ala, "you are all idiots")
    ala.page.click("#mod-report")
    expect(ala.page.locator("#mod-dialog")).to_have_count(0)
    page = boss.page

    opener = page.locator("#moderation-open")
    tab_to(page, opener)
    page.keyboard.press("Enter")
    moderation = page.get_by_role("dialog", name="Moderation")
    expect(moderation).to_be_visible()
    expect(moderation.locator("li.mod-report")).to_have_count(1)
    assert focus_in(page, "#moderation")
    focus_held_in(page, "#moderation")

    tab_to(page, page.locator("#mod-close-selected"))
    page.keyboard.press("Enter")  # nothing ticked: refused, said in the page
    expect(moderation.get_by_role("status")).to_have_text("First tick the reports to close.")
    expect(page.locator("#mod-close-selected")).to_be_focused()
    tab_to(page, moderation.locator(".mod-close-report"))
    page.keyboard.press("Enter")
    expect(page.locator("#mod-reports")).to_have_text("No open reports.")
    assert focus_in(page, "#moderation")  # the page drawn again, the focus still in it
    page.keyboard.press("Escape")
    expect(page.locator("#moderation")).to_have_count(0)
    expect(opener).to_be_focused()

    menu_button = page.locator('#players li[data-nick="*Troll"] .mod-menu')
    tab_to(page, menu_button)
    page.keyboard.press("Enter")
    menu = page.get_by_role("dialog", name="Report or moderate")
    expect(menu).to_be_visible()
    expect(page.locator("#mod-reason")).to_be_focused()
    focus_held_in(page, "#mod-dialog")
    page.keyboard.press("Escape")
    expect(page.locator("#mod-dialog")).to_have_count(0)
    expect(menu_button).to_be_focused()
    for player in (boss, ala, troll):
        player.close()


def test_a_menu_whose_opener_went_leaves_the_focus_on_the_players_heading(
    browser: Browser, server: ServerInThread
) -> None:
    """A name's menu opened by the mouse, whose player logs out while it is open: the "⋯" that opened it
    went with the player's row, and closing the menu puts the focus on the lobby's "Players" heading
    (where a keyboard's focus lands when its control went), not on the page's start."""
    ala, bob = Player(browser, server), Player(browser, server)
    ala.log_in("Ala")
    bob.log_in("Bob")
    page = ala.page
    page.locator('#players li[data-nick="*Bob"] .mod-menu').click()
    expect(page.locator("#mod-reason")).to_be_focused()
    bob.page.click("#logout")
    expect(page.locator('#players li[data-nick="*Bob"]')).to_have_count(0)
    page.keyboard.press("Escape")
    expect(page.locator("#mod-dialog")).to_have_count(0)
    expect(page.get_by_role("heading", name="Players")).to_be_focused()
    ala.close()
    bob.close()
