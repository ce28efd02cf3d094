"""Private conversations in memory: found by either partner, forgotten after a day, and never more of
them than the caps, the quietest going first."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from server.hub.chat import LOBBY_CHAT_KEPT, PRIVATE_KEPT_LINES, ChatRoom, PrivateChats

T = 1_700_000_000


def test_the_quietest_conversation_goes_first_when_there_are_too_many() -> None:
    chats = PrivateChats(most_talks=3)
    for n, (a, b) in enumerate([("*Ala", "*Bob"), ("*Cyd", "*Dan"), ("*Eve", "*Fay")]):
        chats.add(T + n, a, b, "hi")
    chats.add(T + 5, "*Bob", "*Ala", "again")  # Ala and Bob talk again: Cyd and Dan are the quietest now
    chats.add(T + 6, "*Gus", "*Hal", "hello")

    assert chats.get("*Cyd", "*Dan") is None
    kept = [("*Ala", "*Bob"), ("*Eve", "*Fay"), ("*Gus", "*Hal")]
    assert [len(chats.get(*pair).entries) for pair in kept] == [2, 1, 1]  # type: ignore[union-attr]
    assert chats.partners("*Dan", 0) == [] and chats.lines == 4


def test_too_many_lines_forget_whole_conversations_the_quietest_first() -> None:
    chats = PrivateChats(most_lines=PRIVATE_KEPT_LINES + 10)
    for n in range(PRIVATE_KEPT_LINES + 50):  # the deque keeps the newest PRIVATE_KEPT_LINES
        chats.add(T + n, "*Ala", "*Bob", f"line {n}")
    assert chats.lines == PRIVATE_KEPT_LINES
    for n in range(10):
        chats.add(T + 1000 + n, f"*p{n}", "*Cyd", "hi")
    assert chats.lines == PRIVATE_KEPT_LINES + 10
    chats.add(T + 2000, "*Dan", "*Eve", "one too many")

    assert chats.get("*Ala", "*Bob") is None and chats.lines == 11
    assert len(chats.partners("*Cyd", 0)) == 10


def test_partners_and_forgetting_after_a_day() -> None:
    chats = PrivateChats()
    chats.add(T, "*Ala", "*Bob", "old")
    chats.add(T + 100, "*Ala", "*Cyd", "newer")
    chats.add(T + 200, "*Ala", "*Ala", "a note to myself")

    assert [talk.name for talk, _ in chats.partners("*Ala", T + 50)] == ["*Ala-*Cyd", "*Ala-*Ala"]
    chats.forget_older_than(T + 150)
    assert chats.get("*Ala", "*Bob") is None and chats.get("*Ala", "*Cyd") is None
    assert [talk.name for talk, _ in chats.partners("*Ala", 0)] == ["*Ala-*Ala"]
    chats.forget_older_than(T + 300)
    assert chats.partners("*Ala", 0) == [] and chats.lines == 0


STEPS = st.lists(st.sampled_from(["*Ala writes", "*Bob writes", "*Ala hides", "*Bob hides", "*Ala shown"]))


@given(STEPS)
def test_readable_by_says_whether_anything_is_visible_without_copying_it(steps: list[str]) -> None:
    """Conversation.readable_by, which the restart's sweep of guests' sides asks of every conversation,
    answers as `visible_to` does, through lines written, hidden, shown again and trimmed away."""
    chats = PrivateChats()
    for number, step in enumerate(steps):
        nick, action = step.split()
        other = "*Bob" if nick == "*Ala" else "*Ala"
        if action == "writes":
            for _ in range(PRIVATE_KEPT_LINES // 4):  # enough of them to trim the oldest away
                chats.add(number, nick, other, "hi")
        elif action == "hides":
            chats.hide(nick, other, "198.51.100.0/24")
        else:
            chats.show(nick, other)
        talk = chats.get("*Ala", "*Bob")
        for side in ("*Ala", "*Bob"):
            assert talk is None or talk.readable_by(side) == bool(talk.visible_to(side))


def test_a_line_of_another_member_whose_clock_is_ahead_takes_no_id_of_this_ones() -> None:
    """Another member's lobby line of the next second comes while this member's clock is still in this
    one (members' clocks differ by a little, docs/cluster.md "One lobby"): this member's next line of
    this second is numbered after its own of this second. Before, the counter kept one second only, and
    went back to 0 for it, giving a second line the id of the first."""
    room = ChatRoom(LOBBY_CHAT_KEPT)
    first = room.add(T, "*Ala", "3", "one")
    room.counter.seen(T + 1, 0)  # the other member's, a little ahead
    second = room.add(T, "*Bob", "3", "two")
    assert (first.chat_id, second.chat_id) == (f"{T}_0", f"{T}_1")
    assert room.add(T + 1, "*Ala", "3", "three").chat_id == f"{T + 1}_1"


def test_a_private_line_after_the_wall_clock_stepped_back_takes_no_earlier_lines_id() -> None:
    """Private lines are numbered by one counter of the last 8 seconds too: after a step back, a line
    in the second of an earlier line of its conversation took its id (a report of one quoted the other)."""
    chats = PrivateChats()
    first = chats.add(T, "*Ala", "*Bob", "said at first")
    for n in range(1, 11):
        chats.add(T + 10 * n, "*Cyd", "*Dan", "elsewhere")
    again = chats.add(T, "*Bob", "*Ala", "after the step back")
    assert again.chat_id != first.chat_id
