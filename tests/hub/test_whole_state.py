"""The lobby's whole state is built once and shared by every reply that needs it until the next event:
never one build per request."""

from __future__ import annotations

import json
from pathlib import Path
from unittest import mock

from server.engine.gametype import parse_game_type
from server.hub.clock import ManualTimers
from server.hub.hub import Hub
from server.hub.limits import Caps
from server.hub.mailbox import LOBBY_HISTORY, TABLE_HISTORY
from server.protocol import events
from server.protocol.codec import parse_commands

BEFORE = Path(__file__).parents[1] / "fixtures" / "stream" / "replies_before_issue19.json"


def crowded_hub(timers: ManualTimers) -> Hub:
    hub = Hub(timers=timers, clock=lambda: 1_700_000_000.0)
    for n in range(200):
        hub.guest_login(f"id{n:04d}xx", f"*P{n}", "en")
    for n in range(0, 40, 2):
        hub.open_table(parse_game_type("0808stanF0.0.0"), f"*P{n}", f"*P{n + 1}")
    return hub


def lobby_lines(reply: str) -> list[str]:
    parts = reply.split("/")
    return parts[parts.index("q0") + 1 : -1]


def test_many_whole_states_at_once_cost_one_build() -> None:
    timers = ManualTimers()
    hub = crowded_hub(timers)
    built = hub.lobby_states_built

    replies = [hub.reply(f"id{n:04d}xx", 0, with_subscriptions=True) for n in range(200)]
    replies += [hub.reply("", 0, with_subscriptions=False) for _ in range(200)]  # anonymous readers

    assert hub.lobby_states_built - built == 2  # one with the subscriptions (getBMsg), one without
    assert len({tuple(lobby_lines(reply)) for reply in replies[40:200]}) == 1  # those at no game table


def test_a_shared_state_is_built_again_after_any_event() -> None:
    timers = ManualTimers()
    hub = crowded_hub(timers)
    hub.reply("", 0, with_subscriptions=False)
    built = hub.lobby_states_built
    hub.reply("", 0, with_subscriptions=False)
    assert hub.lobby_states_built == built  # nothing happened: the same state

    hub.guest_login("late0001", "*Late", "en")
    uid = hub.open_table(parse_game_type("0808stanF0.0.0"), "*P100", "*P101").uid
    fresh = lobby_lines(hub.reply("", 0, with_subscriptions=False))

    assert hub.lobby_states_built == built + 1
    assert "*Late" in fresh[0] and any(line.startswith(f"d{uid}.") for line in fresh)  # pr: everyone now
    assert hub.asks_whole_state("", 0) and not hub.asks_whole_state("", hub.counter.last)


def test_readers_behind_the_lobbys_log_share_one_build_with_the_chat_they_lack() -> None:
    """A msgNo the lobby's log no longer reaches (a client that fell behind, or a restart) gets the
    lobby's whole state again, but not the chat it has had: built for each such reader, that cost 4-10 ms
    with 2,000 tables, a hundred times a second while 4,000 players caught up (issue 19.2)."""
    hub = Hub(timers=ManualTimers(), clock=lambda: 1_700_000_000.0, history=5)
    for n in range(30):
        hub.guest_login(f"id{n:04d}xx", f"*P{n}", "en")
    for n in range(30):
        hub.reply(f"id{n:04d}xx", 0, with_subscriptions=False)  # polled once: msgNos of their own now
    hub.chat_from("id0001xx", "0", "early")
    between = hub.counter.last
    hub.chat_from("id0002xx", "0", "late")
    for n in range(30, 40):  # more than the lobby's log keeps
        hub.guest_login(f"id{n:04d}xx", f"*P{n}", "en")

    with mock.patch.object(events, "people_joined", wraps=events.people_joined) as people_lines:
        behind = [
            lobby_lines(hub.reply(f"id{n:04d}xx", between, with_subscriptions=False)) for n in range(3, 30)
        ]
        from_start = lobby_lines(hub.reply("id0003xx", 0, with_subscriptions=False))

    assert people_lines.call_count == 1  # one `pr` line built: one whole state for all of them
    assert all(lines == behind[0] for lines in behind)
    chat = [line for line in behind[0] if line.startswith("cr")]
    assert len(chat) == 1 and "late" in chat[0]  # not "early", which they had
    assert behind[0] == [line for line in from_start if "early" not in line]
    assert behind[0][0].startswith("pr") and "*P39" in behind[0][0]


def test_anonymous_readers_share_one_reply_text_until_the_next_event() -> None:
    hub = crowded_hub(ManualTimers())
    first = hub.reply("", 0, with_subscriptions=True)
    assert hub.reply("", 0, with_subscriptions=True) is first  # one text for all: one encoded body
    hub.chat_from("id0000xx", "_*P1", "news")
    assert hub.reply("", 0, with_subscriptions=True) is not first


def replies_of_a_lobby(history: int | None = None) -> list[str]:
    """Replies of every kind in a lobby with players, game tables, a player at a table, invitations,
    lobby and table chat, flags, a subscription and a logout: newcomers' first replies (getMsg and
    getBMsg), anonymous readers, news with and without subscription lines, a refused command in a
    first poll, and (`history`) msgNos older than the lobby's log keeps."""
    timers = ManualTimers()
    hub = Hub(timers=timers, clock=lambda: 1_700_000_000.0, history=history)
    out: list[str] = []
    for n in range(30):
        hub.guest_login(f"id{n:04d}xx", f"*P{n}", "en" if n % 3 else "pl")
    kind = parse_game_type("0808stanF0.0.0")
    tables = [hub.open_table(kind, f"*P{n}", f"*P{n + 1}").uid for n in range(0, 8, 2)]
    hub.change_table("id0000xx", tables[0])
    hub.invite("id0010xx", "*P11", "0808stanF0.0.0")
    hub.invite("id0012xx", "*P13", "1010stanF0.0.0")
    hub.chat_from("id0014xx", "0", "hello <all> it's me")
    hub.chat_from("id0000xx", str(tables[0]), "good game")
    hub.receive("id0015xx", parse_commands("i0nJb"))
    hub.receive("id0016xx", parse_commands(f"b1.{tables[1]}."))
    hub.logout("id0017xx")
    mid = hub.counter.last
    for n in range(30, 40):
        hub.guest_login(f"id{n:04d}xx", f"*P{n}", "en")
    # newcomers' first replies: getMsg, getBMsg (msgNo N.0), anonymous readers
    hub.guest_login("new0001x", "*New", "en")
    out.append(hub.reply("new0001x", 0, with_subscriptions=False))
    hub.guest_login("new0002x", "*Newer", "en")
    out.append(hub.reply("new0002x", 0, with_subscriptions=True, subscriptions_seen=False))
    out.append(hub.reply("new0002x", 0, with_subscriptions=True))
    out.append(hub.reply("", 0, with_subscriptions=False))
    out.append(hub.reply("", 0, with_subscriptions=True))
    out.append(hub.reply("", mid, with_subscriptions=False))
    out.append(hub.reply("", mid, with_subscriptions=True))
    # a newcomer whose first poll has a refused command (its own line merged into the lobby's state)
    hub.guest_login("new0003x", "*Third", "en")
    hub.receive("new0003x", parse_commands("z1.0.nothing"))
    out.append(hub.reply("new0003x", 0, with_subscriptions=False))
    # players who polled before: news since `mid`, with and without subscription lines
    for secret in ("id0001xx", "id0010xx", "id0011xx", "id0016xx", "id0000xx"):
        out.append(hub.reply(secret, mid, with_subscriptions=False))
        out.append(hub.reply(secret, mid, with_subscriptions=True))
        out.append(hub.reply(secret, mid, with_subscriptions=True, subscriptions_seen=False))
    last = hub.counter.last
    hub.chat_from("id0020xx", "0", "later")
    out.append(hub.reply("id0021xx", last, with_subscriptions=False))
    out.append(hub.reply("id0021xx", hub.counter.last, with_subscriptions=False))
    # more logins than the lobby's log keeps: an old msgNo gets the whole state again
    for n in range(40, 40 + (history or 0)):
        hub.guest_login(f"id{n:04d}xx", f"*P{n}", "en")
    out.append(hub.reply("id0022xx", mid, with_subscriptions=False))
    out.append(hub.reply("id0023xx", last, with_subscriptions=True))
    out.append(hub.reply("", last, with_subscriptions=True))
    return out


def test_replies_are_byte_identical_to_those_before_the_shared_texts() -> None:
    """The lobby's whole state and news are now slices of shared text (issue 19): every reply must
    still be what the code before gave, byte for byte (the file was written by that code, 4dd17f8), but
    for the one reply whose order was a bug (a newcomer's refused first command, the eighth of each
    list; see the test after this one), written again when it was fixed."""
    before = json.loads(BEFORE.read_text(encoding="utf-8"))
    assert replies_of_a_lobby() == before["default"]
    assert replies_of_a_lobby(20) == before["history 20"]


def test_the_lobbys_i_lines_are_kept_as_the_sessions_have_them() -> None:
    """The whole state joins the i lines the tables keep for the lobby (Tables.lobby_infos) instead of
    visiting every session: they must follow logins, logouts, flags, language and an AI player's
    line built again after it sat down."""
    hub = crowded_hub(ManualTimers())
    hub.receive("id0003xx", parse_commands("i0nJb"))
    hub.change_lang("id0004xx", "pl")
    hub.logout("id0005xx")
    hub.sessions.login_computer("AI easy")
    hub.guest_login("late0001", "*Late", "en")
    people = hub.tables.lobby.people
    assert list(hub.tables.lobby_infos.items()) == [(nick, player.info) for nick, player in people.items()]
    assert hub.tables.lobby_infos.joined == "/".join(filter(None, (p.info for p in people.values())))
    assert hub.tables.lobby_nicks.joined == ".".join(people)
    assert people["AI easy"].info in lobby_lines(hub.reply("late0001", 0, with_subscriptions=False))


def test_a_newcomers_refused_first_command_leaves_its_whole_state_in_order() -> None:
    """Its error line used to be merged by sorting (number, line) pairs that all share the state's
    number, so the whole state came sorted by text: chat and `d` lines before `pr`, `i` before `pr`."""
    hub = crowded_hub(ManualTimers())
    hub.chat_from("id0001xx", "0", "hello")
    hub.guest_login("new0001x", "*Third", "en")
    hub.guest_login("new0002x", "*Fourth", "en")
    hub.receive("new0001x", parse_commands("z1.0.nothing"))
    refused = lobby_lines(hub.reply("new0001x", 0, with_subscriptions=False))
    plain = lobby_lines(hub.reply("new0002x", 0, with_subscriptions=False))

    assert plain[0].startswith("pr")
    assert refused[:-1] == plain
    assert "..e." in refused[-1]  # the error line comes after the state it follows


def test_the_lobby_keeps_news_for_longer_than_a_table_so_a_burst_of_logins_is_news_not_whole_states() -> None:
    """Players logging in at 200 a second made 2,000 lobby events in 5 s: a reader 2 s behind (a poller,
    a push connection whose lobby news is paced) got the whole lobby, 150 KB at 7,000 players, and
    thousands of them at once held gigabytes. The lobby keeps LOBBY_HISTORY events, tables TABLE_HISTORY."""
    assert LOBBY_HISTORY >= 5 * TABLE_HISTORY
    hub = Hub(
        timers=ManualTimers(),
        clock=lambda: 1_700_000_000.0,
        caps=Caps(players=2_000, players_per_address=2_000),
    )
    hub.guest_login("rd00xx", "*Reader", "en")
    hub.reply("rd00xx", 0, with_subscriptions=False)
    seen = hub.counter.last
    for n in range(1_000):  # a few lobby events each: more than a table's log keeps
        hub.guest_login(f"id{n:04d}xx", f"*P{n}", "en")
    assert hub.counter.last - seen > TABLE_HISTORY
    built = hub.lobby_states_built
    assert not hub.asks_whole_state("rd00xx", seen)
    news = lobby_lines(hub.reply("rd00xx", seen, with_subscriptions=False))
    assert hub.lobby_states_built == built and not any(line.startswith("pr") for line in news)
    assert sum(line.startswith("pa") for line in news) == 1_000
