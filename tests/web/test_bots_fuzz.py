"""The bot API (docs/bots.md) under seeded random requests, as tests/test_fuzz.py drives /a.kropki: two
bots and a guest play, invite, seek and chat with valid and broken requests of every kind (odd paths,
made-up tokens, bodies that are not JSON, not objects, nested too deep, in unknown charsets, with half
a surrogate pair, over the field's length), and after every request the server still answers as its
documentation says: never a 500, every refusal JSON with a code and a sentence, nothing logged as an
error, and the hub consistent with itself."""

from __future__ import annotations

import json
import logging
import random
import string
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from server.hub.hub import Hub
from server.web.common import HUB_KEY, STORE_KEY
from tests.test_fuzz import (
    check_archived,
    check_hub,
    check_idle,
    lift_request_limits,
    random_text,
    unexpected_errors,
    with_ids,
)
from tests.web.test_bots import FREE_GAME, RATED_GAME
from tests.web.zagram import Zagram

SEEDS = [1, 2]
REQUESTS = 1000
BOTS = ("RoboA", "RoboB")
GAME_TYPES = (FREE_GAME, RATED_GAME, "1010n0.0.a.F.n....", "3932n0.0.s.R.a.60.0.", "", "2020n0.0.a.X.a.1.1.")
PROPOSALS = ("undo", "score", "terr", "drop", "draw", "new", "resign", "", "nope")
ANSWERS = ("accept", "decline", "cancel", "", "maybe")
NUMBERS = ("0", "1", "2", "3", "-1", "007", "99999999999999999999", "1e3", "x", "%00", "٣")
# what may answer a request: 503 only for storage and a cluster's unconfirmed action
STATUSES = {200, 400, 401, 403, 404, 405, 409, 413, 429}


@dataclass(frozen=True)
class Live:
    """A game being played, as the fuzzer aims its moves."""

    on_move: str
    players: tuple[str, ...]
    width: int
    height: int


@dataclass
class BotFuzzer:
    rng: random.Random
    tokens: dict[str, str]
    tables: list[int] = field(default_factory=list)
    live: dict[int, Live] = field(default_factory=dict)  # the games being played
    statuses: Counter[int] = field(default_factory=Counter)
    codes: Counter[str] = field(default_factory=Counter)
    done: Counter[str] = field(default_factory=Counter)  # by route: "account", "game/move"...

    def nick(self) -> str:
        return self.rng.choice([*BOTS, "*Ala", "*Nobody", random_text(self.rng)])

    def number(self, known: list[int]) -> str:
        if known and self.rng.random() < 0.7:
            return str(self.rng.choice(known))
        return self.rng.choice(NUMBERS)

    def look(self, *hubs: Hub) -> None:
        """The tables open now (at any member of a cluster), and the games being played at them."""
        rooms = {
            uid: table.room
            for hub in hubs
            for uid, table in hub.tables.items()
            if uid and table.room is not None
        }
        self.tables = sorted(rooms)
        self.live = {
            uid: Live(
                room.nick_of(room.side_on_move), (room.blue, room.red), room.game.width, room.game.height
            )
            for uid, room in rooms.items()
            if room.game.result is None
        }

    def point(self) -> str:
        """A coordinate of a move, mostly one on a 20x20 board."""
        return self.number(list(range(20)))

    def token(self) -> dict[str, str]:
        roll = self.rng.random()
        if roll < 0.9:
            return {"Authorization": f"Bearer {self.tokens[self.rng.choice(BOTS)]}"}
        if roll < 0.95:
            made_up = "".join(self.rng.choice(string.ascii_letters + "-_") for _ in range(20))
            return {"Authorization": f"Bearer {self.rng.choice([made_up, 'café', ' '])}"}
        return self.rng.choice([{}, {"Authorization": "Basic abc"}, {"Authorization": "Bearer"}])

    def body(self, fields: dict[str, str]) -> dict[str, Any]:
        """Mostly the fields as JSON or a form; sometimes a body no bot should send."""
        roll, rng = self.rng.random(), self.rng
        if roll < 0.6:
            return {"json": fields}
        if roll < 0.75:
            return {"data": fields}
        if roll < 0.8:
            return {"data": json.dumps(fields).replace('"}', '\\udc80"}'), "headers": JSON}
        if roll < 0.85:
            return {"data": "[" * rng.choice([3, 2000]) + "]" * 3, "headers": JSON}
        if roll < 0.9:
            return {"json": {name: "x" * 2_001 for name in fields} or {"text": "x" * 2_001}}
        if roll < 0.95:
            odd = {
                "Content-Type": rng.choice(["application/json; charset=klingon", "text/plain", "multipart/x"])
            }
            return {"data": random_text(rng, 30).encode("utf-8", "surrogatepass"), "headers": odd}
        return {"json": rng.choice([[], "text", 5, None, {"gameType": 5}])}

    def move(self) -> tuple[str, str, dict[str, Any]]:
        """A move at a game being played, mostly by the bot on move, at a point of its board: how games
        go on to their ends, captures and all."""
        table, game = self.rng.choice(sorted(self.live.items()))
        bots = [nick for nick in game.players if nick in self.tokens] or list(BOTS)
        mover = game.on_move if game.on_move in self.tokens and self.rng.random() < 0.85 else None
        token = self.tokens[mover or self.rng.choice(bots)]
        x, y = self.rng.randrange(game.width), self.rng.randrange(game.height)
        return (
            "POST",
            f"/api/bot/game/{table}/move/{x}/{y}",
            {"headers": {"Authorization": f"Bearer {token}"}},
        )

    def request(self) -> tuple[str, str, dict[str, Any]]:
        rng = self.rng
        if self.live and rng.random() < 0.4:
            return self.move()
        table = self.number(self.tables)
        path, fields = rng.choice(
            [
                ("/api/bot/account", {}),
                (f"/api/bot/invite/{self.nick()}", {"gameType": rng.choice(GAME_TYPES)}),
                (f"/api/bot/invitation/{rng.choice(ANSWERS)}", {"from": self.nick()}),
                (f"/api/bot/invitation/{rng.choice(ANSWERS)}", {}),
                ("/api/bot/seek", {"gameType": rng.choice(GAME_TYPES)}),
                (f"/api/bot/seek/{self.number([])}/{rng.choice(['accept', 'cancel', 'x'])}", {}),
                (f"/api/bot/pool/{rng.choice(['blitz', 'rapid', '', 'x', '%2F'])}/join", {}),
                ("/api/bot/pool/leave", {}),
                (f"/api/bot/game/{table}/move/{self.point()}/{self.point()}", {}),
                (f"/api/bot/game/{table}/propose/{rng.choice(PROPOSALS)}", {}),
                (f"/api/bot/game/{table}/answer/{rng.choice(PROPOSALS)}/{rng.choice(ANSWERS)}", {}),
                (f"/api/bot/game/{table}/resign", {}),
                (f"/api/bot/game/{table}/stop", {}),
                (f"/api/bot/game/{table}/chat", {"text": random_text(rng)}),
                ("/api/bot/upgrade", {"nick": self.nick(), "id": random_text(rng, 12)}),
            ]
        )
        method = "GET" if path == "/api/bot/account" else rng.choice(["POST"] * 19 + ["GET"])
        kwargs = self.body(fields) if fields and method == "POST" else {}
        headers = {**kwargs.pop("headers", {}), **self.token()}
        return method, path, {**kwargs, "headers": headers}

    def judge(self, method: str, path: str, status: int, kind: str, text: str) -> None:
        """What the documentation allows as an answer (docs/bots.md, "Refusals")."""
        where = f"{method} {path} -> {status} {text[:200]}"
        self.statuses[status] += 1
        if status in (404, 405) and kind != "application/json":
            return  # aiohttp's answer to a path no route matches, or a method the route does not take
        assert kind == "application/json", where
        body = json.loads(text)
        if status == 200:
            parts = path.split("/")
            self.done["/".join(parts[3:4] + parts[5:6] if parts[3] == "game" else parts[3:4])] += 1
            assert body.get("ok") is True or "nick" in body or "token" in body, where
            return
        assert status in STATUSES or (status == 503 and body["error"] in ("storage", "unconfirmed")), where
        assert isinstance(body.get("error"), str) and isinstance(body.get("message"), str), where
        self.codes[body["error"]] += 1


JSON = {"Content-Type": "application/json"}


async def guest_turn(fuzzer: BotFuzzer, ala: Zagram) -> None:
    """The guest polls (invitations to her are kept, the game's lines read), and sometimes invites a bot,
    accepts what she was invited to, or moves at one of her games where she is on move."""
    rng = fuzzer.rng
    await ala.poll()
    roll = rng.random()
    hers = [uid for uid, game in fuzzer.live.items() if game.on_move == ala.nick]
    if roll < 0.15:
        await ala.get(idGracza=ala.secret, co="zapraszam", whom=rng.choice(BOTS), gameType=FREE_GAME)
    elif roll < 0.3:
        await ala.get(idGracza=ala.secret, co="zaproszenieTak", opisGracza=rng.choice(BOTS))
    elif roll < 0.8 and hers:
        where = "".join(rng.choice("abcdefghij") for _ in range(2))  # on every board
        await ala.get(idGracza=ala.secret, co="graczStawiaKropke", table=str(rng.choice(hers)), where=where)


@pytest.mark.parametrize("seed", SEEDS)
async def test_fuzz_the_bot_api(client: TestClient, caplog: pytest.LogCaptureFixture, seed: int) -> None:
    caplog.set_level(logging.INFO)
    app = client.server.app
    lift_request_limits(app)  # hundreds of requests a second from two bots
    hub = app[HUB_KEY]
    tokens = {nick: await app[STORE_KEY].bots.create(nick) for nick in BOTS}
    fuzzer = BotFuzzer(random.Random(seed), tokens)
    ala = Zagram(client, "ala123", "*Ala")
    assert await ala.login() == ""
    for n in range(REQUESTS):
        if n % 3 == 0:
            await guest_turn(fuzzer, ala)
        method, path, kwargs = fuzzer.request()
        async with client.request(method, path, **kwargs) as response:
            text = await response.text(errors="replace")
            fuzzer.judge(method, path, response.status, response.content_type, text)
        fuzzer.look(hub)
        check_hub(hub, boards=n % 25 == 0)
    check_hub(hub)
    check_idle(hub)
    await hub.persistence.flush()
    archived = await (await client.get("/games.json", params={"limit": "500"})).json()
    for game in archived:  # each game the bots finished reads back and replays to its result
        check_archived(await (await client.get(f"/sgf/{game['number']}")).text())
    logged = unexpected_errors(caplog.records)
    assert not logged, "\n".join(logged)
    assert not with_ids(caplog.records, set(tokens.values()))  # a token is a password as an id is
    assert fuzzer.done["game/move"] > 20 and len(fuzzer.done) >= 8, fuzzer.done  # the bots really played
    assert archived  # and were checked
    assert fuzzer.codes["internal"] == 0, fuzzer.codes


# --- what this fuzzer found (each test failed before its fix) ------------------------------------


@pytest.mark.parametrize("nick", ["Ala\x00", "*Ala", "two  spaces", "x" * 21])
async def test_an_upgrade_of_a_nick_no_account_can_have_is_a_wrong_nick(
    client: TestClient, caplog: pytest.LogCaptureFixture, nick: str
) -> None:
    """On PostgreSQL a NUL in the nick reached the query: `503 internal` and a traceback in the log. A
    nick no account can have is a wrong nick or id, answered without a look in the store."""
    response = await client.post("/api/bot/upgrade", json={"nick": nick, "id": "abcdefghij"})
    assert (response.status, (await response.json())["error"]) == (403, "wrongNickOrId")
    assert not unexpected_errors(caplog.records)
