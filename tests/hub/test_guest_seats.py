"""The caps a game start checks read indexes, not a walk of every open table (docs/performance.md,
2026-12-02): Limits.games_of the tables with a seat of the player's nick (Tables.seats), and
Limits.guest_tables the counts of the tables each address's and network's guests hold (GuestSeats).
Both must count exactly what the walks they replaced counted, whatever happened to the tables: opened by
invitation, team invitation, organiser or analysis, seats taken back by a guest's new session (from
another host of its network too) or moved to a renamed account's new nick, games ended, taken back,
begun again, tables left and closed for absence, tournament entries made and withdrawn, the server
restarted from its journal."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable

from hypothesis import given, settings
from hypothesis import strategies as st

from server.engine.gametype import parse_game_type
from server.hub.clock import ManualTimers
from server.hub.hub import Hub
from server.hub.limits import Caps, Limits, held_at
from server.hub.model import Origin, Player, Table, reserved
from server.hub.persistence import Account
from server.hub.saved import SWEEP_EVERY
from server.protocol.codec import ProtocolError, nick_key
from tests.hub.test_restore import RecordingPersistence

FREE = "0808s0..a.F.n...."  # 8x8, free, the inviter blue, no clock
UNTIMED = parse_game_type(FREE)
NICKS = ("*Ala", "*Bob", "*Cid", "*Dan", "*Eve", "Fay")
HOSTS = ("198.51.100.1", "198.51.100.2", "203.0.113.4")  # two of one network, one of another
CAPS = Caps(guest_tables_per_address=2, network_factor=2, games_per_player=2, analysis_per_player=1)
WHO = st.sampled_from(range(len(NICKS)))
STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("invite"), WHO, WHO),
        st.tuples(st.just("play"), WHO, WHO),  # invited and accepted
        st.tuples(st.just("team"), WHO, st.permutations(range(len(NICKS)))),  # invited, all accept
        st.tuples(st.just("answer"), WHO, st.sampled_from("ar")),
        st.tuples(st.just("analyse"), WHO, st.just(0)),
        st.tuples(st.just("cup"), WHO, WHO),  # an organiser's table, its players entered in the Cup
        st.tuples(st.just("withdraw"), WHO, st.just(0)),  # from the Cup
        st.tuples(st.just("move"), WHO, st.sampled_from(["cc", "dd", "ee", "ff"])),
        st.tuples(st.just("propose"), WHO, st.sampled_from(["resign", "resign", "undo", "new"])),
        st.tuples(st.just("agree"), WHO, st.sampled_from(["ok1new", "ok2new", "ok1undo", "ok2undo"])),
        st.tuples(st.just("leave"), WHO, st.just(0)),
        st.tuples(st.just("again"), WHO, st.sampled_from(range(len(HOSTS)))),  # a new session, any host
        st.tuples(st.just("wait"), st.sampled_from([SWEEP_EVERY, 600.0, 3600.0]), st.booleans()),  # polling?
        st.tuples(st.just("restart"), st.just(0), st.just(0)),
    ),
    max_size=50,
)


def origin(index: int, host: int) -> Origin:
    """*Eve's address is --unlimited; the others' are limited."""
    address = HOSTS[host]
    return Origin(address, unlimited=NICKS[index] == "*Eve", network=address.rsplit(".", 1)[0] + ".0/24")


class People:
    """Each nick's current session (a guest's next one is a new session: it takes its seats back from
    its network) and where it logs in from."""

    def __init__(self) -> None:
        self.sessions = [0] * len(NICKS)
        self.hosts = [index % len(HOSTS) for index in range(len(NICKS))]
        self.renamed = 0  # how many times an admin renamed Fay's account: Fay, Fay1, Fay2, ...

    def nick(self, index: int) -> str:
        if NICKS[index].startswith("*") or not self.renamed:
            return NICKS[index]
        return f"{NICKS[index]}{self.renamed}"

    def secret(self, index: int) -> str:
        name = f"{NICKS[index][-3:].lower()}{self.sessions[index]}"
        return name if NICKS[index].startswith("*") else f"{name}_account"  # guests' ids: 1-9 characters

    def login(self, hub: Hub, index: int) -> None:
        if NICKS[index].startswith("*"):
            hub.guest_login(self.secret(index), NICKS[index], "en", origin(index, self.hosts[index]))
        else:
            account = Account(self.nick(index), 1500, 0, 0, 0, login_key="fay", number=6)
            hub.login(self.secret(index), account)

    def online(self, hub: Hub) -> list[Player]:
        return [player for player in (hub.requester(self.secret(n)) for n in range(len(NICKS))) if player]


def walked_counts(limits: Limits, tables: Iterable[Table]) -> tuple[Counter[str], Counter[str]]:
    """What Limits.guest_tables counted by walking every open table: the tables of each address's and
    network's guests, and their entries waiting for a tournament's table."""
    hosts, networks = Counter[str](), Counter[str]()
    seated = set()
    for table in tables:
        places = table.guest_places.values()
        if places:
            hosts.update({host for host, _ in places if host})
            networks.update({network for host, network in places if host})
            room = table.room
            if room is not None and room.auto is not None and room.auto.tournament is not None:
                if room.game.result is None:
                    seated.update((room.auto.tournament, nick_key(n)) for n in table.guest_places)
    for entry, (_, host, network) in limits.entries.items():
        if entry not in seated:
            hosts[host] += 1
            networks[network] += 1
    return hosts, networks


def walked_refuses(limits: Limits, tables: Iterable[Table], *players: Player) -> bool:
    """Whether Limits.guest_tables as it was (the walk) refused any of these players; which one, and its
    words, are the unchanged code's after the counts."""
    counted = [p for p in players if p.guest and p.host and not p.unlimited and not reserved(p.nick)]
    hosts, networks = walked_counts(limits, tables)
    most, factor = limits.caps.guest_tables_per_address, limits.caps.network_factor
    return any(hosts[p.host] >= most or networks[p.network] >= most * factor for p in counted)


def refusal(check, *args, **kwargs) -> str | None:  # type: ignore[no-untyped-def]
    try:
        check(*args, **kwargs)
    except ProtocolError as refused:
        return f"{refused.code}: {refused}"
    return None


def assert_the_indexes_say_what_the_walks_say(hub: Hub, people: People) -> None:
    tables, limits = hub.tables, hub.ctx.limits
    every = list(tables.values())
    expected_seats: dict[str, set[int]] = {}
    for table in every:
        if table.room is not None:
            for nick in table.room.lineup.seats:
                expected_seats.setdefault(nick, set()).add(table.uid)
    assert {nick: set(uids) for nick, uids in tables.seats.items()} == expected_seats
    seats = tables.guest_seats
    hosts, networks = Counter[str](), Counter[str]()
    by_key: dict[str, set[int]] = {}
    for table in every:
        places = table.guest_places
        hosts.update({host for host, _ in places.values() if host})
        networks.update({network for host, network in places.values() if host})
        for nick in places:
            by_key.setdefault(nick_key(nick), set()).add(table.uid)
    assert seats.hosts == hosts and seats.networks == networks
    assert {key: set(found) for key, found in seats.by_key.items()} == by_key
    assert set(seats.held) == {uid for table in every for uid in [table.uid] if table.guest_places}
    online = people.online(hub)
    for player in online:
        for analysis in (False, True):
            # games_of counts the tables with a seat of the nick, where it walked every open one
            walked = held_at(every, player, analysis=analysis)
            assert held_at(tables.seated_at(player.nick), player, analysis=analysis) == walked
        for other in online:
            refused = refusal(limits.guest_tables, tables, player, other, asking=other)
            assert (refused is not None) == walked_refuses(limits, every, player, other), refused
        refused = refusal(limits.guest_tables, tables, player)
        assert (refused is not None) == walked_refuses(limits, every, player), refused


def step(hub: Hub, people: People, timers: ManualTimers, kind: str, who: int, what: object) -> None:
    if kind == "wait":
        timers.advance(float(who))
        for player in hub.players.values():
            if what:  # everyone polled meanwhile: only the tables close that their players left
                player.last_seen = timers.now()
        hub.sweep()
        return
    secret, nick = people.secret(who), people.nick(who)
    player = hub.requester(secret)
    mine = [uid for uid in player.tables if uid in hub.tables] if player is not None else []
    table = str(mine[-1]) if mine else "1"
    if kind == "invite":
        hub.invite(secret, people.nick(what), FREE)  # type: ignore[index]
    elif kind == "play":
        hub.invite(secret, people.nick(what), FREE)  # type: ignore[index]
        hub.answer_invitation(people.secret(what), "a", nick)  # type: ignore[arg-type]
    elif kind == "team":
        others = [other for other in what if other != who][:3]  # type: ignore[attr-defined]
        hub.invite(secret, ",".join(people.nick(other) for other in others), FREE)
        for other in others:
            hub.answer_invitation(people.secret(other), "a", nick)
    elif kind == "answer":
        hub.answer_invitation(secret, str(what))
    elif kind == "analyse":
        hub.invite(secret, nick, f"0808s0..a.a.n...c___SUsuen{nick}.")
    elif kind == "cup":
        other = people.nick(what)  # type: ignore[index]
        hub.set_up_table(UNTIMED, nick, other, (0, 0), "Cup", "1", {})
        for entrant in (nick, other):
            online = hub.roster.online(entrant)
            if online is not None:
                hub.ctx.limits.entered_tournament("Cup", online)
    elif kind == "withdraw":
        hub.ctx.limits.entry_ended("Cup", nick)
    elif kind == "move":
        hub.move(secret, table, str(what))
    elif kind in ("propose", "agree"):
        hub.propose(secret, table, str(what))
    elif kind == "leave":
        hub.change_table(secret, 0)
    elif kind == "again":
        if player is not None:
            assert hub.logout(secret)
        if not nick.startswith("*"):
            people.renamed += 1  # by an admin meanwhile: its seats follow it to its new nick
        people.sessions[who] += 1
        people.hosts[who] = int(what)  # type: ignore[call-overload]
        people.login(hub, who)


@settings(max_examples=300)
@given(STEPS)
def test_the_caps_refuse_what_the_walks_of_every_table_refused(steps: list[tuple]) -> None:
    timers, journal = ManualTimers(), RecordingPersistence()
    hub = Hub(caps=CAPS, timers=timers, persistence=journal, rng=random.Random(5), clock=lambda: 1.7e9)
    people = People()
    for index in range(len(NICKS)):
        people.login(hub, index)
    for kind, who, what in steps:
        if kind == "restart":
            hub.announce_shutdown()
            hub = Hub(
                caps=CAPS, timers=timers, persistence=journal, rng=random.Random(5), clock=lambda: 1.7e9
            )
            hub.restore(journal.entries, next_uid=max(journal.entries, default=0) + 1)
            for index in range(len(NICKS)):
                people.login(hub, index)
        else:
            try:
                step(hub, people, timers, kind, who, what)
            except ProtocolError:
                pass  # refused: it changes nothing, and the indexes must still hold
        assert_the_indexes_say_what_the_walks_say(hub, people)
