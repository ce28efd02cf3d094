"""The lobby's whole state is built once and shared by every reply that needs it until the next event:
never one build per request."""

from __future__ import annotations

from server.engine.gametype import parse_game_type
from server.hub.clock import ManualTimers
from server.hub.hub import Hub


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


def test_anonymous_readers_share_one_reply_text_until_the_next_event() -> None:
    hub = crowded_hub(ManualTimers())
    first = hub.reply("", 0, with_subscriptions=True)
    assert hub.reply("", 0, with_subscriptions=True) is first  # one text for all: one encoded body
    hub.chat_from("id0000xx", "_*P1", "news")
    assert hub.reply("", 0, with_subscriptions=True) is not first
