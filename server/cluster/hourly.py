"""The hourly counts (server/hub/hourly.py) across the members of a cluster (docs/cluster.md, "Hourly
counts"): every thing a member counts (a game begun, an analysis table opened...) is added to a sorted
set of its count in Redis, scored by its wall time, and published on one channel, sealed as every
message between members (server/cluster/signing.py). Each member takes the others' things into its own
counts, so that its checks stay synchronous and count the whole cluster's last hour, as soon as the
message has come (a millisecond or so on one network; benchmarks/hourly.py).

A set keeps the last hour: each write trims what is older and keeps at most KEPT things (the newest),
and the set expires an hour after its last write. A member reads the sets when it starts and every time
it subscribes again (Redis came back, possibly restarted empty), after writing back everything it holds,
so that a restarted member knows the hour and the sets heal after a Redis restart. Every thing has an
id (its member's instance and a number) by which each member takes it once. While Redis cannot be
reached a member counts what is done at its own tables only, and what it counted meanwhile is written
and published once Redis answers.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import secrets
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from redis.asyncio import Redis
from redis.asyncio.client import PubSub

from server.cluster import calls
from server.cluster.calls import UNREACHABLE, bounded, stop_if_cancelled
from server.cluster.signing import Opener, Seal
from server.hub.hourly import HOUR, Key

log = logging.getLogger(__name__)

CHANNEL = "kropki:hourly"
KEY_PREFIX = "kropki:hourly:"  # + a count's name (Counted.name): its sorted set
# Things kept in one count's set at most, the newest: Redis's memory stays bounded (about 20 MB a count
# at 200 bytes a thing: docs/cluster.md, "Hourly counts") whatever is done; past it (28 games begun a
# second across the cluster for an hour) a member starting learns only the newest
KEPT = 100_000
PAGE = 5_000  # things written, read or published in one call
RETRY_SECONDS = 1.0  # between two attempts to write what Redis did not take
_compact = json.JSONEncoder(separators=(",", ":")).encode  # made once: json.dumps makes one a call
LONGEST_VALUE = 200  # characters of a key's value read from Redis (a nick key, an address, a network)


class SharedCount(Protocol):
    """What the link needs of one hourly count (server/hub/hourly.py, Hourly)."""

    shared: Callable[[tuple[Key, ...]], None] | None

    def take(self, keys: Iterable[Key], age: float) -> None: ...


@dataclass(frozen=True, slots=True)
class Thing:
    """One thing counted, as Redis keeps it: `entry` is the member of its count's set."""

    count: str
    when: float  # wall time
    entry: str  # JSON [id, [[kind, value], ...]]
    own: bool = False  # counted by this process


class HourlyLink:
    """This member's side of the shared counts: its things out, the others' in."""

    def __init__(
        self,
        url: str,
        name: str,
        counts: Mapping[str, SharedCount],
        secret_keys: Sequence[str],
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """`counts`: by name (Limits.hourly); `secret_keys`: the cluster's (the first signs)."""
        self._url, self._counts, self._clock = url, counts, clock
        self._opener = Opener(name, secret_keys, clock=clock)
        self._seal = Seal(name, secret_keys[0], clock=clock)
        self._instance = secrets.token_hex(6)  # the ids of this process's things
        self._made = 0
        # by id: the last hour's things, this member's and the others', the oldest learnt first (an
        # OrderedDict: a dict's walk from its start steps over the holes its first keys left)
        self._known: OrderedDict[str, Thing] = OrderedDict()
        self._unsent: list[Thing] = []  # this member's, not yet in Redis
        self._senders: set[str] = set()  # members heard from
        self._wake = asyncio.Event()
        self._resubscribe = asyncio.Event()
        self._client: Redis | None = None
        self._tasks: list[asyncio.Task[None]] = []

    @property
    def dropped(self) -> Mapping[str, int]:
        """Messages heard and not taken, by reason (server/cluster/signing.py), for /metrics."""
        return self._opener.dropped

    async def start(self) -> None:
        """Reads the last hour before the member serves, so that a restarted member refuses at once what
        it refused before; an unreachable Redis is read once it answers."""
        self._client = client = calls.client(self._url, socket_timeout=None)
        for name, count in self._counts.items():
            count.shared = functools.partial(self._counted, name)
        try:
            await self._read(client)
        except UNREACHABLE as error:
            log.info(
                "hourly counts not read: %s; read once Redis answers", str(error) or type(error).__name__
            )
        self._tasks = [
            asyncio.create_task(self._send_forever(client), name="cluster hourly counts out"),
            asyncio.create_task(self._listen_forever(client), name="cluster hourly counts in"),
        ]

    async def stop(self) -> None:
        """What was counted here and not sent yet is written in one last call."""
        for count in self._counts.values():
            count.shared = None
        await calls.cancel(*self._tasks)
        self._tasks = []
        self._opener.close()
        client, self._client = self._client, None
        unsent = self._unsent[-PAGE:]
        await calls.farewell(client, lambda redis: self._write(redis, unsent, publish=True), "hourly counts")

    def reconnected(self, connected: bool) -> None:
        """Redis came back (possibly restarted empty): subscribed again, the sets written back and read."""
        if connected:
            self._resubscribe.set()

    def members_changed(self, members: tuple[str, ...]) -> None:
        """A member not seen alive is heard again whatever its clock when it restarts (Opener.lapsed)."""
        for sender in self._senders - set(members):
            self._opener.lapsed(sender)

    # --- out ----------------------------------------------------------------------------------

    def _counted(self, count: str, keys: tuple[Key, ...]) -> None:
        """The hub counted a thing here (Hourly.shared)."""
        self._made += 1
        thing_id = f"{self._instance}.{self._made:x}"
        thing = Thing(count, self._clock(), _compact([thing_id, keys]), own=True)
        self._remember(thing_id, thing)
        self._unsent.append(thing)
        self._wake.set()

    async def _send_forever(self, client: Redis) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            things, self._unsent = self._unsent[:PAGE], self._unsent[PAGE:]
            try:
                await bounded(self._write(client, things, publish=True))
            except UNREACHABLE as error:  # kept, and tried again after a pause (not a busy loop)
                log.debug("hourly counts not sent: %s", error)
                since = self._clock() - HOUR
                self._unsent[:0] = [thing for thing in things if thing.when > since]
                asyncio.get_running_loop().call_later(RETRY_SECONDS, self._wake.set)
            else:
                if self._unsent:
                    self._wake.set()
            stop_if_cancelled()

    def _write(self, client: Redis, things: list[Thing], *, publish: bool = False) -> Awaitable[Any]:
        """One call: `things` added to their sets, each set trimmed to the hour and to KEPT, and, when
        `publish`, published after (whoever subscribes after the publishing finds them in the sets)."""
        pipe = client.pipeline(transaction=False)
        since = self._clock() - HOUR
        by_count: dict[str, dict[str, float]] = {}
        for thing in things:
            by_count.setdefault(thing.count, {})[thing.entry] = thing.when
        for count, entries in by_count.items():
            key = KEY_PREFIX + count
            pipe.zadd(key, entries)
            pipe.zremrangebyscore(key, "-inf", since)
            pipe.zremrangebyrank(key, 0, -KEPT - 1)
            pipe.expire(key, int(HOUR))
        if publish and things:
            payload = _compact({"t": [[thing.count, thing.when, thing.entry] for thing in things]})
            pipe.publish(CHANNEL, self._seal.seal(CHANNEL, payload))
        return pipe.execute()

    # --- in -----------------------------------------------------------------------------------

    async def _listen_forever(self, client: Redis) -> None:
        async def subscribed(pubsub: PubSub) -> None:
            self._opener.listening()
            await calls.subscribed(pubsub, CHANNEL)
            self._resubscribe.clear()
            await self._write_back(client)
            await self._read(client)  # after subscribing: what is published later is heard
            await self._listen(pubsub)

        await calls.subscribed_for_ever(client, subscribed, "hourly counts' channel", RETRY_SECONDS)

    async def _listen(self, pubsub: PubSub) -> None:
        while not self._resubscribe.is_set():
            message = await pubsub.get_message(timeout=RETRY_SECONDS)
            if message is None or message.get("type") != "message":
                continue
            opened = self._opener.open(message["channel"], message["data"])
            if opened is None:  # this member's own, or dropped (and counted)
                continue
            self._senders.add(opened.sender)
            try:
                for count, when, entry in opened.payload["t"]:
                    self._take(count, entry, float(when))
            except (KeyError, TypeError, ValueError):  # sealed by a member, but not of this version
                log.warning("hourly counts of member %r not understood", opened.sender)

    async def _write_back(self, client: Redis) -> None:
        """Everything this member holds of the last hour, into the sets (a Redis restarted empty lost
        them; written again, a thing is still one entry), and its own published again: a member that
        subscribed before hears them, one that subscribes after reads them."""
        self._forget_old()
        for publish in (False, True):
            things = [thing for thing in self._known.values() if thing.own is publish]
            for start in range(0, len(things), PAGE):
                await bounded(self._write(client, things[start : start + PAGE], publish=publish))

    async def _read(self, client: Redis) -> None:
        """The last hour's things of every count in Redis: those not known here yet are taken."""
        for count in self._counts:
            low = f"({self._clock() - HOUR}"
            while True:
                page = await bounded(
                    client.zrange(
                        KEY_PREFIX + count, low, "+inf", byscore=True, offset=0, num=PAGE, withscores=True
                    )
                )
                for entry, when in page:
                    self._take(count, entry, when)
                if len(page) < PAGE or str(page[-1][1]) == low:
                    break
                low = str(page[-1][1])  # the last read again: taken once, by its id

    def _take(self, count: str, entry: str, when: float) -> None:
        """Another member's thing (or this member's, read back: known already), taken once."""
        shared = self._counts.get(count)
        parsed = _parsed(entry)
        if shared is None or parsed is None or parsed[0] in self._known:
            return
        age = max(0.0, self._clock() - when)  # a sender's clock a little ahead: done just now
        if age < HOUR:
            self._remember(parsed[0], Thing(count, when, entry))
            shared.take(parsed[1], age)

    def _remember(self, thing_id: str, thing: Thing) -> None:
        self._known[thing_id] = thing
        self._forget_old()

    def _forget_old(self) -> None:
        """The things an hour old go, oldest first, in the order they were learnt (roughly their time:
        what is read from Redis at a start may be older than what was done meanwhile, and goes later)."""
        since = self._clock() - HOUR
        while self._known:
            first, thing = next(iter(self._known.items()))
            if thing.when > since:
                return
            del self._known[first]


def _parsed(entry: str) -> tuple[str, list[Key]] | None:
    """An entry's id and keys, or None for what no member wrote (anyone who can reach Redis can write)."""
    try:
        thing_id, keys = json.loads(entry)
        parsed = [(kind, value) for kind, value in keys]
    except (TypeError, ValueError):
        return None
    if not isinstance(thing_id, str) or not all(
        isinstance(kind, str) and isinstance(value, str) and len(value) <= LONGEST_VALUE
        for kind, value in parsed
    ):
        return None
    return thing_id, parsed
