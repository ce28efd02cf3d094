"""Tournament organisers: `setUpTable` and `cancelTable` with a key, and the results read back by
scripts (`/tournament/<name>` as JSON, `/tournament/<name>.sgf.zip`)."""

from __future__ import annotations

import asyncio
import io
import re
import unicodedata
import zipfile
from collections import Counter
from typing import Any
from urllib.parse import quote

from aiohttp import web

from server.director.views import standing_row
from server.engine.gametype import MAX_TOURNAMENT_LENGTH, GameTypeError, parse_game_type
from server.engine.standings import Played, standings
from server.hub.hub import Hub
from server.hub.limits import STORAGE_REFUSED
from server.protocol.codec import ProtocolError, check_nick, parse_number
from server.store.accounts import Accounts
from server.store.database import utc_text
from server.store.tournaments import Tournaments
from server.web.assets import PAGES_KEY
from server.web.auth import ACCOUNTS_KEY
from server.web.common import DIRECTOR_KEY, HUB_KEY

TOURNAMENTS_KEY = web.AppKey("tournaments", Tournaments)
NOT_SAVED = "x"  # tourn=x / tRound=x: nothing written to the record
MAX_ROUND = 100
RECORDS_SUFFIX = ".sgf.zip"  # /tournament/<name>.sgf.zip: a tournament's records
_SAY_HI = re.compile(r"[0-9]{1,5}(\.[0-9]{1,5})+")
MOST_PLAYERS = 8  # two teams of four (docs/teams.md)
_SIDE = re.compile(r"pl(0|[1-9][0-9]*)")  # pl<n>: the player of side n

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


async def set_up_table(request: web.Request) -> str:
    """`co=setUpTable&key=K&gameType=G&pl1=A&pl2=B&sayHiTimes=K.L&tourn=T&tRound=R` -> `ok.<table>`;
    a team game with `pl3`, `pl4`, ... (side n is pl<n>) and a sayHi for each (docs/teams.md)."""
    hub: Hub = request.app[HUB_KEY]
    key = await request.app[TOURNAMENTS_KEY].check(required(request, "key"))
    if key is None:
        raise ProtocolError("badKey")
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
        return f"ok.{uid}"
    if hub.withdraw_set_up(uid):  # nothing was done, as err.storage says: the retry sets it up once
        raise ProtocolError("storage", STORAGE_REFUSED)
    raise ProtocolError(
        f"notStored.{uid}", f"Table {uid} is set up, but not saved yet: do not set it up again."
    )


async def cancel_table(request: web.Request) -> str:
    """`co=cancelTable&key=K&table=N` -> `ok` (docs/tournaments.md, "Cancelling a table")."""
    key = await request.app[TOURNAMENTS_KEY].check(required(request, "key"))
    if key is None:
        raise ProtocolError("badKey")
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
    return "ok"


@routes.get("/tournament/{name}" + RECORDS_SUFFIX)
async def records(request: web.Request) -> web.Response:
    name = request.match_info["name"]
    games = await request.app[TOURNAMENTS_KEY].records(name)
    if not games:
        return web.json_response({"error": f"no archived games of the tournament {name!r}"}, status=404)
    # 65 ms for 1,000 games, 140 ms for 3,000, and anyone may ask: in a thread, the loop goes on meanwhile
    body = await asyncio.to_thread(_zipped, games)
    return web.Response(
        body=body,
        content_type="application/zip",
        headers={"Content-Disposition": _attachment(f"{_file_safe(name)}.sgf.zip")},
    )


def _zipped(games: list[tuple[int, str, str, str]]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for number, blue, red, sgf in games:
            archive.writestr(f"{number}-{_file_safe(blue)}-{_file_safe(red)}.sgf", sgf)
    return buffer.getvalue()


@routes.get("/tournament/{name}")
async def tables(request: web.Request) -> web.Response:
    """Every table set up for the tournament, with its state now: what a script needs for results."""
    name = request.match_info["name"]
    listed = await _listed(request, name)
    hosted = await _hosted(request, name)
    if not listed and hosted is None:
        return web.json_response({"error": f"no tables were set up for the tournament {name!r}"}, status=404)
    answer: dict[str, Any] = {"tournament": name, "tables": listed}
    if hosted is not None:  # one the server runs: its settings, players and standings too
        answer["hosted"] = hosted
    return web.json_response(answer, headers={"Cache-Control": "no-store"})


async def _hosted(request: web.Request, name: str) -> dict[str, Any] | None:
    director = request.app.get(DIRECTOR_KEY)
    return await director.described(name) if director is not None else None


@routes.get("/tournament/{name}/standings.json")
async def standings_json(request: web.Request) -> web.Response:
    """What the standings page shows: the tables as `/tournament/<name>` lists them, and the standings
    of the finished games (docs/tournaments.md, "Standings")."""
    name = request.match_info["name"]
    listed = await _listed(request, name)
    hosted = await _hosted(request, name)
    if hosted is not None:  # ranked by its own kind's rules (byes, arena points)
        return web.json_response(
            {"tournament": name, "hosted": hosted, "standings": hosted["standings"], "tables": listed},
            headers={"Cache-Control": "no-store"},
        )
    if not listed:
        return web.json_response({"error": f"no tables were set up for the tournament {name!r}"}, status=404)
    counted = [entry for entry in listed if entry["state"] != "cancelled"]
    finished = [Played(e["blue"], e["red"], e["result"]) for e in counted if e["state"] == "finished"]
    playing = Counter(nick for e in counted if e["state"] == "playing" for nick in (e["blue"], e["red"]))
    players = {nick for entry in counted for nick in (entry["blue"], entry["red"])}
    ranked = [standing_row(standing, playing[standing.player]) for standing in standings(finished, players)]
    return web.json_response(
        {"tournament": name, "standings": ranked, "tables": listed}, headers={"Cache-Control": "no-store"}
    )


@routes.get("/tournament/{name}/standings")
async def standings_page(request: web.Request) -> web.Response:
    """The standings page of the built-in client (standings.html); its script reads standings.json."""
    pages = request.app.get(PAGES_KEY)
    if pages is None:
        raise web.HTTPNotFound(
            text="The standings page is part of the built-in client, which --static replaced; "
            f"the results are at /tournament/{request.match_info['name']}.\n"
        )
    name = request.match_info["name"]
    known = bool(await request.app[TOURNAMENTS_KEY].tables(name)) or await _hosted(request, name) is not None
    return pages.page_response(request, "standings.html", 200 if known else 404)


async def _listed(request: web.Request, name: str) -> list[dict[str, Any]]:
    """The tournament's tables, oldest first, with their state now (none: no such tournament)."""
    rows = await request.app[TOURNAMENTS_KEY].tables(name)
    hub: Hub = request.app[HUB_KEY]
    listed = []
    for row in rows:
        table = hub.tables.get(row.uid)
        room = table.room if table is not None else None
        live = room if room is not None and room.games_played == 0 else None  # its tournament game
        result = row.result or (str(live.game.result) if live and live.game.result is not None else None)
        if row.cancelled or (live is not None and live.cancelled):
            state = "cancelled"
        elif live is not None and live.game.result is None:
            state = "playing"
        else:
            state = "finished" if result is not None else "closed"
        listed.append(
            {
                "table": row.uid,
                "round": row.round,
                "created": utc_text(row.created_at),
                "blue": row.blue,
                "red": row.red,
                "gameType": row.game_type,
                "state": state,
                "moves": len(live.game.moves) if live is not None else None,
                "result": result,
                "game": row.game_number,
                "sgf": f"/sgf/{row.game_number}" if row.game_number is not None else None,
            }
        )
    return listed


def _attachment(filename: str) -> str:
    """Content-Disposition for a name that may not be ASCII: an ASCII fallback, and the name itself
    in UTF-8 (RFC 6266 `filename*`); a raw UTF-8 header value is read as Latin-1 by browsers."""
    fallback = filename.encode("ascii", "replace").decode().replace("?", "_")
    return f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{quote(filename, safe='')}"


def _file_safe(text: str) -> str:
    return re.sub(r"[^\w.-]+", "_", text)[:60] or "_"
