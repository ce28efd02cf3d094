"""The built-in browser client (server/static) in Debian's Chromium, against the real app as `serve` runs
it (tests/static/served.py), and against a real `serve` process where the server restarts.

Two browser contexts are two players on two machines. Every check waits on what a player sees (the
board's SVG, the scores, the chat), never on sleeps. A screenshot of each player's board at the end of
a test is saved in the test's own temporary folder (pytest keeps the last three runs:
/tmp/pytest-of-<user>/pytest-current/<test>/, or choose the place with --basetemp).
"""

from __future__ import annotations

import base64
import hashlib
import os
import signal
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, ConsoleMessage, Page, expect

from server.config import Settings
from server.engine.record import game_to_record
from server.engine.replay import replay_record
from server.engine.sgf import read_record, write_record
from tests.static.served import ServerInThread
from tests.test_restart import Server

CHROMIUM = "/usr/bin/chromium"
HEADLESS_SHELL = "/usr/bin/chromium-headless-shell"
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "sgf"
# Blue closes a ring round red's dot at cc with its fourth dot, cd (red plays far away meanwhile).
CAPTURE = [("blue", "bc"), ("red", "cc"), ("blue", "cb"), ("red", "jj"), ("blue", "dc"), ("red", "ji")]

expect.set_options(timeout=15_000)
# The client reads the stream over a push connection; KROPKI_BROWSER_TRANSPORT=poll runs the browser
# tests on its long polls instead (it honours `?transport=poll`, server/static/push.js).
FRONT_PAGE = "/?transport=poll" if os.environ.get("KROPKI_BROWSER_TRANSPORT") == "poll" else "/"
# What the pages' Content-Security-Policy (server/web/headers.py) refused, in any test: Chromium writes
# "Refused to ..." in the console, and the pages' securitypolicyviolation events are written there too;
# tests/static/conftest.py fails a test that left anything here.
REFUSED_BY_POLICY: list[str] = []
_REPORT_VIOLATIONS = """
document.addEventListener("securitypolicyviolation", (event) => console.error(
  `Content Security Policy: ${event.effectiveDirective} refused ${event.blockedURI}`,
  `(${event.sourceFile}:${event.lineNumber})`,
));
"""


def new_context(browser: Browser, **options: Any) -> BrowserContext:
    """A browser context whose pages report what the Content-Security-Policy refused."""
    context = browser.new_context(**options)
    context.add_init_script(_REPORT_VIOLATIONS)
    context.on("console", _note_refusal)
    return context


def _note_refusal(message: ConsoleMessage) -> None:
    if message.type == "error" and "Content Security Policy" in message.text:
        REFUSED_BY_POLICY.append(f"{message.text} at {message.location.get('url')}")


class Player:
    """One person in a browser context of their own, with what they see."""

    def __init__(self, browser: Browser, server: ServerInThread | Server, *, phone: bool = False) -> None:
        size = {"width": 390, "height": 844} if phone else {"width": 1280, "height": 900}
        self.context = new_context(browser, viewport=size, is_mobile=phone, has_touch=phone)
        self.page: Page = self.context.new_page()
        self.errors: list[str] = []
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.goto(f"{server.base}{FRONT_PAGE}")

    def log_in(self, nick: str, password: str = "", *, register: bool = False) -> None:
        page = self.page
        page.fill("#nick", nick)
        page.fill("#password", password)
        page.click("#register" if register else "#login button[type=submit]")
        expect(page.locator("#me")).to_have_text(nick if password else f"*{nick.lstrip('*')}")

    def set_new_game(self, *, size: str = "10x10", rules: str = "s", crosses: str = "0") -> None:
        """Open "New game" and set the board there; the inviter plays blue."""
        page = self.page
        page.click("#new-game summary")
        page.select_option("#size", size)
        page.select_option("#rules", rules)
        page.select_option("#crosses", crosses)
        page.select_option("#who", "a")

    def invite(self, nick: str, **game: str) -> None:
        self.set_new_game(**game)
        self.page.click(f'#players li[data-nick="{nick}"] .invite')
        expect(self.page.locator("#invitation")).to_contain_text(nick)

    def accept(self) -> None:
        self.page.click("#accept-invitation")

    def resign(self) -> None:
        """Resign as a person does: the button asks once, and the second click does it."""
        button = self.page.locator('[data-propose="resign"]')
        button.click()
        expect(button).to_have_text("Sure? Click again")
        button.click()

    def play(self, point: str) -> None:
        expect(self.page.locator("#turn")).to_have_text("Your move")
        self.page.click(f'#board [data-point="{point}"]')
        expect(self.page.locator(f'#board [data-dot="{point}"]')).to_have_count(1)

    def sees_dot(self, point: str) -> None:
        expect(self.page.locator(f'#board [data-dot="{point}"]')).to_have_count(1)

    def sees_score(self, blue: int, red: int) -> None:
        expect(self.page.locator("#blue-score")).to_have_text(str(blue))
        expect(self.page.locator("#red-score")).to_have_text(str(red))

    def say(self, text: str) -> None:
        self.page.fill("#chat-text", text)
        self.page.click("#chat-form button")
        expect(self.page.locator("#chat-text")).to_have_value("")

    def sees_chat(self, text: str) -> None:
        expect(self.page.locator("#chat-lines")).to_contain_text(text)

    def screenshot(self, folder: Path, name: str) -> None:
        self.page.locator("#board").screenshot(path=folder / f"{name}-board.png")
        assert (folder / f"{name}-board.png").stat().st_size > 1000

    def close(self) -> None:
        assert self.errors == []
        self.context.close()


def start_game(ala: Player, bob: Player, **game: str) -> None:
    ala.log_in("Ala")
    bob.log_in("Bob")
    expect(ala.page.locator('#players li[data-nick="*Bob"]')).to_have_count(1)
    ala.invite("*Bob", **game)
    expect(bob.page.locator("#invitation")).to_contain_text("*Ala invites you")
    bob.accept()
    for player in (ala, bob):
        expect(player.page.locator("#blue-name")).to_have_text("*Ala")
        expect(player.page.locator("#red-name")).to_have_text("*Bob")


def play_until_the_ring(ala: Player, bob: Player) -> None:
    for side, point in CAPTURE:
        (ala if side == "blue" else bob).play(point)
        (bob if side == "blue" else ala).sees_dot(point)


def test_two_guests_play_capture_take_back_chat_and_resign(
    players: tuple[Player, Player], browser: Browser, server: ServerInThread, tmp_path: Path
) -> None:
    ala, bob = players
    start_game(ala, bob)
    play_until_the_ring(ala, bob)
    ala.play("cd")

    cezary = Player(browser, server)  # a spectator
    cezary.log_in("Cezary")
    cezary.page.click('#tables li[data-table="1"] .watch')
    expect(cezary.page.locator("#turn")).to_have_text("Watching · *Bob to move")
    for player in (ala, bob, cezary):
        expect(player.page.locator("#board polygon.realm-1")).to_have_count(1)
        expect(player.page.locator('#board [data-dot="cc"].captured')).to_have_count(1)
        player.sees_score(1, 0)
    cezary.close()

    ala.page.click('[data-propose="undo"]')
    expect(bob.page.locator("#proposal")).to_contain_text("*Ala proposes: take back the last move")
    bob.page.click("#accept-proposal")
    for player in (ala, bob):
        expect(player.page.locator('#board [data-dot="cd"]')).to_have_count(0)
        expect(player.page.locator("#board polygon")).to_have_count(0)
        player.sees_score(0, 0)

    ala.say("Nice defence / well played @Bob")
    bob.sees_chat("Nice defence / well played @Bob")
    bob.page.click('#players li[data-nick="*Ala"] .message')
    bob.say("thanks, privately")
    ala.page.click('#chat-tabs [data-chat="p*Bob"]')
    ala.sees_chat("thanks, privately")

    resign = ala.page.locator('[data-propose="resign"]')
    resign.click()  # a click alone resigns nothing: the button asks, and forgets the question
    expect(resign).to_have_text("Sure? Click again")
    expect(resign).to_have_text("Resign", timeout=6_000)
    expect(bob.page.locator("#turn")).not_to_contain_text("Game over")
    ala.resign()
    for player in (ala, bob):
        expect(player.page.locator("#turn")).to_have_text("Game over: *Bob wins by resignation")
        expect(player.page.locator("#sgf")).to_be_visible()
    record = bob.page.request.get(bob.page.locator("#sgf").evaluate("link => link.href"))
    assert record.ok and "RE[W+R]" in record.text() and "PB[*Ala]" in record.text()
    ala.screenshot(tmp_path, "ala")
    bob.screenshot(tmp_path, "bob")


def test_a_territory_ring_drawn_by_clicking_own_dots(players: tuple[Player, Player], tmp_path: Path) -> None:
    ala, bob = players
    start_game(ala, bob, rules="t")
    play_until_the_ring(ala, bob)

    for point in ("bc", "cb", "dc"):
        ala.page.click(f'#board [data-point="{point}"]')
    expect(bob.page.locator("#board polyline.drawing")).to_have_count(1)  # the opponent sees it drawn
    ala.page.click('#board [data-point="cd"]')  # the dot that closes the ring: move cd.bccbdccdbc

    for player in (ala, bob):
        expect(player.page.locator("#board polygon.realm-1")).to_have_count(1)
        expect(player.page.locator("#board polyline.drawing")).to_have_count(0)
        player.sees_score(1, 0)
    expect(bob.page.locator("#turn")).to_have_text("Your move")
    ala.screenshot(tmp_path, "ala")
    bob.screenshot(tmp_path, "bob")


def test_the_client_survives_a_restart_of_the_server_mid_game(
    browser: Browser, settings: Settings, tmp_path: Path
) -> None:
    server = Server(tmp_path, settings.db_url)
    with server.running():
        ala, bob = Player(browser, server), Player(browser, server, phone=True)
        start_game(ala, bob)
        ala.play("bc")
        bob.play("cc")
        assert server.stop(signal.SIGTERM) == 0
        expect(ala.page.locator("#notice")).to_have_text("Connection lost; trying again…")
    with server.running():
        for player in (ala, bob):
            expect(player.page.locator("#notice")).to_be_hidden()
            player.sees_dot("bc")
            player.sees_dot("cc")
        ala.play("cb")
        bob.sees_dot("cb")
        bob.play("jj")
        ala.sees_dot("jj")
        ala.screenshot(tmp_path, "ala")
        ala.close()
        bob.close()


def test_a_guest_plays_the_computer(browser: Browser, server: ServerInThread, tmp_path: Path) -> None:
    ala = Player(browser, server)
    ala.log_in("Ala")
    ala.set_new_game()
    ala.page.click('#players li[data-nick="AI easy"] .invite')  # "Play": a game of type A opens at once
    expect(ala.page.locator("#red-name")).to_have_text("AI easy")
    ala.play("ee")
    expect(ala.page.locator("#board .dot-2")).to_have_count(1)  # the computer's answer
    expect(ala.page.locator("#turn")).to_have_text("Your move")
    ala.screenshot(tmp_path, "ala")
    bob = Player(browser, server)
    bob.log_in("Bob")
    expect(bob.page.locator('#tables li[data-table="1"]')).to_have_count(1)
    ala.page.click("#leave")  # issue 47: the AI kept the table on everyone's lobby for up to an hour
    expect(bob.page.locator('#tables li[data-table="1"]')).to_have_count(0, timeout=15_000)
    ala.close()
    bob.close()


def test_a_finished_game_is_analysed_with_dots_of_both_colours_while_the_opponent_watches(
    players: tuple[Player, Player], tmp_path: Path
) -> None:
    ala, bob = players
    start_game(ala, bob)
    ala.play("bc")
    bob.play("cc")
    ala.resign()
    expect(ala.page.locator("#sgf")).to_be_visible()

    ala.page.click("#analyse")  # the archived game at a table of her own, its dots loaded
    expect(ala.page.locator("#turn")).to_have_text("Analysis: the next dot is blue")
    ala.sees_dot("bc")
    ala.sees_dot("cc")
    ala.page.select_option("#next-colour", "red")
    expect(ala.page.locator("#turn")).to_have_text("Analysis: the next dot is red")
    for point in ("ee", "ff"):  # two red dots in a row
        ala.page.click(f'#board [data-point="{point}"]')
        expect(ala.page.locator(f'#board [data-dot="{point}"].dot-2')).to_have_count(1)

    bob.page.click('#tables li[data-table="2"] .watch')
    expect(bob.page.locator("#turn")).to_have_text("Watching · Analysis by *Ala")
    for point in ("ee", "ff"):
        expect(bob.page.locator(f'#board [data-dot="{point}"].dot-2')).to_have_count(1)
    ala.page.click('[data-propose="undo"]')  # at once: there is nobody to ask
    expect(bob.page.locator('#board [data-dot="ff"]')).to_have_count(0)
    ala.page.select_option("#next-colour", "")
    ala.page.click('#board [data-point="gg"]')  # in turn: blue follows red's ee
    expect(bob.page.locator('#board [data-dot="gg"].dot-1')).to_have_count(1)
    expect(ala.page.locator('[data-propose="resign"]')).to_be_hidden()
    ala.screenshot(tmp_path, "ala")
    bob.screenshot(tmp_path, "bob")


def test_an_analysis_board_from_the_lobby(browser: Browser, server: ServerInThread, tmp_path: Path) -> None:
    dora = Player(browser, server)
    dora.log_in("Dora")
    dora.set_new_game(size="15x15", crosses="4")
    dora.page.click("#open-analysis")
    expect(dora.page.locator("#board .dot-1")).to_have_count(8)  # four crosses, two blue dots each
    expect(dora.page.locator("#board .dot-2")).to_have_count(8)
    dora.page.select_option("#next-colour", "blue")
    for point in ("aa", "ba"):
        dora.page.click(f'#board [data-point="{point}"]')
        expect(dora.page.locator(f'#board [data-dot="{point}"].dot-1')).to_have_count(1)
    expect(dora.page.locator("#tables")).to_contain_text("analysis")
    dora.screenshot(tmp_path, "dora")
    dora.close()


def test_a_registered_player_registers_then_logs_in_again(browser: Browser, server: ServerInThread) -> None:
    player = Player(browser, server)
    player.log_in("Celina", "tajne hasło", register=True)
    player.page.click("#logout")
    expect(player.page.locator("#login")).to_be_visible()

    player.page.fill("#nick", "Celina")
    player.page.fill("#password", "wrong")
    player.page.click("#login button[type=submit]")
    expect(player.page.locator("#notice")).to_have_text("Wrong nick or password.")
    player.log_in("Celina", "tajne hasło")
    player.close()


def test_registering_without_a_password_is_refused_not_a_guest_login(
    browser: Browser, server: ServerInThread
) -> None:
    player = Player(browser, server)
    player.page.fill("#nick", "Dorota")
    player.page.fill("#password", "")
    player.page.click("#register")
    expect(player.page.locator("#notice")).to_have_text(
        "Choose a password to register; without one you play as a guest."
    )
    expect(player.page.locator("#login")).to_be_visible()
    assert (
        player.page.request.get(f"{server.base}/a.kropki?co=getMsg&idGracza=1&msgNo=0")
        .text()
        .count("*Dorota")
        == 0
    )
    player.close()


@pytest.mark.parametrize(
    ("nick", "password"), [("name", "mypass"), ("Ala", ""), ("Łukasz", "zażółć"), ("Дима", "пароль 1")]
)
def test_the_id_the_browser_derives_is_the_servers(
    browser: Browser, server: ServerInThread, nick: str, password: str
) -> None:
    digest = hashlib.sha1((nick + "9WB2qGYzzWry1vbVjoSK" + password).encode()).digest()
    expected = base64.b64encode(digest).decode().replace("+", "_").replace("/", ".")[:10]
    player = Player(browser, server)
    derived = player.page.evaluate(
        "async ([nick, pass]) => (await import('/protocol.js')).registeredId(nick, pass)", [nick, password]
    )
    assert derived == expected
    player.close()


def another_program_logs_in(player: Player, server: ServerInThread) -> None:
    """*Dora logs in with the id abc123 from a non-web client (as MultiPoints would)."""
    login = player.page.request.get(
        f"{server.base}/a.kropki?co=guestLogin&idGracza=abc123&opis=*Dora&lang=pl"
    )
    assert login.text() == ""


def test_an_auto_login_link_takes_over_a_live_session_after_asking(
    browser: Browser, server: ServerInThread
) -> None:
    """A non-web client hands its live session to the browser (the seed doc's auto-login link)."""
    player = Player(browser, server)
    another_program_logs_in(player, server)
    player.page.goto(f"{server.base}/index.html?id=abc123&opis=*Dora&lang=pl")
    assert player.page.url == f"{server.base}/index.html"
    expect(player.page.locator("#takeover")).to_contain_text("*Dora")
    expect(player.page.locator("#language")).to_have_value("pl")  # the link's, as the page's words
    expect(player.page.locator("#login")).to_be_visible()  # nothing happens before the player agrees
    player.page.click("#takeover-yes")
    expect(player.page.locator("#me")).to_have_text("*Dora")
    expect(player.page.locator("#players")).to_contain_text("(ty)")
    player.close()


@pytest.mark.parametrize("link", ["id=evil99&opis=*Victim", "id=abc123&opis=*Someone"])
def test_an_auto_login_link_never_makes_a_session(
    browser: Browser, server: ServerInThread, link: str
) -> None:
    """A link with an id its author knows must not log a stranger in: not for an id that is not live,
    nor for a live id under another nick."""
    player = Player(browser, server)
    another_program_logs_in(player, server)
    player.page.goto(f"{server.base}/index.html?{link}")
    player.page.click("#takeover-yes")
    expect(player.page.locator("#notice")).to_be_visible()
    expect(player.page.locator("#login")).to_be_visible()
    lobby = player.page.request.get(f"{server.base}/a.kropki?co=getMsg&idGracza=1&msgNo=0").text()
    assert "*Victim" not in lobby and "*Someone" not in lobby
    player.close()


def test_an_auto_login_link_can_be_declined(browser: Browser, server: ServerInThread) -> None:
    player = Player(browser, server)
    another_program_logs_in(player, server)
    player.page.goto(f"{server.base}/index.html?id=abc123&opis=*Dora")
    player.page.click("#takeover-no")
    expect(player.page.locator("#takeover")).to_be_hidden()
    expect(player.page.locator("#login")).to_be_visible()
    player.close()


@pytest.mark.parametrize(
    "name", ["kropla_zagram302058.sgf", "kropla_zagram312084.sgf", "kropla_zagram318442.sgf"]
)
def test_the_browser_counts_captures_as_the_engine_does(
    browser: Browser, server: ServerInThread, name: str
) -> None:
    # Real zagram games with many realms, some inside others: the client's scores come from the realms
    # in the record alone (protocol.js `position`), the server's from its rules engine.
    replayed = replay_record(read_record((FIXTURES / name).read_text()))
    record = write_record(game_to_record(replayed.game))
    player = Player(browser, server)
    scores = player.page.evaluate(
        """async (record) => {
            const p = await import('/protocol.js');
            const [root, ...nodes] = p.sgfNodes(record);
            const setup = [...(root.AB || []).map((t) => [p.pointFromSgf(t), 1]),
                           ...(root.AW || []).map((t) => [p.pointFromSgf(t), 2])];
            const { score } = p.position(setup, nodes.map(p.moveOfNode).filter(Boolean));
            return [score[1], score[2]];
        }""",
        record,
    )
    assert scores == list(replayed.captured)
    player.close()


def test_a_late_spectator_sees_the_crosses_and_a_new_game_starts_on_an_empty_board(
    players: tuple[Player, Player], browser: Browser, server: ServerInThread, tmp_path: Path
) -> None:
    ala, bob = players
    start_game(ala, bob, crosses="1")  # 10x10: blue ee and ff, red fe and ef
    ala.play("bc")
    bob.play("cc")
    cezary = Player(browser, server)  # comes to watch: the record's set-up node, then the moves
    cezary.log_in("Cezary")
    cezary.page.click('#tables li[data-table="1"] .watch')
    for point in ("ee", "ff", "fe", "ef", "bc", "cc"):
        cezary.sees_dot(point)

    ala.resign()
    expect(bob.page.locator("#turn")).to_have_text("Game over: *Bob wins by resignation")
    bob.page.click('[data-propose="new"]')
    expect(ala.page.locator("#proposal")).to_contain_text("*Bob proposes")
    ala.page.click("#accept-proposal")
    for player in (ala, bob, cezary):  # the new game: colours swapped, only the crosses on the board
        expect(player.page.locator("#blue-name")).to_have_text("*Bob")
        expect(player.page.locator("#board [data-dot]")).to_have_count(4)
    bob.play("bc")  # a point of the old game
    for player in (ala, cezary):
        player.sees_dot("bc")
    ala.play("cc")
    cezary.sees_dot("cc")
    cezary.screenshot(tmp_path, "cezary")
    cezary.close()


def test_a_game_with_two_crosses_from_the_new_game_form(players: tuple[Player, Player]) -> None:
    ala, bob = players
    start_game(ala, bob, crosses="2")  # 10x10: a 4x2 block, B W W B over W B B W (docs/gametype.md)
    for player in (ala, bob):
        expect(player.page.locator("#board .dot-1")).to_have_count(4)
        expect(player.page.locator("#board .dot-2")).to_have_count(4)
    ala.play("bb")
    bob.sees_dot("bb")


def test_a_game_that_ends_before_its_first_move_ends_on_the_game_screen(
    players: tuple[Player, Player],
) -> None:
    """Nothing to archive: the result comes only as the lobby's `x` line, and the game screen shows it."""
    ala, bob = players
    start_game(ala, bob)
    ala.resign()
    for player in (ala, bob):
        expect(player.page.locator("#turn")).to_have_text("Game over: *Bob wins by resignation")
        expect(player.page.locator('[data-propose="resign"]')).to_be_hidden()


def test_the_pages_policy_refuses_an_inline_script(browser: Browser, server: ServerInThread) -> None:
    """What every browser test relies on: a script slipped into a page does not run, and it is seen."""
    player = Player(browser, server)
    refused = player.page.evaluate(
        """() => new Promise((resolve) => {
          document.addEventListener("securitypolicyviolation", (event) => resolve(event.effectiveDirective));
          const script = document.createElement("script");
          script.textContent = "window.slippedIn = true;";
          document.body.append(script);
          if (window.slippedIn) resolve("ran");
        })"""
    )
    assert refused == "script-src-elem"
    assert any("script-src-elem" in text for text in REFUSED_BY_POLICY)  # as every test would see it
    REFUSED_BY_POLICY.clear()  # the test's own doing
    expect(player.page.locator("#login")).to_be_visible()
    player.close()


def test_a_click_on_the_board_holds_while_a_reply_draws_the_board_again_under_the_press(
    players: tuple[Player, Player],
) -> None:
    """Every reply draws the board again; a press on a point that a reply came during (the opponent's
    chat, a clock, the lobby's news on a busy server) lost its click: the point's target was taken out
    of the board and put back between the button's press and its release. (The targets stay in place
    now, and no redraw comes under a press: either alone holds the click.)"""
    ala, bob = players
    start_game(ala, bob)
    expect(ala.page.locator("#turn")).to_have_text("Your move")
    ala.page.locator('#board [data-point="ee"]').hover()
    ala.page.mouse.down()
    bob.say("hello")
    ala.page.wait_for_timeout(500)  # the reply with Bob's line reached Ala's page
    ala.page.mouse.up()
    ala.sees_dot("ee")
    bob.sees_dot("ee")
    ala.sees_chat("hello")


def test_a_click_on_a_lobby_button_holds_while_the_lobby_is_drawn_again_under_the_press(
    players: tuple[Player, Player], browser: Browser, server: ServerInThread
) -> None:
    """The lobby's lists are drawn anew at every reply, several times a second on a busy server: a
    press on a row's button that a reply came during lost its click, the button being a new one."""
    ala, bob = players
    ala.log_in("Ala")
    bob.log_in("Bob")
    ala.set_new_game()
    ala.page.locator('#players li[data-nick="*Bob"] .invite').hover()
    ala.page.mouse.down()
    cid = Player(browser, server)
    cid.log_in("Cid")
    expect(bob.page.locator('#players li[data-nick="*Cid"]')).to_have_count(1)
    ala.page.wait_for_timeout(500)  # the same news reached Ala's page (its lists were drawn anew)
    ala.page.mouse.up()
    expect(ala.page.locator("#invitation")).to_contain_text("*Bob")
    expect(ala.page.locator('#players li[data-nick="*Cid"]')).to_have_count(1)  # drawn after the click
    expect(bob.page.locator("#invitation")).to_contain_text("*Ala invites you")
    cid.close()
