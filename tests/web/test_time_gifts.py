"""Gifts of time over the wire (`co=dodajeCzas`): the one past the cap is refused to the giver alone, and
every `f` line keeps seconds that MultiPoints' Integer.parseInt reads."""

from __future__ import annotations

from server.hub.clock import MAX_CLOCK, MAX_GIFT
from tests.web.test_games import Players

TIMED = "0808s0..a.F.a.60.5._SRATP_sratp."  # 8x8, free, the inviter (blue) starts, 60 s + 5 s, gifts allowed
JAVA_INT_MAX = 2**31 - 1


def clock_seconds(flags: str) -> list[int]:
    """The two clocks of an `f<side>_<t1>.<t2>[.g<grace>]` line, as MultiPoints reads them."""
    times = flags.split("_")[1].split(".")[:2]
    return [int(time.removeprefix("p")) for time in times]


async def test_gifts_stop_at_the_cap_with_a_refusal_to_the_giver_and_the_clocks_stay_readable(
    game: Players,
) -> None:
    uid, blue, red = await game.start(TIMED)
    await red.poll()
    gift = dict(co="dodajeCzas", idGracza=blue.secret, stol=str(uid), ile=str(MAX_GIFT))
    answers = [await blue.get(**gift) for _ in range(25)]

    assert answers == [""] * 24 + ["err.clockFull"]  # 24 lift 60 s to 86,460 s; a 25th would pass 90,000
    reply = await red.poll()
    flags = reply.lines(uid, "f")
    assert flags and clock_seconds(flags[-1]) == [60, 60 + 24 * MAX_GIFT]
    assert "A gift may not" not in "/".join(reply.lines(uid) + reply.lines(0))  # the giver's alone
    assert await blue.get(co="dodajeCzas", idGracza=blue.secret, stol=str(uid), ile="3540") == ""
    flags = (await red.poll()).lines(uid, "f")
    assert clock_seconds(flags[-1]) == [60, MAX_CLOCK]
    assert max(clock_seconds(flags[-1])) <= JAVA_INT_MAX
    assert await blue.get(co="dodajeCzas", idGracza=blue.secret, stol=str(uid), ile="1") == "err.clockFull"
