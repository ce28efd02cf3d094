"""Tournament organisers: `setUpTable` and `cancelTable` with a key, and the results read back by
scripts (`/tournament/<name>` as JSON, `/tournament/<name>.sgf.zip`)."""

from __future__ import annotations

import asyncio
import bisect
import io
import re
import unicodedata
import zipfile
from collections.abc import Hashable
from typing import Any
from urllib.parse import quote

from aiohttp import web

from server.director.views import standing_row
from server.engine.gametype import MAX_TOURNAMENT_LENGTH, GameTypeError, parse_game_type
from server.engine.standings import ranked
from server.hub.hub import Hub
from server.hub.limits import STORAGE_REFUSED
from server.protocol.codec import ProtocolError, check_nick, parse_number
from server.store.accounts import Accounts
from server.store.tournaments import KeyInfo, Tournaments, key_hash
from server.web.assets import PAGES_KEY, REVALIDATE, Asset, asset_response
from server.web.auth import ACCOUNTS_KEY
from server.web.clients import refuses_store_reads, store_reads_refused
from server.web.common import DIRECTOR_KEY, HUB_KEY
from server.web.kept_tables import KeptTournaments, Snapshot, StandingsSums, encoded, joined
from server.web.limits import RecentKeys
from server.web.shared import SHARED_ANSWERS_KEY, Built

TOURNAMENTS_KEY = web.AppKey("tournaments", Tournaments)
KNOWN_KEYS_KEY = web.AppKey("known_keys", RecentKeys)  # the hashes of organisers' keys known to be right
KEPT_TABLES_KEY = web.AppKey("kept_tables", KeptTournaments)  # the tables kept between builds
RECORDS_ZIPPING_KEY = web.AppKey("records_zipping", asyncio.Lock)  # one tournament's records zipped at a time
NOT_SAVED = "x"  # tourn=x / tRound=x: nothing written to the record
MAX_ROUND = 100
RECORDS_SUFFIX = ".sgf.zip"  # /tournament/<name>.sgf.zip: a tournament's records
_SAY_HI = re.compile(r"[0-9]{1,5}(\.[0-9]{1,5})+")
MOST_PLAYERS = 8  # two teams of four (docs/teams.md)
_SIDE = re.compile(r"pl(0|[1-9][0-9]*)")  # pl<n>: the player of side n
TABLES, STANDINGS = "tables", "standings"  # the answers about a tournament (server/web/shared.py)
LISTING = "tournaments"  # /tournaments.json's (server/web/hosted.py)
RECORDS = "records"  # /tournament/<name>.sgf.zip's
RECORDS_PAGE = 1_000  # archived games read at a time for a tournament's zip
ZIP = "application/zip"
STANDINGS_TABLES = 1_000  # the newest tables standings.json lists, besides those being played

routes = web.RouteTableDef()


def required(request: web.Request, name: str) -> str:
    value = request.query.get(name)
    if not value:
        raise ProtocolError(f"missing.{name}")
    return value


def label(value: str, code: str, limit: int) -> str | None:
    """`tourn` / `tRound`: `x` means not saved; otherwise a short line of text without `/`."""
    if value == NOT_SAVED:
        return None
    if len(value) > limit or any(c == "/" or unicodedata.category(c).startswith("C") for c in value):
        raise ProtocolError(code)
    return value


def tournament_label(value: str) -> str | None:
    """`tourn`, a label that is also the tournament's address (`/tournament/<name>`): not one that leads
    elsewhere, as `.` and `..` are resolved away and `/tournament/A.sgf.zip` is A's records."""
    name = label(value, "badTourn", MAX_TOURNAMENT_LENGTH)
    if name in (".", "..") or (name or "").endswith(RECORDS_SUFFIX):
        raise ProtocolError("badTourn")
    return name


async def _player(
    accounts: Accounts, nick: str, name: str, registered_only: bool
) -> tuple[str, float | None]:
    """The nick as the table will know it, and the player's rating (registered players only)."""
    guest = nick.startswith("*")
    try:
        check_nick(nick, guest=guest)
    except ProtocolError:
        raise ProtocolError(f"badNick.{name}") from None
    if guest:
        if registered_only:
            raise ProtocolError(f"unknownPlayer.{name}")
        return nick, None
    profile = await accounts.profile(nick)
    if profile is None:
        if registered_only:
            raise ProtocolError(f"unknownPlayer.{name}")
        return nick, None
    return profile.nick, profile.rating.rating


async def checked_key(request: web.Request) -> KeyInfo:
    """The request's organiser's key (`key=`), or `badKey`. A key not known to be right (not revoked when
    the server started, or right since) counts as a read of the store (clients.STORE_READS: a made-up
    key's look-up cost 1.6 ms of CPU, and anyone may send one), `tooFast` past the address's or the
    server's share; an organiser's script is not held back by those floods."""
    key = required(request, "key")
    known, hashed = request.app[KNOWN_KEYS_KEY], key_hash(key)
    if hashed not in known and store_reads_refused(request, 1) is not None:
        raise ProtocolError("tooFast", "Too many keys looked up; try again in a second.")
    info = await request.app[TOURNAMENTS_KEY].check(key)
    if info is None:
        known.discard(hashed)  # revoked since
        raise ProtocolError("badKey")
    known.add(hashed)
    return info


async def set_up_table(request: web.Request) -> str:
    """`co=setUpTable&key=K&gameType=G&pl1=A&pl2=B&sayHiTimes=K.L&tourn=T&tRound=R` -> `ok.<table>`;
    a team game with `pl3`, `pl4`, ... (side n is pl<n>) and a sayHi for each (docs/teams.md)."""
    hub: Hub = request.app[HUB_KEY]
    key = await checked_key(request)
    try:
        game_type = parse_game_type(required(request, "gameType"))
    except GameTypeError:
        raise ProtocolError("badGameType") from None
    named = {
        int(found[1]) for name, nick in request.query.items() if (found := _SIDE.fullmatch(name)) and nick
    }
    extra = sorted(named - {1, 2})
    if extra != list(range(3, 3 + len(extra))) or 2 + len(extra) > MOST_PLAYERS or 0 in named:
        raise ProtocolError("badTeams")  # pl3, pl4, ... without a gap or a side past 8; equal teams: the hub
    say_hi = _SAY_HI.fullmatch(request.query.get("sayHiTimes", ".".join("0" * (2 + len(extra)))))
    if say_hi is None:
        raise ProtocolError("badSayHiTimes")
    tournament = tournament_label(request.query.get("tourn", NOT_SAVED))
    round_ = label(request.query.get("tRound", NOT_SAVED), "badRound", MAX_ROUND)
    if key.tournament is not None and tournament != key.tournament:
        raise ProtocolError("keyNotForTournament")
    director = request.app.get(DIRECTOR_KEY)
    if tournament is not None and director is not None and await director.hosted.get(tournament) is not None:
        raise ProtocolError(
            "hostedTournament", "The server pairs this tournament itself: it sets up its tables."
        )
    accounts = request.app[ACCOUNTS_KEY]
    first, first_rating = await _player(accounts, required(request, "pl1"), "pl1", key.registered_only)
    second, second_rating = await _player(accounts, required(request, "pl2"), "pl2", key.registered_only)
    ratings = {nick: r for nick, r in ((first, first_rating), (second, second_rating)) if r is not None}
    more = [
        (await _player(accounts, request.query[f"pl{n}"], f"pl{n}", key.registered_only))[0] for n in extra
    ]
    before = hub.writes()
    uid = hub.set_up_table(
        game_type,
        first,
        second,
        [int(seconds) for seconds in say_hi[0].split(".")],
        tournament,
        round_,
        ratings,
        more=more,
    )
    if await hub.settled(before):
        answered_anew(request.app, tournament)
        return f"ok.{uid}"
    if hub.withdraw_set_up(uid):  # nothing was done, as err.storage says: the retry sets it up once
        raise ProtocolError("storage", STORAGE_REFUSED)
    raise ProtocolError(
        f"notStored.{uid}", f"Table {uid} is set up, but not saved yet: do not set it up again."
    )


async def cancel_table(request: web.Request) -> str:
    """`co=cancelTable&key=K&table=N` -> `ok` (docs/tournaments.md, "Cancelling a table")."""
    key = await checked_key(request)
    table = parse_number(required(request, "table"))
    if table is None:
        raise ProtocolError("badTable")
    hub = request.app[HUB_KEY]
    tournament = hub.tournament_of_table(table)
    director = request.app.get(DIRECTOR_KEY)
    if tournament is not None and director is not None and await director.hosted.get(tournament) is not None:
        # no key sets up these tables, so none cancels one: cancelTournament calls the whole off
        raise ProtocolError("hostedTournament", "The server pairs this tournament itself: it runs its games.")
    hub.cancel_table(table, key.tournament)
    answered_anew(request.app, tournament)
    return "ok"


@routes.get("/tournament/{name}" + RECORDS_SUFFIX)
async def records(request: web.Request) -> web.StreamResponse:
    """Every archived game of the tournament, zipped once and shared until one is added (server/web/
    shared.py): a day's arena has some 108,000, and anyone may ask."""
    name, app = request.match_info["name"], request.app
    answers = app[SHARED_ANSWERS_KEY]
    if (refused := _refuses_cold(request, RECORDS, name)) is not None:
        return refused
    answer = await answers.get(
        (RECORDS, name), lambda: _records_version(app, name), lambda: _records_zipped(app, name)
    )
    if answer is None:
        return web.json_response({"error": f"no archived games of the tournament {name!r}"}, status=404)
    download = {"Content-Disposition": _attachment(f"{_file_safe(name)}.sgf.zip")}
    return await asset_response(request, answer, REVALIDATE, download, answers.budget)


async def _records_version(app: web.Application, name: str) -> Hashable:
    store = app[TOURNAMENTS_KEY]
    return await store.changes(name), await store.archived(name)


async def _records_zipped(app: web.Application, name: str) -> Built | None:
    """Read a page at a time and zipped in a thread (65 ms for 1,000 games), so that the loop goes on
    meanwhile and no more than a page of records is held besides the zip; one tournament's at a time,
    as each holds its whole zip while it is made."""
    store = app[TOURNAMENTS_KEY]
    async with app[RECORDS_ZIPPING_KEY]:
        page = await store.records(name, 0, RECORDS_PAGE)
        if not page:
            return None
        buffer = io.BytesIO()
        archive = zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED)
        while page:
            await asyncio.to_thread(_zipped, archive, page)
            page = await store.records(name, page[-1][0], RECORDS_PAGE) if len(page) == RECORDS_PAGE else []
        await asyncio.to_thread(archive.close)
        return Built(buffer.getvalue(), content_type=ZIP)


def _zipped(archive: zipfile.ZipFile, games: list[tuple[int, str, str, str]]) -> None:
    for number, blue, red, sgf in games:
        archive.writestr(f"{number}-{_file_safe(blue)}-{_file_safe(red)}.sgf", sgf)


@routes.get("/tournament/{name}")
async def tables(request: web.Request) -> web.StreamResponse:
    """Every table set up for the tournament, with its state now: what a script needs for results."""
    return await _shared(request, TABLES)


@routes.get("/tournament/{name}/standings.json")
async def standings_json(request: web.Request) -> web.StreamResponse:
    """What the standings page shows: the standings of the finished games and the newest tables as
    `/tournament/<name>` lists them (docs/tournaments.md, "Standings")."""
    return await _shared(request, STANDINGS)


@routes.get("/tournament/{name}/standings")
async def standings_page(request: web.Request) -> web.StreamResponse:
    """The standings page of the built-in client (standings.html); its script reads standings.json."""
    pages = request.app.get(PAGES_KEY)
    if pages is None:
        raise web.HTTPNotFound(
            text="The standings page is part of the built-in client, which --static replaced; "
            f"the results are at /tournament/{request.match_info['name']}.\n"
        )
    name = request.match_info["name"]
    if (refused := _refuses_cold(request, STANDINGS, name)) is not None:
        return refused
    known = await _answer(request.app, STANDINGS, name) is not None
    return await pages.page_response(request, "standings.html", 200 if known else 404)


def answered_anew(app: web.Application, tournament: str | None) -> None:
    """A request here changed the tournament: its next answers are built anew, not a second later."""
    if tournament is not None:
        app[SHARED_ANSWERS_KEY].changed(LISTING, (TABLES, tournament), (STANDINGS, tournament))


async def _shared(request: web.Request, kind: str) -> web.StreamResponse:
    name = request.match_info["name"]
    if (refused := _refuses_cold(request, kind, name)) is not None:
        return refused
    answer = await _answer(request.app, kind, name)
    if answer is None:
        return web.json_response({"error": f"no tables were set up for the tournament {name!r}"}, status=404)
    return await asset_response(request, answer, REVALIDATE, budget=request.app[SHARED_ANSWERS_KEY].budget)


COLD_READS = 5  # reads (server/web/clients.py) an answer nothing keeps counts: a made-up name's 6.5 ms


def _refuses_cold(request: web.Request, kind: str, name: str) -> web.Response | None:
    """An answer kept or being built costs no look in the store; any other is counted (clients.py)."""
    if request.app[SHARED_ANSWERS_KEY].holds((kind, name)):
        return None
    return refuses_store_reads(request, COLD_READS)


async def _answer(app: web.Application, kind: str, name: str) -> Asset | None:
    """The answer as every request shares it (server/web/shared.py); None: no such tournament."""
    build = tables_built if kind == TABLES else standings_built
    answers = app[SHARED_ANSWERS_KEY]
    answer = await answers.get((kind, name), lambda: _version(app, name), lambda: build(app, name))
    # the tables kept are those of the tournaments whose answers are kept (or being built)
    app[KEPT_TABLES_KEY].keep_only(lambda other: any(answers.holds((k, other)) for k in (TABLES, STANDINGS)))
    return answer


async def _version(app: web.Application, name: str) -> Hashable:
    """What the store says of the tournament: its count of changes to its tables, and for one the
    server runs, its record (state, round) and entries."""
    count = await app[TOURNAMENTS_KEY].changes(name)
    director = app.get(DIRECTOR_KEY)
    hosted = await director.hosted.get(name) if director is not None else None
    entries = tuple(await director.hosted.entries(hosted.id)) if director and hosted else ()
    return count, hosted, entries


async def tables_built(app: web.Application, name: str) -> Built | None:
    snapshot, hosted = await _read(app, name)
    if not snapshot.entries and hosted is None:
        return _none_kept(app, name)
    fields = [("tournament", encoded(name)), ("tables", snapshot.entries)]
    if hosted is not None:  # one the server runs: its settings, players and standings too
        fields.append(("hosted", encoded(hosted)))
    return Built(await joined(fields), snapshot.live, snapshot.live_as_built)


async def standings_built(app: web.Application, name: str) -> Built | None:
    snapshot, hosted = await _read(app, name, with_sums=True)
    if hosted is not None:  # ranked by its own kind's rules (byes, arena points)
        fields = [("tournament", encoded(name)), ("hosted", encoded(hosted))]
        fields.append(("standings", encoded(hosted["standings"])))
    elif not snapshot.entries:
        return _none_kept(app, name)
    else:  # an organiser's: from the sums kept, off the event loop (docs/performance.md)
        assert snapshot.sums is not None  # read with_sums
        table = await asyncio.to_thread(organisers_standings, snapshot.sums)
        fields = [("tournament", encoded(name)), ("standings", encoded(table))]
    # the newest tables, and the older ones being played (the tables are in order: bisect finds them)
    uids, cut = snapshot.uids, max(0, len(snapshot.uids) - STANDINGS_TABLES)
    older = sorted(bisect.bisect_left(uids, uid) for uid in snapshot.playing if uid < uids[cut])
    shown = [snapshot.entries[n] for n in older] + snapshot.entries[cut:]
    fields.append(("tables", shown))
    fields.append(("tablesLeftOut", encoded(len(snapshot.entries) - len(shown))))
    return Built(await joined(fields), snapshot.live, snapshot.live_as_built)


def organisers_standings(sums: StandingsSums) -> list[dict[str, Any]]:
    """The swiss-style ranking of an organiser's tables (docs/tournaments.md, "Standings"): everyone
    with a table not cancelled, ranked by the finished games summed per pair. Its input is a copy, so a
    thread computes it while the loop goes on."""
    return [standing_row(row, sums.playing[row.player]) for row in ranked(sums.pairs, sums.tables)]


async def _read(
    app: web.Application, name: str, with_sums: bool = False
) -> tuple[Snapshot, dict[str, Any] | None]:
    """The tournament's tables now, from those kept since the last build and the rows changed since
    (`with_sums`: and what an organiser's standings are made of), and for one the server runs, its
    settings, players and standings (an arena's counted from the games kept)."""
    director = app.get(DIRECTOR_KEY)
    hosted = await director.hosted.get(name) is not None if director is not None else False
    kept = app[KEPT_TABLES_KEY].of(name, hosted)
    board = director.board if hosted and director is not None else None
    async with kept.building:
        snapshot = await kept.read(app[TOURNAMENTS_KEY], name, app[HUB_KEY], board, with_sums)
        if director is None:
            return snapshot, None
        return snapshot, await director.described(name, snapshot.boards, snapshot.arena)


def _none_kept(app: web.Application, name: str) -> None:
    """No tournament of this name: its tables are not kept (made-up names cannot fill the memory)."""
    app[KEPT_TABLES_KEY].forget(name)
    return None


def _attachment(filename: str) -> str:
    """Content-Disposition for a name that may not be ASCII: an ASCII fallback, and the name itself
    in UTF-8 (RFC 6266 `filename*`); a raw UTF-8 header value is read as Latin-1 by browsers."""
    fallback = filename.encode("ascii", "replace").decode().replace("?", "_")
    return f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{quote(filename, safe='')}"


def _file_safe(text: str) -> str:
    return re.sub(r"[^\w.-]+", "_", text)[:60] or "_"
