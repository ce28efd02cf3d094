"""What the server says, in each player's language, in Debian's Chromium (1280x900 and a 390x844 phone):
a table's server lines said again from their codes, and refusals as sentences instead of codes."""

from __future__ import annotations

import random
import re
from typing import Any

from playwright.sync_api import Browser, Page, expect

from server.engine.gametype import parse_game_type
from server.hub.clock import ManualTimers
from server.hub.hub import Hub
from server.hub.limits import CHAT_LINES_PER_MINUTE, INVITATIONS_PER_MINUTE
from server.protocol.codec import parse_commands
from tests.static.served import ServerInThread
from tests.static.server_codes import server_codes
from tests.static.test_client import Player, another_program_logs_in, start_game
from tests.static.test_moderation import line_menu, staff


def said(page: Page, lang: str, call: str, argument: Any) -> Any:
    """`call` (a function of lines.js, t and the argument) run in the page, in language `lang`."""
    return page.evaluate(
        f"""async ([lang, argument]) => {{
          const base = document.querySelector("script[type=module]").src;
          const lines = await import(new URL("lines.js", base));
          const {{ translator }} = await import(new URL("i18n.js", base));
          const t = translator(lang);
          return ({call})(lines, t, argument);
        }}""",
        [lang, argument],
    )


def server_lines_of_a_game() -> list[dict[str, str]]:
    """The server lines a real hub writes at a table over two games, as {type, text}."""
    hub = Hub(timers=ManualTimers(), rng=random.Random(1), clock=lambda: 1_700_000_000.0)
    hub.guest_login("ala123", "*Ala", "en")
    hub.guest_login("bob456", "*Bob", "en")
    uid = hub.open_table(parse_game_type("1010noT1F0.120.5"), "*Ala", "*Bob").uid
    for secret, action, argument in [
        ("ala123", "move", "ai"),
        ("bob456", "propose", "undo"),
        ("ala123", "propose", "reject2undo"),
        ("bob456", "give_time", "30"),
        ("bob456", "propose", "draw"),
        ("bob456", "propose", "cancel2draw"),
        ("bob456", "move", "jj"),
        ("ala123", "stop", ""),
        ("bob456", "stop", ""),  # the end of the first game, by score
        ("ala123", "propose", "new"),
        ("bob456", "propose", "new"),  # the second game: *Bob is blue
        ("bob456", "propose", "draw"),
        ("ala123", "propose", "ok1draw"),
    ]:
        do = getattr(hub, action)
        do(secret, str(uid), argument) if argument else do(secret, str(uid))
    hub.games.announce_shutdown()
    return [{"type": e.nick_type, "text": e.text} for e in hub.tables[uid].chat.entries if not e.nick]


def test_every_server_line_a_game_writes_is_read_again_in_ukrainian(players: tuple[Player, Player]) -> None:
    ala, _ = players
    lines = server_lines_of_a_game()
    codes = {line["type"] for line in lines}
    assert codes >= {"u2undo", "reject2undo", "t2", "u2draw", "cancel2draw", "stop1", "W+2", "0", "l1"}
    assert "restart" in codes
    render = "(lines, t, all) => all.map((line) => lines.serverLineText(line, t))"

    # in English the client's sentences are the server's own, word for word: each line was read
    assert said(ala.page, "en", render, lines) == [line["text"] for line in lines]
    ukrainian = said(ala.page, "ua", render, lines)
    assert [text for text, line in zip(ukrainian, lines, strict=True) if text == line["text"]] == []
    assert "*Bob перемагає з рахунком 2:0." in ukrainian
    assert "*Ala відхиляє пропозицію: повернути останній хід." in ukrainian
    assert "*Bob додає суперникові 30 с." in ukrainian
    assert ukrainian[-2:] == [
        "Нічия за згодою.",
        "Сервер перезапускається; ігри продовжаться, коли він повернеться.",
    ]


def server_lines_of_a_team_game() -> list[dict[str, str]]:
    """The server lines only a team game writes (docs/teams.md), by a real hub, as {type, text}."""
    hub = Hub(timers=ManualTimers(), rng=random.Random(1), clock=lambda: 1_700_000_000.0)
    for secret, nick in (("ala1", "*Ala"), ("bob1", "*Bob"), ("cid1", "*Cid"), ("dan1", "*Dan")):
        hub.guest_login(secret, nick, "en")
    game_type = parse_game_type("1010noT1F0.120.5")
    uid = hub.set_up_table(game_type, "*Ala", "*Bob", (0,) * 4, None, None, {}, more=["*Cid", "*Dan"])
    hub.move("ala1", str(uid), "ai")
    hub.propose("bob1", str(uid), "draw")
    hub.propose("ala1", str(uid), "ok2draw")  # *Cid and *Dan have not agreed yet
    hub.propose("dan1", str(uid), "resign")
    hub.change_table("bob1", 0)  # the last of team two: it loses
    return [{"type": e.nick_type, "text": e.text} for e in hub.tables[uid].chat.entries if not e.nick]


def test_every_server_line_of_a_team_game_is_read_again_in_russian(players: tuple[Player, Player]) -> None:
    lines = server_lines_of_a_team_game()
    assert [line["type"] for line in lines] == [
        "u2draw",
        "agree2draw",
        "resigned4",
        "left2",
        "B+R",
        "l1",
        "unratedFree",
    ]
    render = "(lines, t, all) => all.map((line) => lines.serverLineText(line, t))"

    assert said(players[0].page, "en", render, lines) == [line["text"] for line in lines]
    assert said(players[0].page, "ru", render, lines)[1:] == [
        "*Ala принимает предложение: закончить игру вничью; ждём: *Cid, *Dan.",
        "*Dan сдаётся и покидает игру.",
        "*Bob покидает игру.",
        "*Ala, *Cid побеждают: *Bob, *Dan покинули игру.",
        "Игра сохранена под номером 1.",
        "Без рейтинга: товарищеская игра.",
    ]


def test_a_rating_change_is_read_again_with_its_names_and_numbers(players: tuple[Player, Player]) -> None:
    """issue 47: the line a rated game's table gets once it is archived (server/hub/games.py)."""
    render = "(lines, t, line) => lines.serverLineText(line, t)"
    change = "Alice 1500 → 1662 (+162), Bob 1500 → 1338 (-162)."
    rated = {"type": "rated", "text": f"Ratings: {change}"}
    assert said(players[0].page, "pl", render, rated) == f"Rankingi: {change}"
    short = {"type": "unratedShort", "text": "Not rated: fewer than 24 dots were placed."}
    assert said(players[0].page, "ua", render, short) == "Без рейтингу: поставлено менше ніж 24 точки."


def test_a_line_or_refusal_the_client_does_not_know_is_still_readable(players: tuple[Player, Player]) -> None:
    page = players[0].page
    render = "(lines, t, line) => lines.serverLineText(line, t)"
    unknown = {"type": "somethingNew", "text": "A sentence of a newer server."}
    assert said(page, "pl", render, unknown) == "A sentence of a newer server."
    reworded = {"type": "W+R", "text": "*Bob wins, *Ala having resigned."}  # a code known, a text not
    assert said(page, "ru", render, reworded) == "*Bob wins, *Ala having resigned."
    refusal = "(lines, t, answer) => lines.refusalText(answer, t)"
    assert said(page, "ua", refusal, "err.busy") == "Зараз не можна: триває інша гра або запрошення."
    missing = said(page, "pl", refusal, "err.missing.table")
    assert missing == "W żądaniu brakuje czegoś, czego potrzebuje serwer."
    assert said(page, "en", refusal, "err.aNewCode") == "That did not work (the server said: err.aNewCode)."


def resign(player: Player) -> None:
    """The button asks once, in whatever language: a second click does it."""
    button = player.page.locator('[data-propose="resign"]')
    button.click()
    expect(button).to_have_class(re.compile("asking"))
    button.click()


def chat_line(player: Player, text: str) -> None:
    expect(player.page.locator("#chat-lines li", has_text=text)).to_be_visible()


def test_results_and_refusals_in_ukrainian_on_a_desktop_and_polish_on_a_phone(
    players: tuple[Player, Player],
) -> None:
    ala, bob = players  # 1280x900 and 390x844
    expect(ala.page.locator("#language option")).to_have_text(["EN", "PL", "RU", "UA"])
    start_game(ala, bob)
    ala.page.select_option("#language", "ua")
    bob.page.select_option("#language", "pl")
    expect(ala.page.locator("#turn")).to_have_text("Ваш хід")
    ala.page.click('#board [data-point="bc"]')
    bob.sees_dot("bc")

    resign(bob)
    chat_line(ala, "*Ala перемагає: суперник здається.")
    chat_line(bob, "*Ala wygrywa: przeciwnik się poddaje.")
    chat_line(ala, "Гру збережено під номером 1.")
    chat_line(bob, "Gra zapisana pod numerem 1.")
    expect(bob.page.locator("#chat-lines")).not_to_contain_text("won by resignation")

    for player, sentence in [
        (bob, "Ta sama wiadomość po raz kolejny: nie została wysłana."),
        (ala, "Те саме повідомлення ще раз: його не надіслано."),
    ]:
        for _ in range(3):
            player.say("gg")
        player.page.fill("#chat-text", "gg")
        player.page.click("#chat-form button")  # the fourth time in a minute is refused: err.repeatedLine
        expect(player.page.locator("#notice")).to_have_text(sentence)
        expect(player.page.locator("#notice")).to_be_visible()
        expect(player.page.locator("#notice")).not_to_contain_text("repeatedLine")


def test_a_chat_flood_and_an_invitation_flood_are_said_in_words(players: tuple[Player, Player]) -> None:
    """Issue 43: a player who wrote too fast read "the server said: err.chatFlood"."""
    ala, bob = players
    ala.log_in("Ala")
    bob.log_in("Bob")
    bob.page.select_option("#language", "pl")
    for number in range(CHAT_LINES_PER_MINUTE):
        bob.say(f"line {number}")
    bob.page.fill("#chat-text", "one line too many")
    bob.page.click("#chat-form button")
    notice = bob.page.locator("#notice")
    expect(notice).to_have_text("Za dużo wiadomości w ciągu minuty; poczekaj chwilę.")
    expect(notice).not_to_contain_text("err.")

    ala.page.select_option("#language", "ru")
    invite = ala.page.locator('#players li[data-nick="*Bob"] .invite')
    for _ in range(INVITATIONS_PER_MINUTE):
        invite.click()
        expect(ala.page.locator("#invitation")).to_contain_text("*Bob")
        ala.page.click("#cancel-invitation")
        expect(ala.page.locator("#invitation")).to_be_hidden()
    invite.click()
    notice = ala.page.locator("#notice")
    expect(notice).to_have_text("Слишком много приглашений за минуту; подождите немного.")


def test_every_refusal_the_server_can_send_reads_as_a_sentence_in_each_language(
    players: tuple[Player, Player],
) -> None:
    """The codes read from the server's code (tests/static/server_codes.py), through lines.js itself."""
    codes = server_codes()
    assert codes.unreadable == []
    answers = sorted(f"{prefix}{code}" for code in codes.refusals for prefix in ("err.", "nieOk."))
    assert {"err.chatFlood", "nieOk.tooManyRegistrations", "nieOk."} <= set(answers)
    render = "(lines, t, all) => all.map((answer) => lines.refusalText(answer, t))"
    for lang in ("en", "pl", "ru", "ua"):
        sentences = said(players[0].page, lang, render, answers)
        # the fallback quotes the answer: "That did not work (the server said: err.xyz)."
        assert [answer for answer, text in zip(answers, sentences, strict=True) if answer in text] == [], lang


def test_a_ban_reads_with_its_end_and_reason_in_each_language(players: tuple[Player, Player]) -> None:
    """guestLogin's `err.banned.<end>.<reason>` and loguj's `nieOk.banned...` (docs/moderation.md)."""
    render = "(lines, t, all) => all.map((answer) => lines.refusalText(answer, t))"
    answers = ["err.banned.2026-12-01T18:00Z.BUY GOLD. Again.", "nieOk.banned.forGood.engine use"]
    assert said(players[0].page, "pl", render, answers) == [
        "Masz zakaz wstępu na ten serwer do 2026-12-01 18:00 UTC: BUY GOLD. Again.",
        "Masz stały zakaz wstępu na ten serwer: engine use",
    ]
    assert said(players[0].page, "en", render, answers)[0] == (
        "You are banned from this server until 2026-12-01 18:00 UTC: BUY GOLD. Again."
    )


def server_lines_of_players_who_left() -> list[dict[str, str]]:
    """The server lines a real hub writes when players leave their games (server/hub/absences.py): one
    who comes back, one claimed against, one called off, one of a tournament game."""
    timers = ManualTimers()
    hub = Hub(timers=timers, rng=random.Random(1), clock=lambda: 1_700_000_000.0)
    for secret, nick in (("ala1", "*Ala"), ("bob1", "*Bob"), ("cid1", "*Cid"), ("dan1", "*Dan")):
        hub.guest_login(secret, nick, "en")
    free = parse_game_type("1010noT1F0.0.0")
    won = hub.open_table(free, "*Ala", "*Bob").uid
    short = hub.open_table(free, "*Cid", "*Dan").uid
    cup = hub.set_up_table(parse_game_type("1010noT1F0.600.5"), "*Cid", "*Ala", (0, 0), "Cup", "1", {})
    for secret, uid, dot in [
        ("ala1", won, "aa"),
        ("bob1", won, "jj"),
        ("ala1", won, "ab"),
        ("bob1", won, "jh"),
    ]:
        hub.move(secret, str(uid), dot)
    hub.move("cid1", str(short), "aa")
    hub.move("cid1", str(cup), "aa")
    hub.move("ala1", str(cup), "jj")

    def sweep_for(seconds: float, *polling: str) -> None:
        for _ in range(int(seconds / 5)):
            timers.advance(5)
            for secret in polling:
                hub.receive(secret, [])
            hub.sweep()

    hub.logout("bob1")
    hub.logout("dan1")
    sweep_for(10, "ala1", "cid1")
    hub.receive("ala1", parse_commands(f"q1.{cup}."))  # *Ala leaves the tournament game, and comes back
    sweep_for(45, "ala1", "cid1")
    hub.receive("ala1", parse_commands(f"b2.{cup}."))
    sweep_for(30, "ala1", "cid1")
    hub.propose("ala1", str(won), "claim")
    hub.propose("cid1", str(short), "abort")
    return [
        {"type": e.nick_type, "text": e.text}
        for uid in (won, short, cup)
        for e in hub.tables[uid].chat.entries
        if not e.nick
    ]


def test_every_line_about_a_player_who_left_is_read_again_in_each_language(
    players: tuple[Player, Player],
) -> None:
    lines = server_lines_of_players_who_left()
    codes = [line["type"] for line in lines]
    assert codes == [
        *["away2", "claimable2", "B+R", "l1", "unratedFree"],
        *["away2", "claimable2", "Void", "l2", "unratedFree"],
        *["awayClock2", "back2"],
    ]
    render = "(lines, t, all) => all.map((line) => lines.serverLineText(line, t))"
    assert said(players[0].page, "en", render, lines) == [line["text"] for line in lines]
    for lang in ("pl", "ru", "ua"):
        said_again = said(players[0].page, lang, render, lines)
        assert [text for text, line in zip(said_again, lines, strict=True) if text == line["text"]] == [], (
            lang
        )
    assert said(players[0].page, "ru", render, lines)[:3] == [
        "*Bob покидает игру. Если не вернётся за 60 с, *Ala может потребовать победу или отменить игру.",
        "*Bob не вернулся: *Ala может потребовать победу или отменить игру.",
        "*Ala побеждает: *Bob покинул игру и не вернулся.",
    ]
    assert said(players[0].page, "pl", render, lines)[6:8] == [
        "*Dan nie wraca: *Cid może odwołać grę (za mało ruchów, by ją wygrać).",
        "Gra została odwołana: gracz ją opuścił.",
    ]


def test_a_guest_who_types_twenty_letters_is_told_the_star_counts(
    browser: Browser, server: ServerInThread
) -> None:
    """The nick field takes 20 characters and the client puts a guest's `*` in front: the server, whose
    20 include the star (docs/protocol.md), refused 20 letters with "Nicks have 1-20 ... letters"."""
    player = Player(browser, server)
    player.page.fill("#nick", "Abcdefghijklmnopqrst")
    player.page.click("#login button[type=submit]")
    expect(player.page.locator("#notice")).to_have_text(
        "A guest's nick has at most 19 characters after its *."
    )
    expect(player.page.locator("#login")).to_be_visible()
    player.log_in("Abcdefghijklmnopqrs")  # 19 letters and the star
    player.close()


def test_a_session_taken_over_from_another_program_is_told_things_in_the_browsers_language(
    browser: Browser, server: ServerInThread
) -> None:
    """MultiPoints logged in in Polish hands its session to a browser that reads English (an auto-login
    link without `lang`): before, the server went on writing what it tells the player alone (here a
    moderator's mute) in Polish, beside the browser's English."""
    mod = staff(browser, server, "Mod", "moderator")
    player = Player(browser, server)
    another_program_logs_in(player, server)  # *Dora, lang=pl
    player.page.goto(f"{server.base}/index.html?id=abc123&opis=*Dora")
    player.page.click("#takeover-yes")
    expect(player.page.locator("#me")).to_have_text("*Dora")
    player.say("BUY CHEAP GOLD")
    mod.sees_chat("BUY CHEAP GOLD")
    line_menu(mod, "BUY CHEAP GOLD")
    mod.page.select_option("#mod-reason", "spam")
    mod.page.click("#mod-mute")
    expect(player.page.locator("#notice")).to_contain_text("You are muted")
    lobby = player.page.request.get(f"{server.base}/a.kropki?co=getMsg&idGracza=1&msgNo=0").text()
    assert "i*Dora..FK.en" in lobby.split("/")  # K: the browser reads seeks
    for someone in (mod, player):
        someone.close()
