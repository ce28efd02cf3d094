"""Seeks and quick-pairing pools on the wire (docs/protocol.md, "Seeks and quick pairing"): the `k` and
`j` commands read into values, the `ka`, `kd` and `w` lines the server writes, and the `ja` and `jd` lines
the members of a cluster share of their pools' waiters.

Each line starts with a letter that no known client has a branch for: MultiPoints (ServerZagram.java's
handleMessage reads `b`, `ca`/`cr`, `d`, `f`, `ga`/`gr`/`gd`, `h`, `i`, `m`, `pa`/`pr`/`pd`, `q`,
`sa`/`sr`, `u.undo`, `vg`/`vr`/`vs`) and roboCup (`m`, `ca`, `x`, `d`, `i`) skip them. An old client
reads a seek as an invitation instead, one at a time (`seek_offered`, server/hub/offers.py). The game type
is always a line's last field: it may hold dots.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from server.protocol.codec import ProtocolError, parse_number

SEEK_ADDED = "ka"  # `ka<number>.<nick>.<lowest>.<highest>.<gameType>`: a seek everyone in the lobby sees
SEEK_GONE = "kd"  # `kd<number>`: it was accepted, cancelled, or its player left or began another game
POOL = "w"  # `w<pool>.<seconds waited>.<rating gap allowed>.<players waiting>`: to a waiting player alone
# Between the members of a cluster only, never to a client (docs/cluster.md, "Seeks and pools"):
POOL_WAITER = "ja"  # `ja<nick>.<pool>.<rating>.<joined>.<b: a bot>`: waits in a pool (no rating: a guest)
POOL_LEFT = "jd"  # `jd<nick>`: waits no more (paired, left the pool, or gone)
MOST_RATING = 9999  # the highest rating a seek's range may name
_JOINED_RE = re.compile(r"[0-9]{1,12}\.[0-9]{3}")  # a `ja` line's wall time, to the millisecond


@dataclass(frozen=True)
class RatingRange:
    """The ratings a seek admits; None on a side is no limit there. A player with no rating (a guest)
    is admitted only by a range with no limit on either side."""

    lowest: int | None = None
    highest: int | None = None

    def admits(self, rating: int | None) -> bool:
        if self.lowest is None and self.highest is None:
            return True
        if rating is None:
            return False
        return (self.lowest is None or rating >= self.lowest) and (
            self.highest is None or rating <= self.highest
        )

    def fields(self) -> str:
        """`<lowest>.<highest>`, a side without a limit empty."""
        return f"{'' if self.lowest is None else self.lowest}.{'' if self.highest is None else self.highest}"


def parse_range(lowest: str, highest: str) -> RatingRange:
    """Two ratings 0..MOST_RATING in ASCII digits, either empty, the lowest not above the highest."""
    bounds = []
    for text in (lowest, highest):
        number = parse_number(text) if text else None
        if text and (number is None or number > MOST_RATING):
            raise ProtocolError(
                "badRange", f"A rating range is two numbers from 0 to {MOST_RATING}, or empty."
            )
        bounds.append(number)
    low, high = bounds
    if low is not None and high is not None and low > high:
        raise ProtocolError("badRange", "The lowest rating of the range is above its highest.")
    return RatingRange(low, high)


@dataclass(frozen=True)
class PostSeek:
    game_type: str  # as the client sent it; the hub parses it
    rating_range: RatingRange


@dataclass(frozen=True)
class AcceptSeek:
    number: int


@dataclass(frozen=True)
class CancelSeek:
    number: int


SeekCommand = PostSeek | AcceptSeek | CancelSeek


def parse_seek_command(text: str) -> SeekCommand:
    """The text of a `k` command (after `k<n>.0.`): `s.<lowest>.<highest>.<gameType>` posts a seek,
    `a.<number>` accepts one, `c.<number>` cancels one's own."""
    what, _, rest = text.partition(".")
    if what == "s":
        fields = rest.split(".", 2)
        if len(fields) == 3 and fields[2]:
            return PostSeek(fields[2], parse_range(fields[0], fields[1]))
    elif what in ("a", "c"):
        number = parse_number(rest)
        if number is not None:
            return AcceptSeek(number) if what == "a" else CancelSeek(number)
    raise ProtocolError("badCommand", "k takes s.LOWEST.HIGHEST.GAMETYPE, a.NUMBER or c.NUMBER.")


def seek_number(text: str) -> int:
    """A seek's number as an endpoint's parameter names it."""
    number = parse_number(text)
    if number is None:
        raise ProtocolError("noSuchSeek", "There is no such seek.")
    return number


def seek_added(number: int, nick: str, rating_range: RatingRange, game_type: str) -> str:
    """`game_type` already in the wire's form (events.game_type_text)."""
    return f"{SEEK_ADDED}{number}.{nick}.{rating_range.fields()}.{game_type}"


def seek_gone(number: int) -> str:
    return f"{SEEK_GONE}{number}"


@dataclass(frozen=True)
class SeekAdded:
    """A `ka` line read back: another member's seek, which a member of a cluster lists as its own
    readers' (docs/cluster.md, "Seeks and pools")."""

    number: int
    nick: str
    rating_range: RatingRange
    game_type: str


def parse_seek_added(line: str) -> SeekAdded | None:
    """`ka<number>.<nick>.<lowest>.<highest>.<gameType>`; None for any other line."""
    if not line.startswith(SEEK_ADDED):
        return None
    fields = line[len(SEEK_ADDED) :].split(".", 4)
    number = parse_number(fields[0])
    if len(fields) < 5 or number is None or not fields[1] or not fields[4]:
        return None
    try:
        rating_range = parse_range(fields[2], fields[3])
    except ProtocolError:
        return None
    return SeekAdded(number, fields[1], rating_range, fields[4])


def reads_seeks(query: Mapping[str, str]) -> bool:
    """`seeks=1` on a login: the client reads seeks itself (`ka`/`kd`), so none is offered to it as an
    invitation. Any other value is as if it were absent: zagram's own clients send no such parameter."""
    return query.get("seeks") == "1"


def seek_offered(nick: str, game_type: str) -> str:
    """A seek as an invitation to the reader (`vg<inviter>.<gameType>`), for a client that reads no `ka`."""
    return f"vg{nick}.{game_type}"


def pool_waiting(pool: str, waited: int, gap: int, waiting: int) -> str:
    return f"{POOL}{pool}.{waited}.{gap}.{waiting}"


@dataclass(frozen=True)
class PoolWaiter:
    """A `ja` line read back: a player of another member waiting in a pool, whom a member pairs its own
    waiters with (server/hub/pools.py)."""

    nick: str
    pool: str
    rating: int | None  # None: a guest
    joined: float  # wall time, seconds: the order of every member's waiters
    bot: bool


def pool_waiter(waiter: PoolWaiter) -> str:
    rating = "" if waiter.rating is None else waiter.rating
    bot = "b" if waiter.bot else ""
    return f"{POOL_WAITER}{waiter.nick}.{waiter.pool}.{rating}.{waiter.joined:.3f}.{bot}"


def parse_pool_waiter(line: str) -> PoolWaiter | None:
    """None for any other line, or one this member cannot read."""
    if not line.startswith(POOL_WAITER):
        return None
    fields = line[len(POOL_WAITER) :].split(".")
    if len(fields) != 6 or not fields[0] or not fields[1] or fields[5] not in ("", "b"):
        return None
    rating = parse_number(fields[2]) if fields[2] else None
    joined = f"{fields[3]}.{fields[4]}"
    if (fields[2] and rating is None) or not _JOINED_RE.fullmatch(joined):
        return None
    return PoolWaiter(fields[0], fields[1], rating, float(joined), fields[5] == "b")


def pool_left(nick: str) -> str:
    return f"{POOL_LEFT}{nick}"
