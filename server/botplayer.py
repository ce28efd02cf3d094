"""`kropki-server bot-play`: the server's own AI (server/engine/ai.py) as a bot of any server's bot API
(docs/bots.md), so that its searches can run on another machine than the server's.

It keeps each game's board with the engine (the feed's set-up dots and moves), asks `ai.choose_move`
for a move when its colour is on move, with the budget the in-process AI players take from the clock
(server/hub/computer.py), and answers propositions as they do. Blocking HTTP (urllib) in a process of
its own: one game's search at a time, which is what one level's playouts need of a core.

Three threads: one reads the feed, always (a feed its bot does not read for 10 s is closed by the
server, and a busy lobby fills its buffers in seconds: before, the feed was read only between searches
and was closed mid-game); one searches; the main one takes the feed's events and the searches' moves
in turn from one queue, keeps the boards, answers, and plays a move only if its game still stands
where the search began.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import logging
import queue
import random
import socket
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from server import logs
from server.engine import ai
from server.engine.board import Board, IllegalMove
from server.hub.computer import ANSWERS, move_budget

log = logging.getLogger(__name__)

ENV_TOKEN = "KROPKI_BOT_TOKEN"  # never a flag: a command line is shown by `ps` to every user
COLOURS = {"blue": 1, "red": 2}
FEED_TIMEOUT = 60.0  # seconds without a byte (the server writes at least every 20 s)
REOPENED_AFTER = frozenset({"moved", "stopping"})  # the feed's ends that ask the bot to open it again
LONGEST_PAUSE = 30.0  # seconds between two tries to open the feed, at most
TOO_OFTEN = 429  # the feed was opened too often: opened again after its Retry-After
FEED_TYPE = "application/x-ndjson"
# refusals of a move that was not made and is sent again a second later: over the request limit, or the
# server cannot store anything now (503: its clocks stand still); nothing in the feed calls for it again
TRY_AGAIN = ("tooFast", "storage")
# finished games remembered, the latest: for a `new` game at their table, and to count each archive number
# once when a feed opened again says it again. A finished game's table stays an hour, and a player
# begins at most 60 games an hour (docs/operations.md, "Abuse limits"); older ones are forgotten.
ENDED_KEPT = 100


def not_a_feed(status: int, content_type: str) -> dict[str, Any]:
    """The last event when the address answers, but not as the bot API: another web server's page
    (before, bot-play died on its HTML with a JSONDecodeError)."""
    message = f"HTTP {status} ({content_type}) is not the bot API's feed: check --server"
    return {"type": "error", "code": "notAFeed", "message": message}


def retry_after(refused: urllib.error.HTTPError) -> float:
    """The seconds a refusal asks to wait (`Retry-After`), 1 if it does not say."""
    try:
        return float(refused.headers.get("Retry-After", "1"))
    except ValueError:
        return 1.0


class BotApi:
    """The bot API over HTTP: the event feed and the actions, each answered with JSON."""

    def __init__(self, server: str, token: str) -> None:
        self.server, self.token = server.rstrip("/"), token
        self.closed = threading.Event()  # `close_feed` was called: `events` ends
        self.lock = threading.Lock()  # over `feed` and `closed`, for `close_feed` from another thread
        self.feed: http.client.HTTPResponse | None = None  # the feed `events` reads now

    def _request(self, path: str, fields: dict[str, str] | None = None) -> urllib.request.Request:
        data = urllib.parse.urlencode(fields).encode() if fields is not None else None
        headers = {"Authorization": f"Bearer {self.token}"}
        return urllib.request.Request(self.server + path, data=data, headers=headers)

    def events(self) -> Iterator[dict[str, Any]]:
        """The feed's events. It is opened again when the server says so (`moved`: the bot's session is
        on another server of a cluster now; `stopping`: a restart), when the connection breaks, or when
        the server cannot open it now (503, or 429: opened too often, then at least its Retry-After):
        at once the first time, then after a pause growing from 1 to 30 s;
        any other end of the feed (an `error` event, a refusal to open it: banned, a replaced token)
        is the last event. `close_feed` ends it without one."""
        pause = 0.0
        while not self.closed.is_set():
            try:
                with urllib.request.urlopen(self._request("/api/bot/stream"), timeout=FEED_TIMEOUT) as feed:
                    if feed.headers.get_content_type() != FEED_TYPE:
                        yield not_a_feed(feed.status, feed.headers.get_content_type())
                        return
                    with self.lock:
                        if self.closed.is_set():
                            return
                        self.feed = feed
                    try:
                        for line in feed:
                            if not line.strip():
                                continue
                            event = json.loads(line)
                            if event["type"] == "error" and event.get("code") in REOPENED_AFTER:
                                log.info("the feed opens again: %s", event["code"])
                                break
                            yield event
                            if event["type"] == "error":
                                return
                            pause = 0.0
                    finally:
                        with self.lock:
                            self.feed = None
            except urllib.error.HTTPError as refused:
                if refused.code < 500 and refused.code != TOO_OFTEN:
                    try:
                        body = json.load(refused)
                    except ValueError:  # another web server's page: --server names no bot API
                        yield not_a_feed(refused.code, refused.headers.get_content_type())
                        return
                    yield {"type": "error", "code": body.get("error"), "message": body.get("message")}
                    return
                pause = max(pause, retry_after(refused))
                log.warning("the feed could not be opened (%s); again in %.0f s", refused.code, pause)
            except (OSError, http.client.HTTPException) as broken:
                if self.closed.is_set():
                    return
                log.warning("the feed broke (%s); again in %.0f s", broken, pause)
            time.sleep(pause)
            pause = min(max(1.0, 2 * pause), LONGEST_PAUSE)

    def close_feed(self) -> None:
        """End `events`, from another thread: the feed's connection is shut down, which wakes its read
        (through a duplicate of its descriptor: urllib's response has no public way to). A feed that
        has just ended by itself (its file closed, its connection gone) needs nothing."""
        with self.lock:
            self.closed.set()
            if self.feed is not None:
                with contextlib.suppress(ValueError, OSError):
                    with socket.fromfd(self.feed.fileno(), socket.AF_INET, socket.SOCK_STREAM) as endpoint:
                        endpoint.shutdown(socket.SHUT_RDWR)

    def post(self, path: str, **fields: str) -> dict[str, Any]:
        """The answer's JSON; no answer from the server (a proxy's error page while a server of a cluster
        restarts, a broken connection) is the error `unanswered`: whether it was done, the feed tells."""
        try:
            with urllib.request.urlopen(self._request(path, fields), timeout=FEED_TIMEOUT) as answer:
                return json.load(answer)
        except urllib.error.HTTPError as refused:
            try:
                return json.load(refused)
            except ValueError:
                return {"error": "unanswered", "message": f"HTTP {refused.code}, not from the server"}
        except (OSError, http.client.HTTPException, ValueError) as broken:
            return {"error": "unanswered", "message": str(broken) or type(broken).__name__}


@dataclass
class Position:
    """One game as the engine sees it, rebuilt from the feed."""

    width: int
    height: int
    colour: int  # the bot's: 1 blue, 2 red
    setup: list[tuple[int, int, int]]  # (x, y, colour)
    moves: list[tuple[int, int, int]] = field(default_factory=list)
    added: float = 0.0  # seconds added per move
    side: int | None = None  # the bot's side at a team table (docs/teams.md); None in a game of two
    over: bool = False
    # the bot's move the server took, until the feed shows it: a `clock` taken meanwhile is older (it
    # waited in the queue while the move was sent; clocks are sent again when they stop or go on)
    played: tuple[int, int] | None = None
    on_move: bool = False  # the last `clock` since the last move says the bot is on move
    seconds_left: float | None = None  # the bot's, by that clock (None: no clock)
    since: int = 0  # the order in which games came on move: the longest waiting is searched first
    # the propositions it agreed to that the server took (a take-back, an end): each changes the game
    # at once, before the feed shows it
    agreed: int = 0

    def key(self) -> tuple[object, ...]:
        """What a search is for: a move found for another position is not played."""
        return self.colour, tuple(self.setup), tuple(self.moves), self.over, self.agreed

    def board(self) -> Board:
        board = Board(self.width, self.height)
        for x, y, colour in self.setup:
            board.place(board.index((x, y)), colour)
        for x, y, colour in self.moves:
            board.play(board.index((x, y)), colour)
        return board

    def take(self, event: dict[str, Any]) -> None:
        dot = (event["x"], event["y"], COLOURS[event["colour"]])
        if event.get("undo"):
            if self.moves and self.moves[-1] == dot:
                self.moves.pop()
        else:
            self.moves.append(dot)
        self.on_move = False  # until a clock after the move says so
        if dot[:2] == self.played:
            self.played = None


def known_rules(game_type: str) -> bool:
    """Whether the AI plays the game type's rules: automatic enclosures (standard), not territory."""
    return game_type[4:5] in ("s", "n")


def position_of(event: dict[str, Any]) -> Position | None:
    """A gameFull event's game, if the bot plays in it with rules the AI knows."""
    colour = COLOURS.get(event.get("colour") or "")
    game_type = event["gameType"]
    if colour is None or not known_rules(game_type):
        return None
    fields = game_type.split(".")
    added = float(fields[6]) if len(fields) > 6 and fields[4][:1] == "a" and fields[6].isdigit() else 0.0
    setup = [(dot["x"], dot["y"], COLOURS[dot["colour"]]) for dot in event["setup"]]
    position = Position(event["width"], event["height"], colour, setup, added=added, side=event.get("side"))
    for move in event["moves"]:
        position.take(move)
    return position


@dataclass
class Found:
    """A search's move (None: no free point), for the game at `table` as it stood: `key`."""

    table: int
    key: tuple[object, ...]
    index: int | None


class AiBot:
    def __init__(self, api: BotApi, level: int, seed: int | None = None, rated: bool = False) -> None:
        """`rated`: accept rated invitations too (of bots; of people where the server has --bots-rated)."""
        self.api, self.level, self.rated = api, level, rated
        self.rng = random.Random(seed)
        self.games: dict[int, Position] = {}
        # what the main thread takes in turn: the feed's events, the searches' moves, and None once the
        # feed's reader has ended
        self.inbox: queue.Queue[dict[str, Any] | Found | None] = queue.Queue()
        self.searching: threading.Thread | None = None  # the one search running
        self.turns = 0  # games that came on move, counted: Position.since
        # the tables of its finished games, the latest last, with the archive number of each once it
        # came (0 until then): a feed opened again says a finished game's again, which counts once
        self.ended: dict[int, int] = {}
        self.finished = 0  # the games it finished and saw archived

    def _ended(self, table: int, game: Position) -> None:
        """The game is over: its moves are not needed any more (a new game at the table comes whole, as
        a gameFull); only the latest ENDED_KEPT finished games are remembered at all."""
        game.over = True
        game.setup, game.moves = [], []
        self.ended.setdefault(table, 0)
        while len(self.ended) > ENDED_KEPT:
            oldest = next(iter(self.ended))
            del self.ended[oldest]
            if (kept := self.games.get(oldest)) is not None and kept.over:  # not a new game at its table
                del self.games[oldest]

    def run(self, games: int = 0, invite: str | None = None, game_type: str = "") -> int:
        """Play until `games` games are archived (0: for ever); the number played."""
        if invite:
            answer = self.api.post(f"/api/bot/invite/{urllib.parse.quote(invite)}", gameType=game_type)
            log.info("invited %s: %s", invite, answer)
        reader = threading.Thread(target=self._read, name="bot-play feed", daemon=True)
        reader.start()
        try:
            while not (games and self.finished >= games):
                item = self.inbox.get()
                if item is None:
                    break
                if isinstance(item, Found):
                    self.found(item)
                    continue
                self.take(item)
                if item["type"] == "error":
                    log.warning("the server ended the feed: %s", item)
                    break
        finally:
            self.api.close_feed()
            reader.join()
            if self.searching is not None:
                self.searching.join()
        return self.finished

    def _read(self) -> None:
        """The feed's reader: every event into the inbox as it comes, whatever the main thread does."""
        try:
            for event in self.api.events():
                self.inbox.put(event)
        finally:
            self.inbox.put(None)

    def take(self, event: dict[str, Any]) -> None:
        kind, table = event["type"], event.get("table")
        game = self.games.get(table) if table is not None else None
        if kind == "invitation":
            self.answer_invitation(event)
        elif kind == "gameFull":
            found = position_of(event)
            if found is not None:
                self.games[table] = found
        elif game is None:
            return
        elif kind == "move":
            game.take(event)
        elif kind == "clock":
            # at a team table its own turn, not a team-mate's
            on_move = COLOURS.get(event["toMove"]) == game.colour and event.get("side") == game.side
            if on_move and not game.on_move:
                self.turns += 1
                game.since = self.turns
            game.on_move, game.seconds_left = on_move, event.get("blue" if game.colour == 1 else "red")
            self.think()
        elif kind == "proposal" and (COLOURS.get(event["by"]), event.get("side")) != (game.colour, game.side):
            self.answer(table, game, event["what"])
        elif kind == "gameEnd":
            self._ended(table, game)
        elif kind == "archived" and self.ended.get(table) != event["number"]:
            self._ended(table, game)
            self.ended[table] = event["number"]
            self.finished += 1

    def answer_invitation(self, event: dict[str, Any]) -> None:
        """Accept what it plays; decline a game it would never move in (not left to the clock), and one
        it may not accept now (at its most games at once: `tooManyGames`): left pending, the inviter
        waited and everyone else's invitations were refused `busy`. Gone meanwhile, or no answer (the
        feed opened again tells it again): nothing."""
        inviter = event["from"]  # no later invitation is answered for this one
        if known_rules(event["gameType"]) and (self.rated or not event.get("rated")):
            answer = self.api.post("/api/bot/invitation/accept", **{"from": inviter})
            while answer.get("error") in TRY_AGAIN:
                time.sleep(1)
                answer = self.api.post("/api/bot/invitation/accept", **{"from": inviter})
            if answer.get("ok") or answer.get("error") in ("noInvitation", "unanswered"):
                return
            log.warning("the invitation of %s could not be accepted: %s", inviter, answer)
        self.api.post("/api/bot/invitation/decline", **{"from": inviter})

    def think(self) -> None:
        """Start a search for the game on move longest, unless one runs: one search at a time, so never
        two for one game."""
        if self.searching is not None:
            return
        waiting = [(game.since, table) for table, game in self.games.items() if self.wants_move(game)]
        if not waiting:
            return
        table = min(waiting)[1]
        game = self.games[table]
        seconds = move_budget(game.seconds_left, game.added, 0, 1)
        found = Found(table, game.key(), None)
        seed = self.rng.randrange(2**32)
        self.searching = threading.Thread(
            target=self._search, args=(found, game.board(), game.colour, seconds, seed), daemon=True
        )
        self.searching.start()

    @staticmethod
    def wants_move(game: Position) -> bool:
        return game.on_move and not game.over and not game.played

    def _search(self, found: Found, board: Board, colour: int, seconds: float, seed: int) -> None:
        """The search's thread: its move into the inbox (none: no free point, the server ends a full
        board's game itself)."""
        try:
            found.index, _ = ai.choose_move(board, colour, self.level, seconds, seed)
        except IllegalMove:
            pass
        finally:
            self.inbox.put(found)

    def found(self, found: Found) -> None:
        """A search's move, played if its game still stands where the search began (as the AI players'
        are, server/hub/computer.py): not after a take-back, the game's end, a new game at its table;
        then the next search."""
        if self.searching is not None:
            self.searching.join()
            self.searching = None
        game = self.games.get(found.table)
        if game is None or not self.wants_move(game) or game.key() != found.key:
            log.info("a move found for a position gone is dropped at table %s", found.table)
        elif found.index is None:
            game.on_move = False  # a full board: nothing to play until a clock says so again
        else:
            self.move(found.table, game, found.index)
        self.think()

    def move(self, table: int, game: Position, index: int) -> None:
        """The move at `index` sent (a quick one instead if the server finds it illegal)."""
        board = game.board()
        answer = self._play(table, game, board, index)
        if answer.get("error") == "illegalMove":  # the board here and the server's differ: a quick move
            log.warning("move refused at table %s: %s", table, answer)
            quick = ai.quick_move(board, game.colour, self.rng.randrange(2**32))
            answer = self._play(table, game, board, quick)
        if not answer.get("ok"):
            log.warning("move refused at table %s: %s", table, answer)

    def _play(self, table: int, game: Position, board: Board, index: int) -> dict[str, Any]:
        """The move's answer, sent again a second later while it is refused TRY_AGAIN."""
        x, y = board.point(index)
        answer = self.api.post(f"/api/bot/game/{table}/move/{x}/{y}")
        while answer.get("error") in TRY_AGAIN:
            time.sleep(1)
            answer = self.api.post(f"/api/bot/game/{table}/move/{x}/{y}")
        if answer.get("ok"):
            game.played = (x, y)
        return answer

    def answer(self, table: int, game: Position, what: str) -> None:
        """As the AI players answer (server/hub/computer.py): take back, cancel and play again; finish by
        score only when not behind."""
        if what == "new":
            self.api.post(f"/api/bot/game/{table}/answer/new/accept")
            return
        board = game.board()
        agrees = ANSWERS.get(what, board.score[game.colour] >= board.score[3 - game.colour])
        answer = self.api.post(f"/api/bot/game/{table}/answer/{what}/{'accept' if agrees else 'decline'}")
        if agrees and answer.get("ok"):
            # a search begun before is for a game gone (a move taken back, the game over), though the
            # feed's events saying so may come after the search's move: played then, it was refused
            # notYourTurn. The next search begins at once, as for a game that did not change (the
            # server refused the answer, or a team's proposition waits for the bot's team-mates): no
            # clock would come to begin it; one for a game that did is dropped in turn.
            game.agreed += 1


def add_parser(add_parser: Callable[..., argparse.ArgumentParser]) -> None:
    """`bot-play`, added to kropki-server's commands (server/cli.py) with `add_parser`."""
    bot_play = add_parser(
        "bot-play",
        help="play as a bot with the server's AI, on any server's bot API (docs/bots.md)",
        description="Play as a bot with the server's AI through a server's bot API; the bot's token is "
        f"read from the environment variable {ENV_TOKEN} (a command line is shown to every user).",
    )
    bot_play.add_argument("--server", default="http://127.0.0.1:8080", help="the server's address")
    bot_play.add_argument("--level", type=int, choices=(1, 2, 3), default=2, help="the AI's level")
    bot_play.add_argument("--games", type=int, default=0, metavar="N", help="stop after N games (0: never)")
    bot_play.add_argument(
        "--rated",
        action="store_true",
        help="accept rated invitations too (from bots; from people if the server runs with --bots-rated)",
    )
    bot_play.add_argument("--invite", metavar="NICK", help="invite this player first")
    bot_play.add_argument(
        "--game-type", default="2020n0.0.a.F.a.300.10._SRAUTP_srautp.", help="the game type of --invite"
    )


def command(args: argparse.Namespace, environ: Mapping[str, str]) -> int:
    """`bot-play`: the AI as a bot until --games are played (for ever by default)."""
    token = environ.get(ENV_TOKEN)
    if not token:
        print(f"kropki-server: error: set {ENV_TOKEN} to the bot's token", file=sys.stderr)
        return 2
    logs.configure("INFO")
    bot = AiBot(BotApi(args.server, token), args.level, rated=args.rated)
    bot.run(args.games, args.invite, args.game_type)
    return 0
