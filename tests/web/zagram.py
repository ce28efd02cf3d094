"""A test client that speaks the stream the way MultiPoints does.

It numbers its commands, resends every command above the last `k` on each poll, remembers the
last message number `j`, and reads replies into sections by `q<table>`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import quote

from aiohttp.test_utils import TestClient

from server.protocol.codec import encode_client_text


@dataclass
class Reply:
    status: str
    first: int
    last: int
    processed: int
    sections: dict[int, list[str]] = field(default_factory=dict)

    def lines(self, table: int = 0, prefix: str = "") -> list[str]:
        return [line for line in self.sections.get(table, []) if line.startswith(prefix)]


def parse_reply(body: str) -> Reply:
    parts = body.split("/")
    assert parts[0] in ("ok", "sd") and parts[-1] == "end", body
    assert parts[1].startswith("m"), body
    first, last, processed = (int(n) for n in parts[1][1:].split("."))
    reply = Reply(parts[0], first, last, processed)
    current = None
    for part in parts[2:-1]:
        if part.startswith("q"):
            current = int(part[1:])
            reply.sections[current] = []
        else:
            assert current is not None, f"{part!r} before any q section"
            reply.sections[current].append(part)
    return reply


class Zagram:
    def __init__(self, client: TestClient, secret: str, nick: str) -> None:
        self.client = client
        self.secret = secret
        self.nick = nick
        self.seen = 0
        self.acknowledged = 0
        self.commands: list[str] = []
        self.headers: dict[str, str] = {}  # e.g. X-Forwarded-For, behind a trusted proxy

    async def get(self, **params: str) -> str:
        query = "&".join(f"{key}={quote(value, safe='')}" for key, value in params.items())
        response = await self.client.get(f"/a.kropki?{query}", headers=self.headers)
        assert response.status == 200
        assert response.headers["Cache-Control"] == "no-store"
        return await response.text()

    async def login(self, lang: str = "en") -> str:
        return await self.get(co="guestLogin", idGracza=self.secret, opis=self.nick, lang=lang)

    def send(self, kind: str, table: str | int, text: str = "") -> int:
        number = len(self.commands) + 1
        self.commands.append(f"{kind}{number}.{table}.{text}")
        return number

    def say(self, table: str | int, text: str) -> int:
        return self.send("c", table, encode_client_text(text))

    async def poll(
        self, *, b: bool = False, extra: str = "", msg_no: str | None = None, **params: str
    ) -> Reply:
        pending = self.commands[self.acknowledged :]
        commands = "/".join(([extra] if extra else []) + pending) or "x"
        body = await self.get(
            playerId=self.secret,
            co="getBMsg" if b else "getMsg",
            msgNo=msg_no if msg_no is not None else f"{self.seen}",
            msgFromClient=commands,
            **params,
        )
        reply = parse_reply(body)
        self.seen = reply.last
        self.acknowledged = max(self.acknowledged, reply.processed)
        return reply
