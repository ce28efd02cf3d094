"""A small bot for the kropki server's bot API (docs/bots.md), with Python's standard library only.

It reads its event feed, accepts every invitation it may play (unrated, automatic enclosures) and,
while it has no game, every open seek it may play; it plays the free point touching the most of the
opponent's dots (a one-ply heuristic standing in for an engine), trying the next when the server
refuses one (a point inside a realm).

Give it the token in the environment, never on the command line (`ps` shows that to everyone):

    KROPKI_BOT_TOKEN=... python examples/random_bot.py --server https://kropki.example.org
    KROPKI_BOT_TOKEN=... python examples/random_bot.py --invite "*Ala" --games 1
    KROPKI_BOT_TOKEN=... python examples/random_bot.py --seek --games 1

Replace `choose` with a call to your engine and you have an engine on the server.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from typing import Any

GAME_TYPE = "1010n0.0.a.F.a.120.5._SRAUTP_srautp."  # 10x10, no territory, unrated, 2 min + 5 s
NEIGHBOURS = [(dx, dy) for dx in (-1, 0, 1) for dy in (-1, 0, 1) if dx or dy]
# refusals of a move that was not made and is sent again a second later: over the request limit (a
# player's), or the server cannot store anything now (503: its clocks stand still meanwhile); nothing in
# the feed would call for the move again
TRY_AGAIN = ("tooFast", "storage")
# finished games whose archive numbers are remembered, the latest: a feed opened again says a finished
# game's `archived` again while its table stays (an hour), and a player begins at most 60 games an hour
ENDED_KEPT = 100


class Api:
    """The bot API over HTTP: the event feed, and the actions, each answered with JSON."""

    def __init__(self, server: str, token: str) -> None:
        self.server, self.token = server.rstrip("/"), token

    def _request(self, path: str, fields: dict[str, str] | None = None) -> urllib.request.Request:
        data = urllib.parse.urlencode(fields).encode() if fields is not None else None
        return urllib.request.Request(
            self.server + path, data=data, headers={"Authorization": f"Bearer {self.token}"}
        )

    def events(self) -> Iterator[dict[str, Any]]:
        """The feed's events as they come; an empty line only says the connection is alive. The feed is
        opened again when the server says so (`moved`, `stopping`), when the connection breaks or the
        server cannot open it now (503, or 429 if it was opened too often: then at least its
        Retry-After): at once the first time, then after a pause growing from 1 to 30 s; any
        other end (an `error` event, a refusal: banned, a replaced token) is the last event."""
        pause = 0.0
        while True:
            try:
                with urllib.request.urlopen(self._request("/api/bot/stream"), timeout=60) as feed:
                    if feed.headers.get_content_type() != "application/x-ndjson":
                        yield not_a_feed(feed)  # another web server's page: --server is wrong
                        return
                    for line in feed:
                        if not line.strip():
                            continue
                        event = json.loads(line)
                        if event["type"] == "error" and event.get("code") in ("moved", "stopping"):
                            break  # the session is on another server of a cluster now, or a restart
                        yield event
                        if event["type"] == "error":
                            return
                        pause = 0.0
            except urllib.error.HTTPError as refused:
                if refused.code < 500 and refused.code != 429:  # 429: opened too often, wait and again
                    if refused.headers.get_content_type() != "application/json":
                        yield not_a_feed(refused)
                        return
                    body = json.load(refused)
                    yield {"type": "error", "code": body.get("error"), "message": body.get("message")}
                    return
                wait = refused.headers.get("Retry-After", "")  # seconds (a proxy may send a date)
                pause = max(pause, float(wait) if wait.isdigit() else 1.0)
            except (OSError, http.client.HTTPException) as broken:
                print(f"the feed broke ({broken}); again in {pause:.0f} s", file=sys.stderr)
            time.sleep(pause)
            pause = min(max(1.0, 2 * pause), 30.0)

    def post(self, path: str, **fields: str) -> dict[str, Any]:
        """An action: {"ok": true}, or {"error": code, "message": why}, never an exception. No answer from
        the server (a proxy's error page while a server of a cluster restarts, a broken connection) is
        the error `unanswered`: whether the action was done, the feed tells."""
        try:
            with urllib.request.urlopen(self._request(path, fields), timeout=30) as answer:
                return json.load(answer)
        except urllib.error.HTTPError as refused:
            try:
                return json.load(refused)
            except ValueError:
                return {"error": "unanswered", "message": f"HTTP {refused.code}, not from the server"}
        except (OSError, http.client.HTTPException, ValueError) as broken:
            return {"error": "unanswered", "message": str(broken) or type(broken).__name__}


def not_a_feed(answer: Any) -> dict[str, Any]:
    """The last event when the server's address answers with something else than the bot API."""
    what = f"HTTP {answer.status} ({answer.headers.get_content_type()}) is not the bot API's feed"
    return {"type": "error", "code": "notAFeed", "message": f"{what}: check --server"}


class Game:
    """What the bot knows of one of its games: the board's dots, from the feed's events."""

    def __init__(self, event: dict[str, Any]) -> None:
        self.width, self.height, self.colour = event["width"], event["height"], event["colour"]
        self.side = event.get("side")  # at a team table the bot's side: it moves on its own turn only
        self.dots: dict[tuple[int, int], str] = {}
        self.closed: set[tuple[int, int]] = set()  # free points the server refused: inside a realm
        # the bot's move the server took, until the feed shows it: a `clock` read meanwhile is older (the
        # feed is read between requests; clocks are sent again when they stop or go on)
        self.played: tuple[int, int] | None = None
        for dot in event["setup"] + event["moves"]:
            self.play(dot)

    def play(self, dot: dict[str, Any]) -> None:
        if dot.get("undo"):
            self.dots.pop((dot["x"], dot["y"]), None)
        else:
            self.dots[(dot["x"], dot["y"])] = dot["colour"]
        if (dot["x"], dot["y"]) == self.played:
            self.played = None

    def on_move(self, clock: dict[str, Any]) -> bool:
        mine = clock["toMove"] == self.colour and clock.get("side") == self.side
        return mine and self.played is None

    def free(self) -> list[tuple[int, int]]:
        taken = self.dots.keys() | self.closed
        return [(x, y) for x in range(self.width) for y in range(self.height) if (x, y) not in taken]


def choose(game: Game, rng: random.Random) -> list[tuple[int, int]]:
    """Free points, best first: the most opponent dots around, ties broken at random."""

    def touching(point: tuple[int, int]) -> int:
        x, y = point
        theirs = [game.dots.get((x + dx, y + dy)) for dx, dy in NEIGHBOURS]
        return sum(1 for colour in theirs if colour is not None and colour != game.colour)

    points = game.free()
    rng.shuffle(points)
    return sorted(points, key=touching, reverse=True)


def acceptable(event: dict[str, Any], rated: bool = False) -> bool:
    """Games with automatic enclosures, the rules this bot knows; unrated ones unless `rated`."""
    game_type = event["gameType"]
    return (rated or not event.get("rated")) and game_type[4:5] in ("n", "s")


def answer_invitation(api: Api, event: dict[str, Any], rated: bool = False) -> None:
    """Accept what it plays; decline the rest, and what it may not accept now (at its most games at
    once: `tooManyGames`), which left pending would keep the inviter waiting and everyone else's
    invitations refused `busy`. Gone meanwhile (`noInvitation`), or no answer (the feed tells): nothing."""
    inviter = {"from": event["from"]}  # this invitation's answer, never a later one's
    if acceptable(event, rated):
        answer = api.post("/api/bot/invitation/accept", **inviter)
        while answer.get("error") in TRY_AGAIN:
            time.sleep(1)
            answer = api.post("/api/bot/invitation/accept", **inviter)
        print(f"invitation from {event['from']}: accept", answer)
        if answer.get("ok") or answer.get("error") in ("noInvitation", "unanswered"):
            return
    print(f"invitation from {event['from']}: decline", api.post("/api/bot/invitation/decline", **inviter))


class Memory:
    """What the bot keeps: the board of each game it plays, until the game ends, and the archive number
    of its latest ENDED_KEPT finished games, each counted once."""

    def __init__(self) -> None:
        self.boards: dict[int, Game] = {}
        self.archived: dict[int, int] = {}  # table -> the archive number of its last game
        self.played = 0

    def archive(self, table: int, number: int) -> None:
        if self.archived.get(table) == number:
            return  # said again by a feed opened again
        self.archived.pop(table, None)  # the latest last
        self.archived[table] = number
        self.played += 1
        while len(self.archived) > ENDED_KEPT:
            del self.archived[next(iter(self.archived))]


def play(
    api: Api,
    games: int,
    invite: str | None,
    rng: random.Random,
    seek: bool = False,
    rated: bool = False,
    memory: Memory | None = None,
) -> int:
    """Play until `games` games have ended (0: for ever); the number of games played. `seek`: post a
    seek first, for anyone to accept; `rated`: take rated games too."""
    memory = memory or Memory()
    boards = memory.boards
    if invite:
        print("invite:", api.post(f"/api/bot/invite/{urllib.parse.quote(invite)}", gameType=GAME_TYPE))
    if seek:
        print("seek:", api.post("/api/bot/seek", gameType=GAME_TYPE))
    for event in api.events():
        kind, table = event["type"], event.get("table")
        if kind == "invitation":
            answer_invitation(api, event, rated)
        elif kind == "seek" and acceptable(event, rated) and not boards:
            answer = api.post(f"/api/bot/seek/{event['id']}/accept")  # its own: refused, notEligible
            print(f"seek {event['id']} of {event['from']}:", answer)
        elif kind == "gameFull":
            boards[table] = Game(event)
        elif kind == "move" and table in boards:
            boards[table].play(event)
        elif kind == "clock" and table in boards:
            if boards[table].on_move(event):
                move(api, table, boards[table], rng)
        elif kind == "gameEnd" and table in boards:
            del boards[table]  # not needed any more: a new game at the table comes whole (gameFull)
            print(f"table {table}: {event['result']}")
        elif kind == "archived":
            memory.archive(table, event["number"])
            if games and memory.played >= games:
                return memory.played
        elif kind == "error":
            print("the server ended the feed:", event, file=sys.stderr)
            return memory.played
    return memory.played


def move(api: Api, table: int, game: Game, rng: random.Random) -> None:
    """The best point the server accepts (a point inside a realm is refused: try the next)."""
    for x, y in choose(game, rng):
        answer = api.post(f"/api/bot/game/{table}/move/{x}/{y}")
        while answer.get("error") in TRY_AGAIN:
            time.sleep(1)
            answer = api.post(f"/api/bot/game/{table}/move/{x}/{y}")
        if answer.get("ok"):
            game.played = (x, y)
            return
        if answer.get("error") != "illegalMove":
            print(f"table {table}: move refused: {answer}", file=sys.stderr)
            return
        game.closed.add((x, y))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", default="http://127.0.0.1:8080")
    parser.add_argument("--games", type=int, default=0, help="stop after this many games (0: never)")
    parser.add_argument("--invite", metavar="NICK", help="invite this player to a game first")
    parser.add_argument("--seek", action="store_true", help="post a seek first, for anyone to accept")
    parser.add_argument("--rated", action="store_true", help="take rated games too (bots', or --bots-rated)")
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args(argv)
    token = os.environ.get("KROPKI_BOT_TOKEN")
    if not token:
        print("set KROPKI_BOT_TOKEN to the bot's token", file=sys.stderr)
        return 2
    play(Api(args.server, token), args.games, args.invite, random.Random(args.seed), args.seek, args.rated)
    return 0


if __name__ == "__main__":
    sys.exit(main())
