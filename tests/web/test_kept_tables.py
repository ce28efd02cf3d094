"""A tournament's tables kept between builds of its public answers (server/web/kept_tables.py): over random
sequences of tables set up, games stored and cancelled, accounts deleted (which renames settled tables'
players) and restarts, every kept build is byte for byte the whole build as it was until 2026-12-02
(kept here as the reference), its standings included; the standings' kept sums, over random changes of
the tables' summaries (being played too), rank as the whole count of the summaries; a build after one
change reads only the changed row from the store and counts only its summary; a deletion shows in the
next answer; and the memory is bounded by the answers kept."""

from __future__ import annotations

import asyncio
import itertools
import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from aiohttp import web
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from server.config import Settings
from server.director.views import standing_row
from server.engine.board import BLACK, WHITE
from server.engine.game import Result
from server.engine.standings import Played, standings
from server.hub.hub import Hub
from server.store.database import utc_text
from server.store.store import Store
from server.store.tournaments import TableRecord
from server.web.common import HUB_KEY, STORE_KEY
from server.web.kept_tables import KeptTournaments, StandingsSums, Summary
from server.web.shared import SHARED_ANSWERS_KEY, SharedAnswers
from server.web.tournament import (
    KEPT_TABLES_KEY,
    STANDINGS_TABLES,
    TOURNAMENTS_KEY,
    organisers_standings,
    standings_built,
    tables_built,
)
from tests.store.test_accounts import registered_id
from tests.store.test_rating_history import finished
from tests.web.test_tournament import Organiser, organiser  # noqa: F401 (the fixture)

NICKS = ["Ala", "Bob", "Cyd", "*Dan"]  # registered but the guest
RESULTS = [(BLACK, "R"), (WHITE, "R"), (0, ""), (BLACK, "F"), (0, "Void")]


# --- the whole build, as it was until 2026-12-02 ---------------------------------------------------


def whole_now(hub: Hub, row: TableRecord) -> tuple[str, str | None, int | None]:
    table = hub.tables.get(row.uid)
    room = table.room if table is not None else None
    live = room if room is not None and room.games_played == 0 else None
    result = row.result or (str(live.game.result) if live and live.game.result is not None else None)
    if row.cancelled or (live is not None and live.cancelled):
        state = "cancelled"
    elif live is not None and live.game.result is None:
        state = "playing"
    else:
        state = "finished" if result is not None else "closed"
    return state, result, len(live.game.moves) if live is not None else None


async def whole_entries(app: web.Application, name: str) -> list[dict[str, Any]]:
    rows = await app[TOURNAMENTS_KEY].tables(name)
    hub = app[HUB_KEY]
    return [
        {
            "table": row.uid,
            "round": row.round,
            "created": utc_text(row.created_at),
            "blue": row.blue,
            "red": row.red,
            "gameType": row.game_type,
            "state": state,
            "moves": moves,
            "result": result,
            "game": row.game_number,
            "sgf": f"/sgf/{row.game_number}" if row.game_number is not None else None,
        }
        for row, (state, result, moves) in ((row, whole_now(hub, row)) for row in rows)
    ]


def whole_standings(summaries: list[Summary]) -> list[dict[str, Any]]:
    """An organiser's standings, every table's summary counted (the build until 2026-12-02)."""
    counted = [summary for summary in summaries if summary[0] != "cancelled"]
    finished_ = [Played(blue, red, result) for state, blue, red, result in counted if state == "finished"]
    playing = Counter(nick for state, blue, red, _ in counted if state == "playing" for nick in (blue, red))
    players = {nick for _, blue, red, _ in counted for nick in (blue, red)}
    return [standing_row(row, playing[row.player]) for row in standings(finished_, players)]


async def whole_answers(app: web.Application, name: str) -> tuple[bytes, bytes] | None:
    """An organiser's tournament's two answers, every table read and encoded."""
    entries = await whole_entries(app, name)
    if not entries:
        return None
    summaries = [(e["state"], e["blue"], e["red"], e["result"]) for e in entries]
    answer: dict[str, Any] = {"tournament": name, "standings": whole_standings(summaries)}
    oldest_listed = len(entries) - STANDINGS_TABLES
    answer["tables"] = [e for n, e in enumerate(entries) if n >= oldest_listed or e["state"] == "playing"]
    answer["tablesLeftOut"] = len(entries) - len(answer["tables"])
    return json.dumps({"tournament": name, "tables": entries}).encode(), json.dumps(answer).encode()


async def kept_answers(app: web.Application, name: str) -> tuple[bytes, bytes] | None:
    tables, ranked = await tables_built(app, name), await standings_built(app, name)
    if tables is None or ranked is None:
        assert tables is ranked is None
        return None
    assert isinstance(tables.answer, bytes) and isinstance(ranked.answer, bytes)
    return tables.answer, ranked.answer


# --- random sequences on a real store ---------------------------------------------------------------

Step = tuple[str, int, int]


@st.composite
def steps(draw: st.DrawFn) -> list[Step]:
    kinds = st.sampled_from(
        ["set up", "set up", "set up elsewhere", "end", "end", "cancel", "delete", "restart"]
    )
    return draw(st.lists(st.tuples(kinds, st.integers(0, 30), st.integers(0, 30)), min_size=1, max_size=25))


@pytest.fixture
def runner(settings: Settings) -> Iterator[tuple[asyncio.Runner, Store]]:
    """A store open across Hypothesis's examples (each its own tournament and accounts)."""
    with asyncio.Runner() as run:
        store = run.run(Store.open(settings.db_url, id_hash_cost=settings.id_hash_cost))
        try:
            yield run, store
        finally:
            run.run(store.close())


_examples = itertools.count(1)
_uids = itertools.count(1_000_000)
# a lower block of numbers, as another member of a cluster hands out: its tables come after higher ones
_uids_elsewhere = itertools.count(1)


async def play(store: Store, sequence: list[Step]) -> None:
    n = next(_examples)
    name, nicks = f"Cup {n}", [f"{nick}{n}" for nick in NICKS]
    for nick in nicks[:-1]:
        await store.accounts.register(nick, registered_id(nick, "pw"), "", "en")
    app = web.Application()
    app[TOURNAMENTS_KEY], app[HUB_KEY] = store.tournaments, Hub()
    app[SHARED_ANSWERS_KEY], app[KEPT_TABLES_KEY] = SharedAnswers(), KeptTournaments()
    tables: list[tuple[int, str, str]] = []
    deleted: set[str] = set()
    for kind, a, b in sequence:
        if kind in ("set up", "set up elsewhere"):
            uid = next(_uids if kind == "set up" else _uids_elsewhere)
            blue, red = nicks[a % len(nicks)], nicks[b % len(nicks)]
            store.writer.tournament_table(uid, name, str(a % 3) if b % 2 else None, blue, red, "1010")
            tables.append((uid, blue, red))
        elif kind in ("end", "cancel") and tables:
            uid, blue, red = tables.pop(a % len(tables))  # a table's game is stored once
            winner, reason = RESULTS[b % len(RESULTS)]
            game = replace(finished(uid, blue, red, winner, rated=False), tournament=name, moves=a)
            game = replace(game, result=Result(winner, reason), cancelled=kind == "cancel")
            store.writer.archive(game, lambda _number, _accounts: None)
        elif kind == "delete" and (nick := nicks[a % (len(nicks) - 1)]) not in deleted:
            await store.writer.flush()
            await store.accounts.delete(nick)
            deleted.add(nick)
        elif kind == "restart":
            app[KEPT_TABLES_KEY] = KeptTournaments()
        await store.writer.flush()
        assert await kept_answers(app, name) == await whole_answers(app, name)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps())
def test_a_kept_build_is_the_whole_build_byte_for_byte(
    runner: tuple[asyncio.Runner, Store], sequence: list[Step]
) -> None:
    run, store = runner
    run.run(play(store, sequence))


# --- the standings' sums over random changes of the tables' summaries -------------------------------

STATES = ["closed", "playing", "finished", "cancelled"]
SUMMARY_NICKS = ["Ala", "ala", "Bob", "*Cyd", "deleted-1"]
summaries = st.builds(
    lambda state, blue, red, result: (state, blue, red, result if state == "finished" else None),
    st.sampled_from(STATES),
    st.sampled_from(SUMMARY_NICKS),
    st.sampled_from(SUMMARY_NICKS),
    st.sampled_from(["B+R", "W+R", "0", "B+3", "W+F", "Void"]),
)


@settings(max_examples=200)
@given(st.lists(st.tuples(st.integers(0, 8), summaries), min_size=1, max_size=40))
def test_the_standings_kept_sums_rank_as_every_summary_counted(changes: list[tuple[int, Summary]]) -> None:
    """Each change is a table's summary now (a table set up, being played, its result stored or taken
    back, cancelled, renamed by a deletion), counted as KeptTables does: the old one out, the new in."""
    sums, now = StandingsSums(), {}
    for uid, summary in changes:
        if uid in now:
            sums.count(now[uid], -1)
        sums.count(summary, 1)
        now[uid] = summary
        assert organisers_standings(sums.copy()) == whole_standings(list(now.values()))


# --- on the real app ------------------------------------------------------------------------------


async def five_tables_stored(organiser: Organiser) -> None:  # noqa: F811
    for n in range(5):
        assert (await organiser.set_up(pl1=f"*A{n}", pl2=f"*B{n}")).startswith("ok.")
    await organiser.hub.persistence.flush()


async def test_a_build_after_one_table_set_up_reads_only_that_row(
    organiser: Organiser,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    await five_tables_stored(organiser)
    store = organiser.client.app[TOURNAMENTS_KEY]
    read, returned = store.tables, []

    async def tables(name: str, since: int | None = None) -> list[TableRecord]:
        rows = await read(name, since)
        returned.append(len(rows))
        return rows

    monkeypatch.setattr(store, "tables", tables)
    assert len((await organiser.results())[1]["tables"]) == 5
    assert (await organiser.set_up(pl1="*C", pl2="*D")).startswith("ok.")

    status, answer = await organiser.results()

    assert status == 200 and len(answer["tables"]) == 6
    assert returned == [5, 1]  # before 2026-12-02: [5, 6], every row at every build


async def test_the_standings_after_one_table_set_up_count_only_its_summary(
    organiser: Organiser,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    await five_tables_stored(organiser)
    standings_json = "/tournament/Autumn Cup/standings.json"
    assert len((await (await organiser.client.get(standings_json)).json())["standings"]) == 10
    count, counted = StandingsSums.count, []

    def counting(sums: StandingsSums, summary: Summary, times: int) -> None:
        counted.append((summary, times))
        count(sums, summary, times)

    monkeypatch.setattr(StandingsSums, "count", counting)
    assert (await organiser.set_up(pl1="*C", pl2="*D")).startswith("ok.")

    answer = await (await organiser.client.get(standings_json)).json()

    assert len(answer["standings"]) == 12 and {"*C", "*D"} <= {row["player"] for row in answer["standings"]}
    assert counted == [(("playing", "*C", "*D", None), 1)]  # before: every table's summary at every build


async def test_an_account_deleted_shows_in_the_next_answer(organiser: Organiser) -> None:  # noqa: F811
    app = organiser.client.app
    store: Store = app[STORE_KEY]
    await store.accounts.register("Ola", registered_id("Ola", "pw"), "", "en")
    assert (await organiser.set_up(pl1="Ola", pl2="*Ed")).startswith("ok.")
    await organiser.hub.persistence.flush()
    uid = (await organiser.results())[1]["tables"][0]["table"]
    game = replace(finished(uid, "Ola", "*Ed", BLACK, rated=False), tournament="Autumn Cup")
    store.writer.archive(game, lambda _number, _accounts: None)
    await store.writer.flush()
    assert (await organiser.results())[1]["tables"][0]["blue"] == "Ola"

    await store.accounts.delete("Ola")
    # the count of changes is read at most once a second
    app[SHARED_ANSWERS_KEY].clock = lambda: 1e12

    entry = (await organiser.results())[1]["tables"][0]
    assert entry["blue"].startswith("deleted") and entry["result"] == "B+R"


async def test_the_tables_kept_are_those_of_the_answers_kept(organiser: Organiser) -> None:  # noqa: F811
    app = organiser.client.app
    key = await app[STORE_KEY].tournaments.add_key("any", None, False)
    app[SHARED_ANSWERS_KEY].most_answers = 4
    for n in range(12):
        assert (await organiser.set_up(key=key, tourn=f"Cup {n}", pl1="*Al", pl2="*Bo")).startswith("ok.")
        await organiser.hub.persistence.flush()
        assert (await organiser.client.get(f"/tournament/Cup {n}")).status == 200
        assert len(app[KEPT_TABLES_KEY]) <= 4
    for n in range(12):
        assert (await organiser.client.get(f"/tournament/Nowhere {n}/standings.json")).status == 404
    assert len(app[KEPT_TABLES_KEY]) <= 4
    assert len(app[SHARED_ANSWERS_KEY]) <= 4
