"""Fuzzing: random and mutated input thrown at the engine, the codec, the hub and the real app.

Three layers, fastest first:

1. Engine and codec (hypothesis): gameType strings, SGF records (the real fixtures cut, duplicated and
   bit-flipped), move texts, msgFromClient texts and random games. Only the documented exception types
   come out, a refused move changes nothing, undo restores the position exactly, and each player's
   score is always the number of the opponent's dots inside that player's realms.
2. The hub (hypothesis over seeds): the real `/a.kropki` handlers called in-process on a hub whose
   clocks the test drives (players time out, tables close, game clocks run out), with the hub
   invariants checked after every request.
3. The real app over HTTP on a real database (`client` fixture, fixed seeds): every response is below
   500, nothing answers `err.internal` or `nieOk.`, nothing is logged at ERROR, replies are well formed,
   message numbers never go back and grow whenever something new is sent, the hub invariants hold, and
   every archived record reads and replays.

`Fuzzer` makes the requests and judges the answers, for layers 2 and 3 and for the long run outside the
suite (`benchmarks/fuzz.py`). The server bugs these fuzzers found have a test of their own at the end of
this file.
"""

from __future__ import annotations

import contextlib
import logging
import random
import re
import string
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from unittest import mock
from urllib.parse import parse_qsl, quote

import aiohttp
import pytest
from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.test_utils import TestClient
from hypothesis import given, settings
from hypothesis import strategies as st
from multidict import MultiDict, MultiDictProxy
from yarl import URL

from server import cli
from server.engine import game as engine_game
from server.engine import start
from server.engine.board import BLACK, EMPTY, WHITE, Board, IllegalMove
from server.engine.game import EMPTY_BOARD, Game, Rules, game_for_type
from server.engine.gametype import GameTypeError, StartKind, format_new, format_old, parse_game_type
from server.engine.moves import ALPHABET, MoveSpec, MoveSyntaxError, parse_move
from server.engine.replay import ReplayError, replay_record
from server.engine.sgf import SgfError, read_record, write_record
from server.engine.start import Setup, four_crosses, handicap, one_cross
from server.hub.clock import ManualTimers
from server.hub.hub import Hub
from server.hub.model import LOBBY, Player
from server.hub.persistence import MemoryPersistence
from server.protocol.codec import (
    MAX_COMMANDS,
    BadCommand,
    Command,
    Flags,
    ProtocolError,
    check_id,
    check_nick,
    clean_text,
    decode_client_text,
    encode_client_text,
    encode_server_text,
    look_key,
    nick_key,
    parse_commands,
    parse_msg_no,
)
from server.protocol.events import game_type_text, subscriptions
from server.web import kropki
from server.web.clients import LIMITS_KEY
from server.web.common import DATABASE_UNREACHABLE, HUB_KEY
from server.web.limits import TokenBuckets
from server.web.tournament import TOURNAMENTS_KEY
from tests.web.zagram import Zagram

FIXTURES = Path(__file__).parent / "fixtures" / "sgf"
RECORDS = [path.read_text(encoding="utf-8") for path in sorted(FIXTURES.glob("*.sgf"))]
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
FAST = settings(max_examples=150, database=None)

# --- the board invariant ----------------------------------------------------------------------------


def realm_counts(board: Board) -> list[int]:
    """[0, blue, red]: the opponent's dots inside each player's realms, counted from the board's arrays."""
    counts = [0, 0, 0]
    colour, realm = board.color, board.realm
    for pos in board.board_indices():
        owner = realm[pos]
        if owner and colour[pos] == 3 - owner:
            counts[owner] += 1
    return counts


def check_board(board: Board) -> None:
    """Scores are the dots in realms; a dot is live unless an enemy realm holds it; free points add up."""
    assert board.score == realm_counts(board), "a score is the number of enemy dots in the player's realms"
    free = 0
    for pos in board.board_indices():
        colour, owner, live = board.color[pos], board.realm[pos], board.live[pos]
        if colour == EMPTY:
            assert live == EMPTY
            free += not owner
        else:
            assert live == (0 if owner == 3 - colour else colour), f"live flag of {board.point(pos)}"
    assert board.free_points == free


# --- four crosses that never end, bounded so that a fuzzer fails instead of freezing ---------------

CROSS_DRAWS = 200_000  # random draws after which start.four_crosses is taken to loop for ever


class EndlessLoop(Exception):
    """start.four_crosses drew CROSS_DRAWS numbers without placing its four crosses."""


class _CountingRandom(random.Random):
    def randint(self, a: int, b: int) -> int:
        self.draws = getattr(self, "draws", 0) + 1
        if self.draws > CROSS_DRAWS:
            raise EndlessLoop(f"{CROSS_DRAWS} draws and the four crosses are still not placed")
        return super().randint(a, b)


def bounded_four_crosses(width: int, height: int, seed: int) -> Setup:
    """The server's own four_crosses, with its drawing loop bounded (raises EndlessLoop)."""
    with mock.patch.object(start, "random", SimpleNamespace(Random=_CountingRandom)):
        return four_crosses(width, height, seed)


@contextlib.contextmanager
def no_endless_crosses(hangs: list[str]) -> Iterator[None]:
    """While it lasts, a table whose four crosses would never be placed (it once froze the whole server:
    test_four_crosses_end_on_every_board_they_are_allowed_on) is noted in `hangs` and gets the corners of
    the area instead, so that the fuzzer reports it and goes on."""

    def crosses(width: int, height: int, seed: int) -> Setup:
        try:
            return bounded_four_crosses(width, height, seed)
        except EndlessLoop:
            hangs.append(f"four_crosses({width}, {height}, {seed}) never ends")
            margin = max(1, round(min(width, height) / 4))
            corners = [(x, y) for x in (margin, width - margin - 2) for y in (margin, height - margin - 2)]
            black = tuple(p for x, y in corners for p in ((x, y), (x + 1, y + 1)))
            white = tuple(p for x, y in corners for p in ((x + 1, y), (x, y + 1)))
            return Setup(black, white)

    with mock.patch.object(engine_game, "four_crosses", crosses):
        yield


# --- random text ------------------------------------------------------------------------------------

TEXT_POOLS = (
    string.ascii_letters + string.digits,
    " .@/_-*!%&=+#;?<>'\"()[]\\",
    "łżźćńąęóśЖжЯяÄöüßÆ",
    "Ａ\u0301😀\u2028\ufeff\u202e\u00a0",
    "\x00\x01\n\r\t\x1b\x7f\x85\x9f",
)


def random_text(rng: random.Random, size: int | None = None) -> str:
    """Anything a client could send (no lone surrogates: those cannot even be URL-encoded)."""
    size = rng.choice((0, 1, 2, 5, 10, 20, 40)) if size is None else size
    pool = "".join(rng.sample(TEXT_POOLS, rng.randint(1, len(TEXT_POOLS))))
    return "".join(rng.choice(pool) for _ in range(size))


def mutate(rng: random.Random, text: str, pieces: list[str]) -> str:
    """One to four cuts, duplications, deletions, swaps, bit flips and insertions of `pieces`."""
    for _ in range(rng.randint(1, 4)):
        n = len(text)
        i, j = sorted((rng.randint(0, n), rng.randint(0, n)))
        op = rng.randrange(8)
        if op == 0:
            text = text[:i]
        elif op == 1:
            text = text[i:]
        elif op == 2:
            text = text[:j] + text[i:j] + text[j:]
        elif op == 3:
            text = text[:i] + text[j:]
        elif op == 4:
            text = text[:i] + text[j:] + text[i:j]
        elif op == 5 and n:
            k = rng.randrange(n)
            text = text[:k] + chr(ord(text[k]) ^ (1 << rng.randrange(7))) + text[k + 1 :]
        elif op == 6 and n:
            k = rng.randrange(n)
            text = text[:k] + rng.choice(pieces) + text[k + 1 :]
        else:
            text = text[:i] + rng.choice(pieces) + text[i:]
    return text


def random_move(
    rng: random.Random, width: int, height: int, dots: dict[str, int] | None = None, me: int = 0
) -> str:
    """A move text for a board: mostly a free point, sometimes `!target`, rings, or garbage."""

    def point() -> str:
        return ALPHABET[rng.randrange(width)] + ALPHABET[rng.randrange(height)]

    r = rng.random()
    if r < 0.7:
        for _ in range(6):
            where = point()
            if not dots or where not in dots:
                return where
        return where
    if r < 0.8:
        enemies = [p for p, colour in (dots or {}).items() if colour == 3 - me]
        return point() + "!" + (rng.choice(enemies) if enemies else point())
    if r < 0.88:
        enemies = [p for p, colour in (dots or {}).items() if colour == 3 - me]
        centre = rng.choice(enemies) if enemies and rng.random() < 0.5 else point()
        x, y = ALPHABET.index(centre[0]), ALPHABET.index(centre[1])
        ring = ((x, y - 1), (x + 1, y), (x, y + 1), (x - 1, y), (x, y - 1))
        text = "".join(ALPHABET[a % 52] + ALPHABET[b % 52] for a, b in ring)
        return (point() if rng.random() < 0.8 else "") + "." + text
    return rng.choice(
        ["", "zz", "ZZ", "a", "abc", "ab.", "ab!", "!", ".", "ab.abab", "ab..", "!ab!", "aa" * 2001]
        + [random_text(rng), point() + random_text(rng, 3), point().upper()]
    )


# --- layer 1: engine and codec ----------------------------------------------------------------------

GAME_TYPES = [
    # the new format, small boards so that games end
    "0505s0..s.F.n....",
    "0606s0..a.F.n....",
    "0505t0..p.F.n....",
    "0707t0..s.R.n....",
    "0606n0.1.s.F.n....",
    "1010n0.4.a.F.n....",
    "0808s2..s.F.n....",
    "0909s0.H3.s.F.n....",
    "0606s0..s.F.a.2.1..",  # two seconds each: games lost on time
    "0606t0..s.F.a.60.5.ua_S_s.",  # blue may only STOP-and-score: undo, time and pause are refused
    "2020s0..s.R.a.180.15..",
    "0505s0..s.F.n..._SRAUTP_srautp.",
    # the old format
    "0505stanF0.0.0",
    "0606terrR0.0.0",
    "1010noT4F0.0.0",
    "0808noT1r3.5.1",
    "0505stanr0.0.0",
    # refused in invitations: the computer, analysis, an SGF start, a tournament
    "2020s0...A.n....",
    "2020s0..s.a.n....",
    "2020s0.SGFz1.a.F.n....",
    "2020s0..s.F.n....Cup",
    "2020stanA0.0.0",
]
GAME_TYPE_PIECES = list("0123456789.stnaApRrFfHSGFzue_-* ") + ["SGFz", "stan", "terr", "noT1", "noT4", "H9"]
SGF_PIECES = (
    ["(", ")", ";", "[", "]", "\\", "\\]", "AB", "AW", "B", "W", "SZ", "RU", "GM", "HA", "BL", "WL"]
    + ["TB", "TW", "C", "[aa]", "[ZZ]", "[0]", "[52]", "[99:3]", "[4:60]", "[1e999]", "[nan]", "[-1]"]
    + [".", "!", "\n", " ", "é", "\x00", "[.aabbaa]", "[.aabaabba]", "[Stop=1]", "[MustSurr=0]", "(;", ";B[]"]
)


@FAST
@given(
    st.one_of(
        st.text(max_size=60),
        st.builds(
            lambda text, rng: mutate(rng, text, GAME_TYPE_PIECES),
            st.sampled_from(GAME_TYPES),
            st.randoms(use_true_random=False),
        ),
        st.lists(
            st.sampled_from(["", "0505s0", "2020t15", "s", "a", "p", "F", "R", "n", "a", "60"]), max_size=11
        ).map(".".join),
    ),
    st.integers(0, 2**32 - 1),
)
def test_game_types_parse_or_raise_game_type_error(text: str, seed: int) -> None:
    try:
        game_type = parse_game_type(text)
    except GameTypeError:
        return
    assert parse_game_type(format_new(game_type)) == game_type
    try:
        old = format_old(game_type)
    except GameTypeError:
        pass
    else:
        assert parse_game_type(old) == game_type
    line = game_type_text(game_type)
    assert "/" not in line and not CONTROL.search(line), "a d line stays one message"
    if game_type.start.kind is not StartKind.SGF:
        hangs: list[str] = []
        with no_endless_crosses(hangs):
            check_board(game_for_type(game_type, seed=seed).board)
        assert not hangs


@FAST
@given(
    st.one_of(
        st.builds(
            lambda text, rng: mutate(rng, text, SGF_PIECES),
            st.sampled_from(RECORDS),
            st.randoms(use_true_random=False),
        ),
        st.lists(
            st.sampled_from(SGF_PIECES + ["(;GM[40]SZ[8]", "AB[cc][dd]", "AW[cd]", "B[ee]", "W[ff]"])
        ).map("".join),
    )
)
def test_mutated_records_read_or_raise_sgf_error_and_replay_or_raise_replay_error(text: str) -> None:
    try:
        record = read_record(text)
    except SgfError:
        return
    try:
        again = read_record(write_record(record))
    except SgfError:
        pass  # write_record refuses what the text cannot carry (documented)
    else:
        assert again == record, "write then read gives the same record"
    try:
        replayed = replay_record(record)
    except ReplayError:
        return
    check_board(replayed.game.board)


@FAST
@given(
    st.one_of(st.text(max_size=40), st.text(alphabet="abczAZ.!é0 \n", max_size=40)),
    st.integers(4, 52),
    st.integers(4, 52),
)
def test_move_texts_parse_or_raise_move_syntax_error(text: str, width: int, height: int) -> None:
    try:
        spec = parse_move(text, width, height)
    except MoveSyntaxError:
        return
    points = [spec.dot] if spec.dot is not None else []
    points += [p for ring in spec.rings for p in ring] + list(spec.targets)
    assert all(0 <= x < width and 0 <= y < height for x, y in points)
    assert parse_move(str(spec), width, height) == spec


COMMAND_PIECES = ["c", "s", "v", "u", "b", "q", "t", "i", "x", "1", "12", "9" * 13, ".", "/", "_", "get", "0"]


@FAST
@given(st.one_of(st.text(max_size=120), st.lists(st.sampled_from(COMMAND_PIECES), max_size=70).map("".join)))
def test_client_texts_parse_without_raising(text: str) -> None:
    messages = parse_commands(text)
    if text not in ("", "x") and len(text.split("/")) > MAX_COMMANDS:
        assert messages == [BadCommand(None, "tooManyCommands")]
    for message in messages:
        assert isinstance(message, Command | Flags | BadCommand)
        if isinstance(message, Command):
            assert not {".", "/"} & set(message.table) and "/" not in message.text
            assert 0 <= message.number < 10**12
    try:
        parse_msg_no(text)
    except ProtocolError:
        pass


@FAST
@given(st.text(max_size=40))
def test_codec_functions_take_any_text(text: str) -> None:
    for guest in (True, False):
        for check in (check_nick, check_id):
            try:
                check(text, guest=guest)
            except ProtocolError:
                pass
    nick_key(text)
    look_key(text)
    assert decode_client_text(encode_client_text(text)) == text
    assert not CONTROL.search(clean_text(text))
    assert not set("/<>'\"") & set(encode_server_text(text))


@st.composite
def games(draw: st.DrawFn) -> Game:
    width, height = draw(st.integers(4, 12)), draw(st.integers(4, 12))
    automatic = draw(st.booleans())
    rules = Rules(
        automatic=automatic,
        stop_allowed=automatic and draw(st.booleans()),
        instant_win=draw(st.sampled_from([0, 0, 0, 1, 3, 8])),
    )
    start = draw(st.sampled_from(["empty", "cross", "four", "handicap"]))
    if start == "cross":
        setup = one_cross(width, height)
    elif start == "four" and min(width, height) >= 10:
        setup = bounded_four_crosses(width, height, draw(st.integers(0, 2**32 - 1)))
    elif start == "handicap" and min(width, height) >= 5:
        setup = handicap(width, height, draw(st.integers(2, 9)))
    else:
        setup = EMPTY_BOARD
    return Game(width, height, rules, setup)


def _state(game: Game) -> tuple:
    return game.board.state(), len(game.moves), game.to_move, game.result, frozenset(game.stopped)


ENGINE_OPS = ["dot", "text", "stop", "undo", "resign", "terr", "score", "time"]
ENGINE_WEIGHTS = [60, 20, 2, 6, 1, 1, 1, 1]


@settings(FAST, max_examples=60)
@given(games(), st.randoms(use_true_random=False))
def test_random_play_keeps_the_engine_invariants(game: Game, rng: random.Random) -> None:
    """Legal and illegal moves, STOP, undo and endings: IllegalMove (MoveSyntaxError for move texts) only;
    a refused action changes nothing; undo restores the position before the move exactly."""
    before_moves: list[tuple] = []
    for _ in range(rng.randint(1, 120)):
        op = rng.choices(ENGINE_OPS, ENGINE_WEIGHTS)[0]
        player = game.to_move if rng.random() < 0.9 else rng.choice([BLACK, WHITE, 0, 3])
        before = _state(game)
        try:
            if op == "dot":
                x, y = rng.randrange(-1, game.width + 1), rng.randrange(-1, game.height + 1)
                game.play(player, MoveSpec((x, y)))
            elif op == "text":
                dots = {}
                for pos in game.board.board_indices():
                    if game.board.live[pos] in (BLACK, WHITE):
                        x, y = game.board.point(pos)
                        dots[ALPHABET[x] + ALPHABET[y]] = game.board.live[pos]
                text = random_move(rng, game.width, game.height, dots, player)
                game.play(player, parse_move(text, game.width, game.height))
            elif op == "stop":
                game.stop(player)
            elif op == "undo":
                game.undo()
            elif op == "resign":
                game.resign(player)
            elif op == "terr":
                if not game.rules.automatic:
                    game.agree_territory()
                game.finish_by_score()
            elif op == "score":
                game.finish_by_score()
            else:
                game.lose_on_time(player)
        except (IllegalMove, MoveSyntaxError):
            if op != "terr":  # agree_territory then finish_by_score: the rings stay when the game was over
                assert _state(game) == before, f"a refused {op} changed the game"
        else:
            if op in ("dot", "text"):
                before_moves.append(before)
            elif op == "undo":
                assert _state(game) == before_moves.pop(), "undo restores the position exactly"
        check_board(game.board)


# --- layers 2 and 3: the request generator and the judge ----------------------------------------------

OLD_COS = [
    "graczStawiaKropke",
    "okrazam",
    "propose",
    "stopMove",
    "dodajeCzas",
    "pauseClock",
    "zmienStol",
    "dodajWpis",
    "changeLang",
    "zapraszam",
    "zaproszenieTak",
    "zaproszenieNie",
    "zaproszenieBlokuj",
    "zaproszenieAnuluj",
    "zaproszenieOdrzuconeOk",
    "usunGracza",
    "guestLogin",
]
OLD_WEIGHTS = [30, 4, 12, 4, 4, 3, 5, 8, 3, 8, 6, 2, 1, 2, 2, 1, 2]
PARAM_NAMES = [
    "co",
    "idGracza",
    "playerId",
    "msgNo",
    "msgFromClient",
    "table",
    "stol",
    "where",
    "proposal",
    "ile",
    "newTable",
    "newMsgs",
    "na",
    "whom",
    "gameType",
    "opis",
    "lang",
    "key",
    "pl1",
    "pl2",
    "pl3",
    "pl4",
    "sayHiTimes",
    "tourn",
    "tRound",
    "wiad",
    "opisGracza",
    "email",
    "nick",
    "limit",
]
LANGS = ["en", "pl", "ru", "ua", "uk", "de", "fr", "cs"]
BAD_TABLES = ["", "abc", "-1", "٣", "1" * 10, "00", "0x1", "_*Fz1", " 1", "1 ", "999999", "²"]
BAD_MSG_NOS = ["", "-1", "1.2.3", "abc", "٣", "1e3", " 1", "1" * 13, "0" * 12, "9" * 12, "1.", ".1", "0.0.0"]
QUERY_PIECES = (
    ["%", "%Z", "%ZZ", "%00", "%0A", "%0D%0A", "%09", "%ED%A0%80", "%FF", "%C3", "%C3%28", "%2F", "%40S"]
    + ["%40A", "+", "&", "=", "&&", "==", ";", "%26", "%3D", "co=getMsg", "msgNo=0", "msgFromClient="]
    + ["&co=", "%E2%80%A8", "%F0%9F%98%80", "%EF%BC%A1", "x" * 100, "%3C", "%27", "&idGracza=", "%2E"]
)
PROPOSALS = ["score", "terr", "drop", "new", "undo"]
ANSWER = re.compile(r"|err\.[A-Za-z]+(?:\.[A-Za-z0-9]+)?|ok\.\d+|ok")  # ok: cancelTable
REGISTERED = "ok.zarejestrowalem."
NICK_TAKEN = "ok.tenOpisJestJuzZajety"
LOGGED_IN = "ok.zalogowanyNaSerwer."

# Replies: every message between `ok|sd/m<i>.<j>.<k>` and `end` is one of docs/protocol.md's lines.
_NICK = r"\*?\w(?:[\w ]*\w)?"
_TEAM = rf"{_NICK}(?:,{_NICK})*"  # a side's player, or a team's (docs/teams.md): sides 1..8 below
MESSAGE = re.compile(
    rf"""
      q\d+
    | p[rad](?:{_NICK}(?:\.{_NICK})*)?
    | g[rad](?:\d+(?:\.\d+)*)?
    | d\d+\.\d{{4}}[stn]\d+\.[^/]*\.{_TEAM}\.{_TEAM}
    | x\d+\.[1-8]\.[^./]+\.\d*
    | i{_NICK}\.[^./]*\.[FN]R?[JK]?\.[a-z]{{2}}(?:\.-?\d+\.\d+\.\d+\.\d+\.[^./]*)?
    | c[ar]\d+_\d+\.[^./]*\.[^./]*\..*
    | cd\d+_\d+
    | b{_NICK}\.\d+(?:\.\d+)*
    | v[gs]{_NICK}\..+
    | vr{_NICK}
    | ka\d+\.{_NICK}\.\d*\.\d*\..+
    | kd\d+
    | w\w+\.\d+\.\d+\.\d+
    | n(?:{_NICK}(?:\.{_NICK})*)?
    | sr\(;.*\)
    | sa;.+
    | f[1-8]_(?:p?\d+\.p?\d+(?:\.g\d+)?)?
    | u(?:[1-8](?:score|terr|drop|draw|new|undo)(?:\.[1-8](?:,[1-8])*)?)?
    | o[1-8]\..*
    """,
    re.VERBOSE | re.DOTALL,
)
HEAD = re.compile(r"m(\d+)\.(\d+)\.(\d+)")
REFUSAL = re.compile(r"c[ar]\d+_\d+\.\.e\.")  # a server line for one player: why a command was refused


def reply_problems(body: str) -> list[str]:
    """What is wrong with an `ok/...`/`sd/...` reply: one line, docs/protocol.md's messages only, free
    text escaped."""
    parts = body.split("/")
    problems = []
    for part in parts:
        if CONTROL.search(part):
            problems.append(f"control character in {part[:80]!r}")
        if set("<>'\"") & set(part):
            problems.append(f"unescaped HTML character in {part[:80]!r}")
    if len(parts) < 3 or parts[0] not in ("ok", "sd") or parts[-1] != "end" or not HEAD.fullmatch(parts[1]):
        return [f"not a reply: {body[:80]!r}"]
    if parts[2] != "q0":
        problems.append("the lobby section does not come first")
    sections = [part for part in parts[2:-1] if part.startswith("q")]
    if len(set(sections)) != len(sections):
        problems.append(f"a section twice: {sections}")
    problems += [f"malformed message {part[:80]!r}" for part in parts[2:-1] if not MESSAGE.fullmatch(part)]
    return problems


@dataclass
class Guest:
    secret: str
    nick: str
    registered: bool = False
    account: bool = False  # a registered player's account exists
    online: bool = False
    seen: int = 0  # j of the last reply
    number: int = 0  # the last command number used
    invited_by: str | None = None
    sections: list[int] = field(default_factory=list)  # the tables of the last reply
    rest_until: int = 0  # no login attempt before this many requests (after a refused one)


@dataclass
class TableInfo:
    """What the guests know of a table from the lines they got."""

    width: int = 0
    height: int = 0
    rules: str = "s"
    blue: str = ""
    red: str = ""
    players: list[str] = field(default_factory=list)  # in turn order: side n is players[n - 1] (teams.md)
    to_move: int = 1  # the side on move
    over: bool = False
    proposal: str = ""  # `1undo`, or empty
    dots: dict[str, int] = field(default_factory=dict)  # point -> 1 (blue) or 2 (red)


@dataclass
class Request:
    path: str
    params: list[tuple[str, str]] = field(default_factory=list)
    raw: str | None = None  # an encoded query sent as it is (mutated requests)
    kind: str = ""
    guest: Guest | None = None  # whose request it is, with that guest's own id
    msg_no: int | None = None  # a poll's msgNo when it is the guest's own last j
    fresh_b: bool = False  # getBMsg with `N.0`: every `b` line comes, new or not
    tick: float = 0.0  # the hub fuzz only: move the clocks on instead of sending anything

    def co(self) -> str:
        return next((value for name, value in self.params if name == "co"), "")

    def query(self) -> str:
        if self.raw is not None:
            return self.raw
        return "&".join(f"{quote(name, safe='')}={quote(value, safe='')}" for name, value in self.params)

    def target(self) -> str:
        query = self.query()
        return f"{self.path}?{query}" if query or self.raw is not None else self.path


@dataclass
class Problem:
    what: str
    request: str
    status: int
    body: str

    def __str__(self) -> str:
        return (
            f"{self.what}\n    request: {self.request[:600]}\n    answer:  {self.status} {self.body[:600]!r}"
        )


class Fuzzer:
    """Random and mutated requests from a few guests (and registered players), and the judge of the answers.

    It learns tables, seats, turns, dots and invitations from the replies, so that many requests are
    plausible (the right player moving on a free point) and games really start, end and get archived.
    Now and then a guest comes back with a new id, in the middle of its games, as MultiPoints does when
    it is started again.
    """

    def __init__(
        self,
        seed: int,
        *,
        guests: int = 5,
        registered: int = 2,
        key: str | None = None,
        hub_only: bool = False,
    ) -> None:
        self.rng = random.Random(seed)
        self.hub_only = hub_only  # only /a.kropki, no long polls, clock ticks instead
        self.key = key
        tag = seed % 10_000
        self.guests = [Guest(f"fz{i}x{tag}", f"*Fz{i}") for i in range(guests)]
        self.guests += [
            Guest(f"fuzzreg{i}x{tag:04d}", f"Fuzzreg{i}", registered=True) for i in range(registered)
        ]
        self.tables: dict[int, TableInfo] = {}
        self.seen_tables: set[int] = set()
        self.archived: set[int] = set()
        self.tournaments: set[str] = set()
        self.last_j = 0
        self.sent = 0
        self.statuses: Counter[int] = Counter()
        self.answers: Counter[str] = Counter()
        self.kinds: Counter[str] = Counter()
        self.hangs: list[str] = []  # tables whose four crosses never ended (in-process runs only)
        self.refused: Counter[str] = Counter()  # refusals of stream commands, by their first words
        self.problems: list[Problem] = []
        self.failures = 0
        self.ids_used = {guest.secret for guest in self.guests}  # a guest's new ids too (come_back)
        self.storage_away = False  # the database is away: a page that needs it is answered 503, as documented

    # --- making requests ----------------------------------------------------------------------------

    def next(self) -> Request:
        rng = self.rng
        offline = [g for g in self.guests if not g.online and g.rest_until <= self.sent]
        playing_guests = [g for g in self.guests if g.online and not g.registered]
        if offline and rng.random() < 0.3:
            request = self.login(rng.choice(offline))
        elif playing_guests and rng.random() < 0.01:
            request = self.login(self.come_back(rng.choice(playing_guests)))
        elif self.hub_only and rng.random() < 0.02:
            request = Request("", kind="tick", tick=rng.choice([0.5, 1, 2, 3, 5, 10, 30, 61, 65, 700, 3700]))
        else:
            roll = rng.random()
            if roll < 0.5:
                request = self.poll(self.pick_guest())
            elif roll < 0.66:
                request = self.old_style(self.pick_guest())
            elif roll < 0.72:
                request = self.garbage()
            elif roll < 0.8:
                request = self.mutated()
            elif self.hub_only:
                request = self.poll(self.pick_guest())
            elif roll < 0.85:
                request = self.auth()
            elif roll < 0.93:
                request = self.archive()
            else:
                organiser = [self.set_up_table, self.cancel_table, self.hosted, self.hosted]
                request = rng.choice(organiser)()
        self.kinds[request.kind] += 1
        return request

    def pick_guest(self) -> Guest:
        rng = self.rng
        online = [g for g in self.guests if g.online] or self.guests
        if rng.random() < 0.4:
            movers = [g for g in online if any(self.my_turn(g, t) for t in self.tables.values())]
            if movers:
                return rng.choice(movers)
        if rng.random() < 0.3:
            invited = [g for g in online if g.invited_by]
            if invited:
                return rng.choice(invited)
        return rng.choice(online)

    def other(self, guest: Guest) -> Guest:
        return self.rng.choice([g for g in self.guests if g is not guest])

    @staticmethod
    def my_turn(guest: Guest, table: TableInfo) -> bool:
        return not table.over and table.players[table.to_move - 1 : table.to_move] == [guest.nick]

    def whom(self, guest: Guest) -> str:
        """Whom an invitation names: another guest, now and then a team game's other players in turn
        order (docs/teams.md: three for two against two, sometimes a wrong number or a stranger)."""
        rng = self.rng
        r = rng.random()
        if r < 0.8:
            return self.other(guest).nick
        if r < 0.95:
            others = [g.nick for g in self.guests if g is not guest]
            count = rng.choice([3, 3, 3, 1, 2, 4, 5])
            nicks = rng.sample(others, min(count, len(others)))
            if rng.random() < 0.1:
                nicks[-1] = rng.choice([guest.nick, random_text(rng, 4), ""])
            return ",".join(nicks)
        return random_text(rng, 6)

    def secret(self, guest: Guest) -> str:
        if self.rng.random() < 0.95:
            return guest.secret
        return self.rng.choice(
            ["", "nobody", self.other(guest).secret, "a" * 70, "fz?", random_text(self.rng, 5)]
        )

    def come_back(self, guest: Guest) -> Guest:
        """The guest's client starts again, as MultiPoints does after a crash: a new random id, its session
        left behind (docs/protocol.md, "A guest who comes back")."""
        guest.secret = str(self.rng.randrange(10**8, 10**9))  # MultiPoints' kind: digits
        self.ids_used.add(guest.secret)
        guest.online, guest.seen, guest.sections, guest.invited_by = False, 0, [], None
        return guest

    def login(self, guest: Guest) -> Request:
        rng = self.rng
        if not guest.registered and rng.random() < 0.2:
            self.come_back(guest)
        if guest.registered:
            params = [("co", "loguj" if guest.account else "rejestruj"), ("opisGracza", guest.nick)]
            params += [("idGracza", guest.secret), ("email", "v")]
            if rng.random() < 0.5:
                params.append(("lang", rng.choice(LANGS)))
            return Request("/auth.py", params, kind="login", guest=guest)
        lang = rng.choice(LANGS + ["en"] * 8 + ["xx", "", "EN"])
        params = [("co", "guestLogin"), ("idGracza", guest.secret), ("opis", guest.nick), ("lang", lang)]
        return Request("/a.kropki", params, kind="login", guest=guest)

    def number(self, guest: Guest) -> str:
        rng = self.rng
        r = rng.random()
        if r < 0.85:
            guest.number += 1
            return str(guest.number)
        if r < 0.92:
            return str(max(0, guest.number - rng.randint(0, 3)))  # already processed: ignored
        if r < 0.96:
            guest.number += rng.randint(2, 1000)
            return str(guest.number)
        return rng.choice(["", "x", "-1", "1" * 13, "٣", "0x1"])

    def table_for(self, guest: Guest, playing: bool = True) -> str:
        rng = self.rng
        r = rng.random()
        mine = [uid for uid, t in self.tables.items() if guest.nick in t.players and not t.over]
        turn = [uid for uid in mine if self.my_turn(guest, self.tables[uid])]
        if playing and turn and r < 0.6:
            return str(rng.choice(turn))
        if playing and mine and r < 0.75:
            return str(rng.choice(mine))
        if self.tables and r < 0.9:
            return str(rng.choice(list(self.tables)))
        return rng.choice([*BAD_TABLES, "0", str(rng.randint(1, 60))])

    def table_info(self, table: str) -> TableInfo | None:
        return self.tables.get(int(table)) if table.isascii() and table.isdigit() else None

    def move_text(self, guest: Guest, table: str) -> str:
        info = self.table_info(table)
        if info is None or not info.width:
            return random_move(self.rng, 20, 20)
        side = info.players.index(guest.nick) + 1 if guest.nick in info.players else 0
        me = 0 if not side else 1 if side % 2 else 2
        return random_move(self.rng, info.width, info.height, info.dots, me)

    def proposal(self, guest: Guest, table: str) -> str:
        rng = self.rng
        info = self.table_info(table)
        if info is not None and info.proposal and rng.random() < 0.6:
            who, what = info.proposal[0], info.proposal[1:]
            answer = rng.choice(["ok", "ok", "ok", "accept", "reject", "cancel"])
            if what == "new":
                return "new" if rng.random() < 0.7 else f"{answer}{who}{what}"
            return f"{answer}{rng.choice([who, who, who, '1', '2'])}{what}"
        if info is not None and info.over and rng.random() < 0.6:
            return "new"
        return rng.choices(
            [*PROPOSALS, "resign", "", "RESIGN", "ok1", "ok3undo", "accept2score", random_text(rng, 8)],
            [3, 3, 1, 2, 4, 1, 1, 1, 1, 1, 1, 2],
        )[0]

    def game_type(self) -> str:
        rng = self.rng
        r = rng.random()
        if r < 0.75:
            return rng.choice(GAME_TYPES[:17])
        if r < 0.85:
            return rng.choice(GAME_TYPES)
        if r < 0.95:
            return mutate(rng, rng.choice(GAME_TYPES), GAME_TYPE_PIECES)
        return random_text(rng)

    def chat(self, guest: Guest) -> tuple[str, str]:
        """(table field, text) of a chat command or dodajWpis."""
        rng = self.rng
        r = rng.random()
        other = self.other(guest).nick if rng.random() < 0.85 else random_text(rng, 6)
        if r < 0.45:
            return "0", self.chat_text()
        if r < 0.6:
            return self.table_for(guest, playing=False), self.chat_text()
        if r < 0.72:
            return "_" + encode_client_text(other), self.chat_text()
        if r < 0.8:
            return "get", rng.choice(["0", "30", "_" + encode_client_text(other), "x", ""])
        if r < 0.86:
            return "del", rng.choice(["_" + encode_client_text(other), "_", ""])
        if r < 0.9:
            return "delmsg", rng.choice(["0.1_0", "0._*Fz1", "x.y", ""])
        return rng.choice(BAD_TABLES), self.chat_text()

    def chat_text(self) -> str:
        rng = self.rng
        r = rng.random()
        if r < 0.5:
            return encode_client_text(random_text(rng))
        if r < 0.7:
            return f"hello {rng.randrange(1000)}"
        if r < 0.8:
            return random_text(rng).replace("/", "")
        return rng.choice(["a" * 301, "é" * 300, "   ", "@S@A@@", "@", "\t\n", "x" * 299 + "@S"])

    def command(self, guest: Guest) -> str:
        rng = self.rng
        kind = rng.choices("scvubqti?", [25, 15, 14, 12, 8, 5, 4, 4, 10])[0]
        if kind == "i":
            return "i" + rng.choice(["0nJa", "0nJa", "0nJb", "a", "b", "J", "", random_text(rng, 4)])
        if kind == "?":
            return rng.choice(
                ["c", "c1", "c1.", "s.1.ab", "1.2.3", "ć1.0.x", "c1.0", "C1.0.x", "a1.0.x", "z9.9.9"]
                + ["x", "", "i", random_text(rng), f"w{guest.number + 1}.0.x"]
            )
        number = self.number(guest)
        if kind == "s":
            table = self.table_for(guest)
            return f"s{number}.{table}.{self.move_text(guest, table)}"
        if kind == "u":
            table = self.table_for(guest)
            return f"u{number}.{table}.{self.proposal(guest, table)}"
        if kind == "t":
            return f"t{number}.{self.table_for(guest)}.{rng.choice(['p', 'u', 'u', '', 'x'])}"
        if kind == "c":
            table, text = self.chat(guest)
            return f"c{number}.{table}.{text}"
        if kind in "bq":
            return f"{kind}{number}.{self.table_for(guest, playing=False)}."
        if len(guest.sections) > 6 and rng.random() < 0.5:  # leave finished games, or replies grow for ever
            over = [uid for uid in guest.sections[1:] if uid not in self.tables or self.tables[uid].over]
            return f"q{number}.{rng.choice(over or guest.sections[1:])}."
        # v: invitations
        if guest.invited_by and rng.random() < 0.6:
            return f"v{number}.0.a"
        r = rng.random()
        if r < 0.55:
            whom = self.whom(guest)
            return f"v{number}.0.s.{encode_client_text(whom)}.{self.game_type()}"
        return f"v{number}.0.{rng.choice(['a', 'a', 'r', 'b', 'c', 'o', 'o', 's.', 'x', ''])}"

    def commands(self, guest: Guest) -> str | None:
        rng = self.rng
        r = rng.random()
        if r < 0.08:
            return None
        if r < 0.16:
            return "x"
        if r < 0.17:
            return "/".join(self.command(guest) for _ in range(MAX_COMMANDS + 1))
        if r < 0.175:
            return f"c{guest.number + 1}.0." + "a" * 6001
        if r < 0.2:
            return rng.choice(["", "/", "//", "x/x", "i", "c", "c1.0.a/", "/c1.0.a", random_text(rng)])
        commands = [self.command(guest) for _ in range(rng.choice([1, 1, 1, 2, 2, 3, 4, 6]))]
        turn = [uid for uid, table in self.tables.items() if self.my_turn(guest, table)]
        if turn and rng.random() < 0.7:  # keep games going: the player on move mostly moves
            table = str(rng.choice(turn))
            guest.number += 1
            commands.insert(0, f"s{guest.number}.{table}.{self.move_text(guest, table)}")
        return "/".join(commands)

    def wait(self) -> str:
        values = ["0", "0.0", "nan", "-1", "x", "", "inf", "-inf", "1e999"]
        return self.rng.choice(values if self.hub_only else [*values, "0.01", "0.05", "1e-9"])

    def poll(self, guest: Guest) -> Request:
        rng = self.rng
        secret = self.secret(guest)
        own = secret == guest.secret
        co = rng.choice(["getMsg", "getMsg", "getBMsg"])
        r = rng.random()
        proper = r < 0.9
        if r < 0.8:
            msg_no = str(guest.seen)
        elif r < 0.86:
            msg_no = f"{guest.seen}.0"
        elif r < 0.9:
            msg_no = f"{guest.seen}.{rng.randint(1, 99)}"
        else:
            msg_no = rng.choice(
                ["0", "1", str(guest.seen + rng.randint(1, 50)), str(max(0, guest.seen - rng.randint(1, 50)))]
                + BAD_MSG_NOS
            )
        params = [("co", co), (rng.choice(["playerId", "idGracza"]), secret)]
        if rng.random() < 0.97:
            params.append(("msgNo", msg_no))
        else:
            proper = False
        text = self.commands(guest)
        if text is not None:
            params.append(("msgFromClient", text))
        if rng.random() < 0.05:
            params.append(("wait", self.wait()))
        if rng.random() < 0.03:
            params.append(("wiad", "x"))
        if rng.random() < 0.1:
            rng.shuffle(params)
        if rng.random() < 0.03:
            params.append(rng.choice(params))
        return Request(
            "/a.kropki",
            params,
            kind="poll",
            guest=guest if own else None,
            msg_no=guest.seen if own and proper else None,
            fresh_b=co == "getBMsg" and msg_no.endswith(".0"),
        )

    def old_style(self, guest: Guest) -> Request:
        rng = self.rng
        co = rng.choices(OLD_COS, OLD_WEIGHTS)[0]
        if co == "guestLogin" and not guest.registered:
            request = self.login(guest)
            request.kind = "old:guestLogin"
            return request
        secret = self.secret(guest)
        params = [("co", co), (rng.choice(["idGracza", "playerId"]), secret)]
        table = self.table_for(guest, playing=co not in ("zmienStol", "dodajWpis"))
        if co == "graczStawiaKropke":
            params += [(rng.choice(["table", "stol"]), table), ("where", self.move_text(guest, table))]
        elif co == "okrazam":
            where = self.move_text(guest, table).replace("!", ".")
            params += [("table", table), ("where", rng.choice(["-", where, where, random_text(rng, 4)]))]
        elif co == "propose":
            params += [("table", table), ("proposal", self.proposal(guest, table))]
        elif co == "stopMove":
            params += [("stol", table)]
        elif co == "dodajeCzas":
            seconds = ["1", "30", "3600", "3601", "0", "-5", "abc", "", "1e3", "٣", "9" * 11]
            params += [("stol", table), ("ile", rng.choice(seconds))]
        elif co == "pauseClock":
            params += [(rng.choice(["table", "stol"]), table), ("what", rng.choice(["p", "u", "p", "x", ""]))]
        elif co == "zmienStol":
            params += [("newTable", rng.choice([table, table, "0", "abc", "999", ""]))]
        elif co == "dodajWpis":
            chat_table, text = self.chat(guest)
            params += [("table", chat_table), ("newMsgs", decode_client_text(text))]
            if rng.random() < 0.3:
                params.append(("msgNo", rng.choice(["0", "x", str(guest.seen)])))
        elif co == "changeLang":
            params += [("na", rng.choice([*LANGS, "", "xx", "EN"]))]
        elif co == "zapraszam":
            params += [("whom", self.whom(guest)), ("gameType", self.game_type())]
        if len(params) > 2 and rng.random() < 0.05:
            del params[rng.randrange(1, len(params))]
        own = secret == guest.secret
        return Request("/a.kropki", params, kind=f"old:{co}", guest=guest if own else None)

    def any_value(self) -> str:
        rng = self.rng
        return rng.choice(
            [
                random_text(rng),
                rng.choice(self.guests).secret,
                rng.choice(self.guests).nick,
                self.table_for(self.guests[0]),
            ]
            + [str(rng.randint(-5, 10**6)), "", "x", self.game_type(), random_move(rng, 20, 20)]
        )

    def garbage(self) -> Request:
        rng = self.rng
        co = rng.choice(
            [*kropki.HANDLERS, "", "setUpTable", "GETMSG", "getmsg ", "getMsg\x00", random_text(rng, 8)]
        )
        if self.hub_only and co == "setUpTable":
            co = "getMsg"
        params = [("co", co)] if rng.random() < 0.95 else []
        for _ in range(rng.randint(0, 6)):
            params.append((rng.choice([*PARAM_NAMES, random_text(rng, 5)]), self.any_value()))
        return Request("/a.kropki", [(n, v) for n, v in params if n != "wait"], kind="garbage")

    def mutated(self) -> Request:
        rng = self.rng
        guest = self.pick_guest()
        base = rng.choice([self.poll, self.old_style, lambda _: self.garbage()])(guest)
        raw = mutate(rng, base.query(), QUERY_PIECES)
        raw = "".join(c if 32 < ord(c) < 127 and c != "#" else quote(c) for c in raw)
        names = {name for name, _ in parse_qsl(raw, keep_blank_values=True)}
        if "wait" in names or (self.hub_only and "setUpTable" in raw):
            raw = raw.replace("wait", "wain").replace("setUpTable", "setUpTab1e")
        return Request(base.path, raw=raw, kind="mutated")

    def valid_nick(self, guest: bool) -> str:
        return (
            ("*" if guest else "")
            + self.rng.choice(["Zed", "Ann", "Фёдор", "Ola", "Tiny"])
            + str(self.rng.randrange(100))
        )

    def auth(self) -> Request:
        rng = self.rng
        registered = [g for g in self.guests if g.registered]
        account = rng.choice(registered) if registered and rng.random() < 0.4 else None
        co = rng.choice(
            ["rejestruj", "loguj", "loguj", "dajPref", "dajPref", "dajOpis", "dajOpis", "", "nope"]
        )
        nick = (
            account.nick
            if account
            else rng.choice([self.valid_nick(False), self.valid_nick(True), random_text(rng), "", "A" * 21])
        )
        if account and rng.random() < 0.7:
            secret = account.secret
        else:
            length = rng.choice([5, 10, 20, 64, 65])
            secret = rng.choice(
                [
                    "".join(rng.choice(string.ascii_letters + "_.") for _ in range(length)),
                    random_text(rng),
                    "",
                ]
            )
        params = [("co", co), ("opisGracza", nick), (rng.choice(["idGracza", "playerId"]), secret)]
        if rng.random() < 0.5:
            params.append(("email", rng.choice(["v", "a@b.c", "x" * 201, random_text(rng)])))
        if rng.random() < 0.5:
            params.append(("lang", rng.choice([*LANGS, "", "xx"])))
        if rng.random() < 0.1:
            rng.shuffle(params)
        return Request("/auth.py", params, kind=f"auth:{co}")

    def archive(self) -> Request:
        rng = self.rng
        r = rng.random()
        if r < 0.35:
            if self.archived and rng.random() < 0.6:
                number = str(rng.choice(sorted(self.archived)))
            else:
                numbers = "0 1 2 -1 abc 1111111111111 999999999999 99999999999 2147483648 %00 %D9%A3 1.sgf"
                numbers += " %2E%2E 1%2F2 %20"
                number = rng.choice([*numbers.split(), "", quote(random_text(rng), safe="")])
            return Request(f"/sgf/{number}{rng.choice(['', '', '.sgf'])}", kind="sgf")
        if r < 0.65:
            nick = rng.choice(
                [g.nick for g in self.guests] + [self.valid_nick(True), random_text(rng), "", "*"]
            )
            params = [("nick", nick)] if rng.random() < 0.95 else []
            if rng.random() < 0.5:
                params.append(
                    ("limit", rng.choice(["0", "1", "50", "500", "501", "abc", "-1", "", "٣", "1" * 30]))
                )
            return Request("/games", params, kind="games")
        if r < 0.9:
            if self.tournaments and rng.random() < 0.5:
                name = rng.choice(sorted(self.tournaments))
            else:
                name = rng.choice(["Fuzz Cup", "x", "", "%00", random_text(rng)])
            name = name if name == "%00" else quote(name, safe="")
            tail = rng.choice(["", "", ".sgf.zip", "/standings", "/standings.json"])
            return Request(f"/tournament/{name}{tail}", kind="tournament")
        paths = "/ /healthz /readyz /metrics /a.kropki/x /auth.py/ /sgf /sgf/ /games/ /nope /tournament/"
        paths += " /tournament /%00 /a.kropki%00 /sgf/1/2 /tournament/a/b"
        return Request(rng.choice(paths.split()), kind="paths")

    def set_up_table(self) -> Request:
        rng = self.rng
        params = [("co", "setUpTable")]
        if self.key is not None and rng.random() < 0.8:
            params.append(("key", self.key))
        elif rng.random() < 0.8:
            params.append(("key", rng.choice(["", "nokey", random_text(rng)])))
        params.append(("gameType", self.game_type()))
        nicks = [g.nick for g in self.guests]
        first = rng.choice(nicks + [self.valid_nick(True), self.valid_nick(False), "bad nick!!", ""])
        second = rng.choice(nicks + [first, self.valid_nick(True), random_text(rng, 5)])
        params += [("pl1", first), ("pl2", second)]
        say_hi = ["0.0", "5.5", "30.0", "7200.7200", "7201.0", "abc", "", "1.2.3"]
        if rng.random() < 0.3:  # a team game (docs/teams.md): pl3, pl4, ..., now and then with a gap
            numbers = rng.choice([[3, 4], [3, 4], [3, 4, 5, 6], [3], [4], [3, 4, 5, 6, 7, 8, 9]])
            params += [(f"pl{n}", rng.choice(nicks + [self.valid_nick(True), first])) for n in numbers]
            say_hi = [".".join(["5"] * (2 + len(numbers))), ".".join(["0"] * (2 + len(numbers))), *say_hi]
        params.append(("sayHiTimes", rng.choice(say_hi)))
        tournaments = ["x", "Fuzz Cup", "Fuzz.Open", "Fuzz/Cup", "Кубок", random_text(rng), "a" * 101]
        params.append(("tourn", rng.choice(tournaments)))
        params.append(("tRound", rng.choice(["x", "1", "2", random_text(rng), "a" * 101])))
        if rng.random() < 0.1:
            del params[rng.randrange(1, len(params))]
        return Request("/a.kropki", params, kind="setUpTable")

    def cancel_table(self) -> Request:
        rng = self.rng
        params = [("co", "cancelTable")]
        if self.key is not None and rng.random() < 0.8:
            params.append(("key", self.key))
        elif rng.random() < 0.8:
            params.append(("key", rng.choice(["", "nokey", random_text(rng)])))
        known = [str(uid) for uid in self.tables]
        table = rng.choice(known + ["0", "-1", "abc", "", "1" * 10, "٣", random_text(rng, 4)])
        if rng.random() < 0.95:
            params.append(("table", table))
        return Request("/a.kropki", params, kind="cancelTable")

    def hosted(self) -> Request:
        """The tournaments the server runs: created (by the key, sometimes badly), joined and left."""
        rng = self.rng
        roll = rng.random()
        if roll < 0.1:
            return Request("/tournaments.json", kind="tournaments")
        names = ["Fuzz Swiss", "Fuzz Arena", "x", "", "a/b", random_text(rng), "a" * 101]
        if roll < 0.4:
            params = [("co", "createTournament"), ("key", self.key or "nokey"), ("tourn", rng.choice(names))]
            params.append(("kind", rng.choice(["swiss", "arena", "", "knockout"])))
            params.append(("gameType", self.game_type()))
            params.append(
                (rng.choice(["rounds", "minutes"]), rng.choice(["0", "1", "5", "10", "21", "abc", ""]))
            )
            params.append(("start", rng.choice(["0", "now", "2026-12-01T18:00Z", str(int(time.time())), ""])))
            for name in ("minRating", "maxRating", "sayHi"):
                if rng.random() < 0.3:
                    params.append((name, rng.choice(["0", "1500", "601", "-1", "x"])))
            if rng.random() < 0.1:
                del params[rng.randrange(1, len(params))]
            return Request("/a.kropki", params, kind="createTournament")
        guest = self.pick_guest()
        if roll < 0.45:
            params = [("co", "cancelTournament"), ("key", self.key or "nokey"), ("tourn", rng.choice(names))]
            return Request("/a.kropki", params, kind="cancelTournament")
        co = rng.choice(["joinTournament", "joinTournament", "leaveTournament"])
        params = [("co", co), ("idGracza", self.secret(guest)), ("tourn", rng.choice(names[:2] + names))]
        return Request("/a.kropki", params, kind=co, guest=guest)

    # --- judging answers ----------------------------------------------------------------------------

    def fail(self, request: Request, status: int, body: str, what: str) -> None:
        self.failures += 1
        if len(self.problems) < 50:
            self.problems.append(Problem(what, request.target(), status, body))

    def observe(self, request: Request, status: int, body: str) -> None:
        self.sent += 1
        self.statuses[status] += 1
        if self.storage_away and status == 503 and body == DATABASE_UNREACHABLE:
            self.answers["503 storage away"] += 1
        elif not status or status >= 500:
            self.fail(request, status, body, "no answer" if not status else f"HTTP {status}")
        if request.path in ("/a.kropki", "/auth.py") and body in ("err.internal", "nieOk."):
            self.fail(request, status, body, "internal error")
        if request.path == "/a.kropki" and status == 200:
            if body.startswith(("ok/", "sd/")):
                self.answers[body[:2]] += 1
                self.reply(request, body)
                return
            self.answers[body or "(empty)"] += 1
            if not ANSWER.fullmatch(body):
                self.fail(request, status, body, "unexpected answer")
            self.answer(request, body)
        elif request.path == "/auth.py" and status == 200:
            self.answers[".".join(body.split(".")[:2])] += 1
            guest = request.guest
            if guest is not None and (body == REGISTERED or body.startswith(LOGGED_IN)):
                guest.account = guest.online = True
            elif guest is not None and body == NICK_TAKEN:
                guest.account = True
            elif guest is not None and body.startswith("nieOk.too"):
                guest.rest_until = self.sent + 1000  # the address is blocked for a while: try later
        else:
            self.answers[f"{request.kind} {status}"] += 1

    def answer(self, request: Request, body: str) -> None:
        guest, co = request.guest, request.co()
        if guest is not None:
            if co == "guestLogin" and body == "":
                guest.online = True
            elif co == "guestLogin" and body.startswith("err."):
                guest.rest_until = self.sent + 100
            elif body == "err.notLoggedIn" or (co == "usunGracza" and body == ""):
                guest.online = False
        if co == "setUpTable" and body.startswith("ok."):
            tournament = dict(request.params).get("tourn", "x")
            if tournament != "x":
                self.tournaments.add(tournament)

    def reply(self, request: Request, body: str) -> None:
        for what in reply_problems(body):
            self.fail(request, 200, body, what)
        parts = body.split("/")
        head = HEAD.fullmatch(parts[1]) if len(parts) > 2 else None
        if head is None:
            return
        first, last, _ = (int(n) for n in head.groups())
        if last < self.last_j:
            self.fail(request, 200, body, f"j went back from {self.last_j} to {last}")
        self.last_j = max(self.last_j, last)
        guest = request.guest
        if guest is not None and parts[0] == "ok":
            if request.msg_no is not None:
                news = [p for p in parts[2:-1] if not p.startswith(("q", "vg", "vs", "vr"))]
                news = [p for p in news if not (request.fresh_b and p.startswith("b"))]
                if first > request.msg_no or last < request.msg_no:
                    self.fail(request, 200, body, f"m{first}.{last} does not follow msgNo {request.msg_no}")
                elif news and last == request.msg_no:
                    self.fail(request, 200, body, f"new lines without a new j ({news[:3]})")
            guest.online, guest.seen, guest.invited_by = True, last, None
            guest.sections = [int(p[1:]) for p in parts[2:-1] if re.fullmatch(r"q\d+", p)]
        elif guest is not None:
            guest.online = False
        self.learn(parts[2:-1], guest if parts[0] == "ok" else None)

    def learn(self, parts: list[str], guest: Guest | None) -> None:
        section = LOBBY
        for part in parts:
            if re.fullmatch(r"q\d+", part):
                section = int(part[1:])
                continue
            info = self.tables.get(section)
            try:
                if part.startswith(("ga", "gr")) and part[2:]:
                    for uid in part[2:].split("."):
                        self.tables.setdefault(int(uid), TableInfo())
                        self.seen_tables.add(int(uid))
                elif part.startswith("gd") and part[2:]:
                    for uid in part[2:].split("."):
                        self.tables.pop(int(uid), None)
                elif part.startswith("d"):
                    head, blue, red = part[1:].rsplit(".", 2)
                    uid, game_type = head.split(".", 1)
                    table = self.tables.setdefault(int(uid), TableInfo())
                    table.width, table.height, table.rules = (
                        int(game_type[:2]),
                        int(game_type[2:4]),
                        game_type[4],
                    )
                    table.blue, table.red = blue, red
                    teams = blue.split(","), red.split(",")
                    table.players = [nick for pair in zip(*teams, strict=False) for nick in pair]
                elif part.startswith("x"):
                    uid, side, result, number = part[1:].split(".")
                    table = self.tables.setdefault(int(uid), TableInfo())
                    table.to_move, table.over = int(side), result != "-"
                    if number:
                        self.archived.add(int(number))
                elif part.startswith("sr(") and info is not None:
                    info.dots = {}
                    for colour, values in re.findall(r"A([BW])((?:\[[a-zA-Z]{2}\])+)", part):
                        for point in re.findall(r"\[([a-zA-Z]{2})\]", values):
                            info.dots[point] = 1 if colour == "B" else 2
                    self.moves(info, part)
                elif part.startswith("sa;") and info is not None:
                    self.moves(info, part)
                elif part.startswith("u") and not part.startswith("u;") and info is not None:
                    info.proposal = part[1:].split(".")[0]  # a team's: `.<sides that agreed>` after it
                elif part.startswith("vg") and guest is not None:
                    guest.invited_by = part[2:].split(".", 1)[0]
                elif part.startswith(("ca", "cr")):
                    nick_type = part.split(".", 3)[2] if part.count(".") >= 3 else ""
                    if nick_type == "e" and part.startswith("ca"):
                        self.refused[
                            " ".join(re.sub(r"[^A-Za-z ]", " ", part.split(".", 3)[3]).split()[:3])
                        ] += 1
                    if re.fullmatch(r"l\d+", nick_type):
                        self.archived.add(int(nick_type[1:]))
            except ValueError:
                pass  # a malformed line: reply_problems has said so already

    @staticmethod
    def moves(info: TableInfo, part: str) -> None:
        for undo, colour, point in re.findall(r";(U?)([BW])\[([a-zA-Z]{2})?", part):
            if undo:
                info.dots.pop(point, None)
            elif point:
                info.dots[point] = 1 if colour == "B" else 2

    def summary(self) -> str:
        """What was sent and answered, for people reading a run."""
        lines = [
            f"requests sent: {self.sent}",
            "by status: " + ", ".join(f"{status}: {n}" for status, n in sorted(self.statuses.items())),
            "by kind: " + ", ".join(f"{kind} {n}" for kind, n in self.kinds.most_common()),
            "answers: " + ", ".join(f"{answer[:40]!r} {n}" for answer, n in self.answers.most_common(30)),
            "stream refusals: " + ", ".join(f"{what!r} {n}" for what, n in self.refused.most_common(12)),
            f"tables seen: {len(self.seen_tables)}, games archived: {len(self.archived)}",
            f"failures: {self.failures + len(self.hangs)}",
        ]
        return "\n".join(lines)

    def report(self) -> str:
        lines = [f"{self.failures} failures in {self.sent} requests", *self.hangs[:10]]
        lines += [str(problem) for problem in self.problems[:10]]
        return "\n".join(lines)


# --- hub invariants and archived records ------------------------------------------------------------


def check_hub(hub: Hub, *, boards: bool = True) -> None:
    """Everyone is at the tables they think they are at and nowhere else; nicks, invitations and game
    boards agree with themselves. In a cluster, a person of another member stands for them at this
    member's tables and in its invitations (`visiting_from`, server/hub/visiting.py)."""
    players = hub.players

    def known(person: Player) -> bool:
        return players.get(person.secret) is person or bool(person.visiting_from)

    assert len(hub.by_nick) == len(players)
    for key, player in hub.by_nick.items():
        assert players.get(player.secret) is player and key == nick_key(player.nick), f"by_nick {key}"
    assert len(hub.by_look) == len(players)  # no two players online look alike
    for key, player in hub.by_look.items():
        assert players.get(player.secret) is player and key == look_key(player.nick), f"by_look {key}"
    for secret, player in players.items():
        assert player.secret == secret
        assert player.tables[0] == LOBBY and len(set(player.tables)) == len(player.tables), player.tables
        assert set(player.joined) == set(player.tables), (player.nick, player.joined, player.tables)
        for uid in player.tables:
            mirror = hub.mirrors.by_uid.get(uid)  # another member's table, in a cluster
            at = hub.tables[uid].people if uid in hub.tables else mirror.people if mirror else None
            assert at is not None, f"{player.nick} thinks it is at table {uid}, which is gone"
            assert at.get(player.nick) is player, f"{player.nick} is not at {uid}"
    for uid, table in hub.tables.items():
        assert table.uid == uid and (table.room is None) == (uid == LOBBY)
        for nick, person in table.people.items():
            assert person.nick == nick and known(person), f"{nick} at {uid} left"
            assert uid in person.tables, f"{nick} is at {uid} without knowing it"
        if table.room is not None:
            assert table.room.uid == uid
            if boards:
                check_board(table.room.game.board)
    for uid, mirror in hub.mirrors.by_uid.items():
        assert mirror.uid == uid and uid not in hub.tables, f"{uid} is both this member's and mirrored"
        for nick, person in mirror.people.items():
            assert players.get(person.secret) is person and uid in person.tables, f"{nick} at {uid}"
    assert {id(p) for p in hub.lobby.people.values()} == {id(p) for p in players.values()}
    # the lobby's texts kept joined (Tables.lobby_nicks and the others) are what joining them anew gives
    lobby = hub.lobby.people.values()
    assert hub.tables.lobby_nicks.joined == ".".join(p.nick for p in lobby)
    assert hub.tables.lobby_infos.joined == "/".join(filter(None, (p.info for p in lobby)))
    kept_b = hub.tables.lobby_subscriptions.joined
    assert kept_b == "/".join(subscriptions(p.nick, p.tables) for p in lobby)
    # and the tables' numbers and lines, as a whole state brings them up to date
    rooms = [table.room for table in hub.tables.values() if table.room is not None]
    assert hub.tables.lobby_table_numbers.joined == ".".join(str(room.uid) for room in rooms)
    kept_lines = hub.lobby_state._table_lines()
    assert kept_lines == "/".join(line for room in rooms for line in (room.description(), room.state()))
    for inviter, invitation in hub.invitations.items():  # a team invitation has several invitees
        assert invitation.inviter is inviter and invitation.invitee is invitation.invitees[0]
        assert known(inviter) and invitation.accepted <= set(invitation.invitees)
        for invitee in invitation.invitees:  # another member's player: their member keeps what they answer
            assert hub.incoming.get(invitee) is (None if invitee.visiting_from else invitation)
            assert known(invitee)
    for invitee, invitation in hub.incoming.items():
        assert invitee in invitation.invitees and hub.invitations.get(invitation.inviter) is invitation
        assert players.get(invitee.secret) is invitee
    # the invitations by their inviter's nick, which a game start withdraws (Invitations.sent_by)
    by_inviter: dict[str, set[int]] = {}
    for invitation in hub.invitations.values():
        by_inviter.setdefault(nick_key(invitation.inviter.nick), set()).add(id(invitation))
    assert {key: {id(i) for i in sent} for key, sent in hub.invites.sent_by.items()} == by_inviter


def check_idle(hub: Hub) -> None:
    """With no request in flight, no long poll is left waiting anywhere."""
    assert all(not table.waiters for table in hub.tables.values())
    assert all(not player.waiters for player in hub.players.values())


SCORE_RESULT = re.compile(r"[BW]\+\d+(?:\.5)?|0")


def check_archived(text: str) -> None:
    """An archived record reads, replays, and a result by score is the replay's own result."""
    record = read_record(text)
    replayed = replay_record(record)
    check_board(replayed.game.board)
    if record.result is not None and SCORE_RESULT.fullmatch(record.result):
        assert str(replayed.game.score_result()) == record.result, record.result


# --- layer 2: the hub in-process, clocks driven by the test -----------------------------------------


def run_sync(coroutine: Coroutine[Any, Any, str]) -> str:
    """Run a handler that never has to wait (no long poll, memory persistence) without an event loop."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value
    coroutine.close()
    raise AssertionError("the handler waited")


def hub_answer(hub: Hub, request: Request) -> str:
    """What `/a.kropki` answers, through its real handlers (server/web/kropki.py) but without HTTP."""
    pairs = request.params if request.raw is None else parse_qsl(request.raw, keep_blank_values=True)
    query = MultiDictProxy(MultiDict(pairs))
    handler = kropki.HANDLERS.get(query.get("co", ""))
    if handler is None:
        return "err.unknownCo"
    try:
        return run_sync(handler(hub, query))
    except ProtocolError as refused:
        return f"err.{refused.code}"
    except Exception as bug:
        bug.add_note(f"request: {request.target()}")
        raise


HUB_STEPS = 400


@settings(FAST, max_examples=20)
@given(st.integers(0, 2**32 - 1))
def test_fuzz_the_hub(seed: int) -> None:
    now = [1_800_000_000.0]
    timers = ManualTimers()
    persistence = MemoryPersistence()
    hub = Hub(clock=lambda: now[0], timers=timers, rng=random.Random(seed), persistence=persistence)
    fuzzer = Fuzzer(seed, registered=0, hub_only=True)
    with no_endless_crosses(fuzzer.hangs):
        for step in range(HUB_STEPS):
            request = fuzzer.next()
            if request.tick:
                timers.advance(request.tick)
                now[0] += request.tick
                hub.sweep()
            else:
                fuzzer.observe(request, 200, hub_answer(hub, request))
            check_hub(hub, boards=step % 10 == 0)
    check_hub(hub)
    assert not fuzzer.failures and not fuzzer.hangs, fuzzer.report()
    for text in persistence.records.values():
        check_archived(text)


# --- layer 3: the real app over HTTP ----------------------------------------------------------------

Send = Callable[[Request], Awaitable[tuple[int, str]]]


def http_sender(session: aiohttp.ClientSession, base: str, timeout: float = 30.0) -> Send:
    """Send a request's target exactly as made (mutated escapes included): (status, body), 0 if none."""

    async def send(request: Request) -> tuple[int, str]:
        url = URL(base + request.target(), encoded=True)
        try:
            async with session.get(
                url, timeout=aiohttp.ClientTimeout(total=timeout), allow_redirects=False
            ) as response:
                return response.status, await response.text(errors="replace")
        except (aiohttp.ClientError, TimeoutError) as failed:
            return 0, f"{type(failed).__name__}: {failed}"

    return send


def lift_request_limits(app: Any) -> None:
    """A fuzzer sends hundreds of requests a second from a few ids; the per-id limit (20 a second) and
    the whole server's reads of the store (100 a second), each with its own tests in
    tests/web/test_limits.py, would refuse most of them before they reach anything else."""
    app[LIMITS_KEY].per_id = TokenBuckets(1e9, 1e9)
    app[LIMITS_KEY].store_reads = TokenBuckets(1e9, 1e9)


def unexpected_errors(records: list[logging.LogRecord]) -> list[str]:
    """Records at ERROR, but for aiohttp's report of a request it could not parse (answered 400; kept and
    shortened on purpose, docs/operations.md "Logging")."""
    found = []
    for record in records:
        if record.levelno < logging.ERROR:
            continue
        failure = record.exc_info[1] if record.exc_info else None
        if record.name == "aiohttp.server" and isinstance(failure, HttpProcessingError):
            continue
        found.append(f"{record.levelname} {record.name}: {record.getMessage()[:300]}")
    return found


def with_ids(records: list[logging.LogRecord], ids: set[str]) -> list[str]:
    """Log lines holding a player's id, which is a password: in none, whatever the request."""
    return [r.getMessage() for r in records if any(secret in r.getMessage() for secret in ids)]


APP_SEEDS = [1, 2, 3]
APP_REQUESTS = 1200


@pytest.mark.parametrize("seed", APP_SEEDS)
async def test_fuzz_the_real_app(client: TestClient, caplog: pytest.LogCaptureFixture, seed: int) -> None:
    caplog.set_level(logging.INFO)  # the access log's lines too, read for ids below
    app = client.server.app
    lift_request_limits(app)
    hub = app[HUB_KEY]
    key = await app[TOURNAMENTS_KEY].add_key(f"fuzz{seed}", None, False)
    fuzzer = Fuzzer(seed, key=key)
    send = http_sender(client.session, str(client.make_url("/")).rstrip("/"))
    with no_endless_crosses(fuzzer.hangs):
        for n in range(APP_REQUESTS):
            request = fuzzer.next()
            fuzzer.observe(request, *await send(request))
            check_hub(hub, boards=n % 25 == 0)
    check_hub(hub)
    check_idle(hub)
    await hub.persistence.flush()
    for number in sorted(fuzzer.archived):
        response = await client.get(f"/sgf/{number}")
        assert response.status == 200, number
        check_archived(await response.text())
    logged = unexpected_errors(caplog.records)
    assert not logged, "\n".join(logged)
    assert not with_ids(caplog.records, fuzzer.ids_used)
    assert not fuzzer.failures and not fuzzer.hangs, fuzzer.report()
    assert fuzzer.statuses[200] > APP_REQUESTS // 2
    assert fuzzer.answers["ok"] > 50, fuzzer.answers  # the guests really played


# --- server bugs the fuzzers found (fixed since; each test failed on commit 5a394e6) ----------------


async def test_private_get_of_an_odd_nick_keeps_the_reply_well_formed(client: TestClient) -> None:
    """`c.get._<nick>` used to answer a `nochat` line with the requested nick raw: a `/` in it (sent as
    `@S`) split the reply in two and `<` reached clients unescaped."""
    ala = Zagram(client, "ala123", "*Ala")
    assert await ala.login() == ""
    await ala.poll()
    ala.send("c", "get", "_" + encode_client_text("a/b<i>"))  # on the wire: c1.get._a@Sb<i>
    body = await ala.get(playerId="ala123", co="getMsg", msgNo=str(ala.seen), msgFromClient=ala.commands[0])
    assert reply_problems(body) == [], body


@pytest.mark.parametrize(
    "command",
    ["v1.0.s.*Bo\nb.2020stanF0.0.0", "c1.\n1.hello", "c1._*B\nob.hello", "u1.\t.resign"],
    ids=["invitation nick", "table field", "private chat nick", "proposition table"],
)
async def test_refusal_lines_keep_the_reply_on_one_line(client: TestClient, command: str) -> None:
    """A refused command's server line used to repeat what the client sent as it was, line breaks too."""
    ala = Zagram(client, "ala123", "*Ala")
    assert await ala.login() == ""
    body = await ala.get(playerId="ala123", co="getMsg", msgNo="0", msgFromClient=command)
    assert [line for line in body.split("/") if REFUSAL.match(line)], body
    assert reply_problems(body) == [], body


def test_replay_refuses_overlapping_set_up_points() -> None:
    """replay_record used to let IllegalMove out of Game() (and `kropki-server replay` die with a
    traceback) when a set-up point was given twice."""
    with pytest.raises(ReplayError):
        replay_record(read_record("(;GM[40]FF[4]SZ[10]AB[ee]AW[ee];B[aa])"))


@pytest.mark.parametrize("side", [10, 11, 12, 13, 14])
def test_four_crosses_end_on_every_board_they_are_allowed_on(side: int) -> None:
    """start.four_crosses used to draw corners until four fitted and could paint itself into a corner:
    for four crosses on sides of 10-14 it never ended for most seeds (10x10: 62%, 11x11: 94%)."""
    for seed in range(40):
        for width, height in ((side, side), (side, 20), (20, side)):
            setup = bounded_four_crosses(width, height, seed)
            points = setup.black + setup.white
            assert len(set(points)) == 16 and all(0 <= x < width and 0 <= y < height for x, y in points)


def test_accepting_four_crosses_on_ten_by_ten_opens_a_table() -> None:
    """Accepting an invitation to `1010n0.4.a.F.n....` used to freeze the whole server (the loop above
    ran on the event loop)."""
    hub = Hub(rng=random.Random(0), timers=ManualTimers())
    hub.guest_login("ala123", "*Ala", "en")
    hub.guest_login("bob456", "*Bob", "en")
    hub.receive("ala123", parse_commands("v1.0.s.*Bob.1010n0.4.a.F.n...."))
    with mock.patch.object(engine_game, "four_crosses", bounded_four_crosses):
        hub.receive("bob456", parse_commands("v1.0.a"))
    assert len(hub.tables) == 2


def test_a_stop_before_the_first_move_is_in_the_archived_record() -> None:
    """A STOP pressed before the first move used to leave no trace in the record, so the archived SGF
    started with red's STOP dots and did not replay ('move 1 W[ed]: it is not your move')."""
    hub = Hub(rng=random.Random(0), timers=ManualTimers())
    hub.guest_login("ala123", "*Ala", "en")
    hub.guest_login("bob456", "*Bob", "en")
    hub.receive("ala123", parse_commands("v1.0.s.*Bob.1010n0.1.a.F.n...."))  # one cross, Ala is blue
    hub.receive("bob456", parse_commands("v1.0.a"))
    hub.stop("ala123", "1")  # STOP before any move: red's dots are placed round blue's cross
    hub.propose("bob456", "1", "resign")
    assert isinstance(hub.persistence, MemoryPersistence)
    replayed = replay_record(read_record(hub.persistence.records[1]))
    assert replayed.game.stopped == {BLACK}
    assert str(replayed.game.moves[0].point) == str(hub.tables[1].room.game.moves[0].point)


@pytest.mark.parametrize("command", [["tournament-key", "list"], ["user", "show", "Ala"]], ids=" ".join)
def test_admin_commands_on_an_empty_database_say_what_to_do(
    empty_database: str, command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """`kropki-server user ...` and `tournament-key ...` on a database without the schema used to die with
    a SchemaError traceback instead of saying what to do."""
    status = cli.main([command[0], "--db", empty_database, *command[1:]])
    assert status != 0 and "migrate" in capsys.readouterr().err


@pytest.mark.parametrize("path", ["/tournament/%00", "/tournament/a%00b", "/tournament/%00.sgf.zip"])
async def test_a_nul_in_a_tournament_name_is_not_found(client: TestClient, path: str) -> None:
    """On PostgreSQL the NUL reached the query, asyncpg refused it and the answer was a 500."""
    response = await client.get(path)
    assert response.status == 404, await response.text()


@pytest.mark.parametrize("number", ["2147483648", "999999999999", "99999999999.sgf"])
async def test_archive_numbers_beyond_32_bits_are_not_found(client: TestClient, number: str) -> None:
    """games.number is a 32-bit INTEGER: on PostgreSQL asyncpg refused the query and the answer was a 500."""
    response = await client.get(f"/sgf/{number}")
    assert response.status == 404, await response.text()
    assert "There is no game number" in await response.text()


@pytest.mark.parametrize("co", ["dajPref", "dajOpis"])
async def test_a_profile_of_a_nick_with_a_nul_is_no_such_user(
    client: TestClient, caplog: pytest.LogCaptureFixture, co: str
) -> None:
    """On PostgreSQL the NUL reached the query: the answer was the internal error `nieOk.`."""
    response = await client.get(f"/auth.py?co={co}&opisGracza=Ala%00")
    assert await response.text() == {"dajPref": "ok..", "dajOpis": ""}[co]
    assert not unexpected_errors(caplog.records)


def test_the_fuzzers_game_types_are_what_they_say() -> None:
    for text in GAME_TYPES[:17]:
        game_type = parse_game_type(text)
        assert game_type.start.kind is not StartKind.SGF and not game_type.tournament, text
    for text in GAME_TYPES[17:]:
        parse_game_type(text)  # valid, but refused in invitations


def test_the_reply_judge() -> None:
    good = (
        "ok/m0.8.3/q0/pr*Ala.*Bob/gr3/d3.0505s0..s.F.n....*Ala.*Bob/x3.1.-./i*Ala..F.en/q3/f1_/u/sa;B[cd]/end"
    )
    assert reply_problems(good) == []
    assert reply_problems("ok/m1.2.0/q0/ca1_0.*Ala-a/b<i>.nochat./end") == [
        "unescaped HTML character in 'b<i>.nochat.'",
        "malformed message 'ca1_0.*Ala-a'",
        "malformed message 'b<i>.nochat.'",
    ]
    assert reply_problems("ok/m1.2.0/q0/ca1_0..e.*Bo\nb is not online./end") == [
        "control character in 'ca1_0..e.*Bo\\nb is not online.'"
    ]
    assert reply_problems("ok/m1.2.0/q0/zz/end") == ["malformed message 'zz'"]
    # the extensions' lines, as docs/protocol.md's examples give them: seeks, a pool, the ignored
    extensions = "ka7.*Ala...2020s0.4.a.F.a.180.2../ka8.Bob.1400.1700.3932s0.4.s.R.a.300.5../kd7"
    assert reply_problems(f"ok/m1.2.0/q0/{extensions}/w20x20_3_2.12.340.2/n*Bob.Carol/n/end") == []
    assert reply_problems("ok/m1.2.0/q3/end") == ["the lobby section does not come first"]
