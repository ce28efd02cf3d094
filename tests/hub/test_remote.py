"""The other members' parts of the lobby (server/hub/remote.py), and a whole lobby state that merges
them (server/hub/lobby.py): fed the lines a real hub publishes, not lines written by hand."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from server.engine.gametype import parse_game_type
from server.hub.clock import ManualTimers
from server.hub.hub import Hub
from server.hub.remote import RemoteLobby
from server.protocol import events
from server.protocol.codec import encode_client_text
from tests.hub.test_sessions import poll

GAME = parse_game_type("0808stanF0.0.0")


def hub_with_lines(now: float = 1_764_230_000.0) -> tuple[Hub, list[str]]:
    """A hub whose every lobby line is recorded, as a member's link hears them."""
    hub = Hub(timers=ManualTimers(), clock=lambda: now)
    heard: list[str] = []
    hub.share_lobby(lambda line, b_only: heard.append(line))
    return hub, heard


def test_a_part_follows_the_lines_of_a_real_hub() -> None:
    other, heard = hub_with_lines()
    other.guest_login("alaAla11", "*Ala", "en")
    other.guest_login("bobBob22", "*Bob", "pl")
    table = other.open_table(GAME, "*Ala", "*Bob")
    other.chat_from("alaAla11", "0", encode_client_text("hello"))
    remote = RemoteLobby()
    shown = [line for line in heard if remote.take("kropki-b", line)]
    assert shown == heard  # every line of a real lobby is part of its state
    part = remote.parts["kropki-b"]
    assert list(part.people) == ["*Ala", "*Bob"]
    assert set(part.infos) == {"*Ala", "*Bob"} and part.infos["*Bob"].startswith("i*Bob.")
    assert list(part.tables) == [table.uid]
    description, state = part.tables[table.uid]
    assert description == table.room.description() and state == table.room.state()
    assert [entry.line.split(".", 1)[1] for entry in part.chat] == ["*Ala.1.hello"]
    # the whole part, as the member sends it when asked, rebuilds the same part
    again = RemoteLobby()
    assert again.replace("kropki-b", other.lobby_part())  # all of it is news to a reader who had nothing
    assert again.parts["kropki-b"] == part
    assert again.replace("kropki-b", other.lobby_part()) == []


def test_server_lines_stay_with_their_member() -> None:
    remote = RemoteLobby()
    assert not remote.take("kropki-b", events.chat_added("1764230000_0..s.Server stops in 10 s"))
    assert not remote.parts["kropki-b"].chat


def test_a_whole_part_after_lost_lines_shows_only_what_changed() -> None:
    remote = RemoteLobby()
    for line in (
        "pa*Ala",
        "i*Ala.0.-.en",
        "pa*Bob",
        "i*Bob.0.-.pl",
        "ga7",
        "d7.x.*Ala.*Bob",
        "x7.1.-.",
        "ca1764230000_0.*Ala.0.hi",
    ):
        assert remote.take("kropki-b", line)
    # lost meanwhile: Bob left, Cyd came, table 7 ended, table 9 opened, a line was said and one deleted
    whole = [
        "pr*Ala.*Cyd",
        "gr7.9",
        "d7.x.*Ala.*Bob",
        "x7.1.B+3.",
        "d9.x.*Cyd.*Ala",
        "x9.0.-.",
        "i*Ala.0.-.en",
        "i*Cyd.0.-.de",
        "ca1764230000_0.*Ala.d.",
        "ca1764230001_0.*Cyd.0.yo",
    ]
    assert remote.replace("kropki-b", whole) == [
        "pd*Bob",
        "pa*Cyd",
        "i*Cyd.0.-.de",
        "ga9",
        "x7.1.B+3.",
        "d9.x.*Cyd.*Ala",
        "x9.0.-.",
        "cd1764230000_0",
        "ca1764230001_0.*Cyd.0.yo",
    ]
    assert remote.replace("kropki-b", whole) == []  # the same part again changes nothing


def test_a_member_that_leaves_takes_its_people_and_tables_but_not_its_chat() -> None:
    remote = RemoteLobby()
    for line in ("pa*Ala.*Bob", "ga7.8", "ca1764230000_0.*Ala.0.hi"):
        remote.take("kropki-b", line)
    assert remote.drop("kropki-b") == ["gd7.8", "pd*Ala.*Bob"]
    assert "kropki-b" not in remote.parts
    assert [entry.line for entry in remote.chat()] == ["ca1764230000_0.*Ala.0.hi"]
    assert remote.drop("kropki-b") == []
    # back (a Redis outage ended): its people and tables come again, the chat had is not sent again
    assert remote.replace("kropki-b", ["pr*Ala", "ca1764230000_0.*Ala.0.hi"]) == ["pa*Ala"]
    assert [entry.line for entry in remote.chat()] == ["ca1764230000_0.*Ala.0.hi"]


def test_the_whole_lobby_merges_the_other_members() -> None:
    here, _ = hub_with_lines()
    here.guest_login("cydCyd33", "*Cyd", "de")
    here.chat_from("cydCyd33", "0", encode_client_text("late"))
    other, heard = hub_with_lines(now=1_764_230_000.0 - 60)  # its line was said a minute earlier
    other.guest_login("alaAla11", "*Ala", "en")
    other.guest_login("bobBob22", "*Bob", "pl")
    table = other.open_table(GAME, "*Ala", "*Bob")
    other.chat_from("alaAla11", "0", encode_client_text("early"))
    for line in heard:
        here.take_lobby_line("kropki-b", line, line.startswith("b"))
    state = here.lobby_state.snapshot(0, with_subscriptions=True)[0].split("/")
    assert "pr*Cyd.*Ala.*Bob" in state
    assert f"gr{table.uid}" in state and table.room.description() in state
    assert any(line.startswith("i*Ala.") for line in state) and any(
        line.startswith("b*Ala.") for line in state
    )
    chat = [line.split(".", 3)[-1] for line in state if line.startswith("cr")]
    assert chat == ["early", "late"]  # in time order, whoever's member said them


def test_a_member_that_leaves_takes_from_the_lobby_none_of_the_people_still_in_it() -> None:
    """Found with MultiPoints on two members, one of them SIGKILLed: the member that died took out of
    every reader's list the AI players (every member runs them) and the players whose sessions the
    other had taken over, online there; the lists lacked them until the reader logged in again. A
    member's `pd` for a player who moved on to a third member, heard after that member's `pa`, did the
    same."""
    here, _ = hub_with_lines()
    here.guest_login("cydCyd33", "*Cyd", "de")
    other, heard = hub_with_lines()
    other.guest_login("alaAla11", "*Ala", "en")
    other.guest_login("bobBob22", "*Bob", "pl")
    other.guest_login("cydCyd33", "*Cyd", "de")  # as an AI player is: at both members
    for line in heard:
        here.take_lobby_line("kropki-b", line, line.startswith("b"))
    third, _ = hub_with_lines()
    third.guest_login("danDan44", "*Dan", "en")
    here.take_lobby_part("kropki-c", third.lobby_part())
    seen = poll(here, "cydCyd33", 0).last

    here.guest_login("alaNew55", "*Ala", "en")  # her session taken over here
    here.take_lobby_line("kropki-c", "pa*Bob", False)  # his at the third member, heard first
    here.drop_lobby_part("kropki-b")  # then the member that had them is gone
    here.take_lobby_line("kropki-c", "pd*Dan", False)

    left = [line for line in poll(here, "cydCyd33", seen).lines(0) if line.startswith("pd")]
    assert left == ["pd*Dan"]
    state = here.lobby_state.snapshot(0, with_subscriptions=True)[0].split("/")
    assert "pr*Cyd.*Ala.*Bob" in state  # what a newcomer is shown, and every reader's list now


def test_what_another_member_holds_of_a_players_caps() -> None:
    """RemoteLobby.held_by: the unfinished games and the analysis tables a nick has in a part, read off
    its `d` and `x` lines (the caps of server/hub/limits.py count them)."""
    other, heard = hub_with_lines()
    for secret, nick in [("alaAla11", "*Ala"), ("alAl1", "*Al"), ("bobBob22", "*Bob"), ("cydCyd33", "*Cyd")]:
        other.guest_login(secret, nick, "en")
    other.open_table(GAME, "*Ala", "*Bob")
    finished = other.open_table(GAME, "*Cyd", "*Ala")
    other.propose("cydCyd33", str(finished.uid), "resign")
    other.open_table(GAME, "*Al", "*Bob")  # "*Al" is in "*Ala": the nicks are matched whole
    other.invite("alaAla11", "*Ala", "1010s0..a.a.n...c___SUsuen*Ala.")
    remote = RemoteLobby()
    for line in heard:
        remote.take("kropki-b", line)
    assert remote.held_by("*Ala", False) == 1 and remote.held_by("*Ala", True) == 1
    assert remote.held_by("*Al", False) == 1 and remote.held_by("*Al", True) == 0
    assert remote.held_by("*Cyd", False) == 0 and remote.held_by("*Dan", False) == 0


NICKS = ["*Al", "*Ala", "*Bob", "Cyd"]
TABLE_LINES = st.one_of(
    st.builds(
        lambda kind, uids: f"g{kind}" + ".".join(map(str, uids)),
        st.sampled_from("ard"),
        st.lists(st.integers(1, 4), max_size=3),
    ),
    st.builds(
        lambda uid, blue, red: f"d{uid}.2020s0.4.a.F.a.180.2...{blue}.{red}",
        st.integers(1, 4),
        st.sampled_from(NICKS),
        st.sampled_from(NICKS),
    ),
    st.builds(lambda uid, result: f"x{uid}.1.{result}.", st.integers(1, 4), st.sampled_from(["-", "W+1"])),
)


@given(
    st.lists(st.tuples(st.sampled_from(["kropki-b", "kropki-c"]), TABLE_LINES), max_size=30),
    st.integers(1, 4),
)
def test_a_players_tables_are_found_as_reading_every_table_would(
    lines: list[tuple[str, str]], forgotten: int
) -> None:
    """LobbyPart.seated, which games_of and held_by read, is what every table's `d` line says, after
    any lines (a table opened, described again, closed, a whole list of tables) and a forget_table."""
    remote = RemoteLobby()
    for member, line in lines:
        remote.take(member, line)
    remote.forget_table(forgotten, keep="kropki-c")
    for part in remote.parts.values():
        seated: dict[str, set[int]] = {}
        for uid, (description, _) in part.tables.items():
            for nick in events.described_players(description) if description else []:
                seated.setdefault(nick, set()).add(uid)
        assert {nick: set(uids) for nick, uids in part.seated.items()} == seated
        assert all(len(uids) == len(set(uids)) for uids in part.seated.values())
    for nick in NICKS:
        unfinished = [
            uid
            for part in remote.parts.values()
            for uid, (description, state) in part.tables.items()
            if description
            and nick in events.described_players(description)
            and (not state or state.split(".")[2] == "-")
        ]
        assert sorted(remote.games_of(nick)) == sorted(unfinished)
        assert remote.held_by(nick, False) == len(unfinished)
