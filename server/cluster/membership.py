"""Membership: each member announces itself in Redis and sees the other members that are alive.

An announcement is a key that expires unless its member's heartbeat renews it, so a member that dies,
even by SIGKILL, drops out once its ttl has passed, and nobody has to clean up after it. A member does
not need Redis to serve: one that cannot reach it is *isolated*, serves its own players only, and its
heartbeat keeps trying until Redis answers again; the caller hears of both changes through `on_change`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import ssl
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import AuthenticationError

from server.cluster import calls
from server.cluster.calls import UNREACHABLE, bounded

log = logging.getLogger(__name__)

KEY_PREFIX = "kropki:member:"  # + a member's name: its announcement (JSON), expiring unless renewed
MEMBERS_KEY = "kropki:members"  # the set of announced names; whoever sees a name's key gone removes it
DEFAULT_HEARTBEAT = 2.0  # seconds between two renewals of an announcement
DEFAULT_TTL = 10.0  # seconds an announcement outlives its last renewal: how long a dead member still counts

# Writes the announcement only while the key is free or already this instance's, so a member never takes
# the name of a live namesake (SET NX would refuse its own key on a renewal). Returns what another
# instance holds; once written, nil if it renewed the key, 0 if the key was not there (a first
# announcement, or a renewal that finds Redis lost its keys: restarted empty, or flushed).
_ANNOUNCE = """
local held = redis.call('GET', KEYS[1])
if held and held ~= ARGV[1] then
    return held
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
if held then
    return false
end
return 0
"""
# Withdraws the announcement only while it is this instance's: a namesake that took over keeps its own.
_WITHDRAW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
    redis.call('DEL', KEYS[1])
    redis.call('SREM', KEYS[2], ARGV[2])
end
return 0
"""


class MembershipError(RuntimeError):
    """A start that must be refused; the message says what to change."""


class Membership:
    """One member's announcement in Redis, renewed by a heartbeat, and its view of the live members."""

    def __init__(
        self,
        url: str,
        name: str,
        info: dict[str, object],
        *,
        heartbeat: float = DEFAULT_HEARTBEAT,
        ttl: float = DEFAULT_TTL,
        clock: Callable[[], float] = time.time,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        """`clock` (wall time) only dates the announcement and the isolation for people to read; how long
        anything lasts is measured on `monotonic`, which a step of the wall clock does not move."""
        if not 0 < heartbeat < ttl:
            raise ValueError(f"heartbeat ({heartbeat} s) must be positive and shorter than ttl ({ttl} s)")
        self._url = url
        self._name = name
        self._heartbeat = heartbeat
        self._ttl = ttl
        self._clock, self._monotonic = clock, monotonic
        self._key = KEY_PREFIX + name
        self._ttl_ms = max(1, round(ttl * 1000))
        # The instance token tells this process's key from a namesake's, e.g. a restarted member's.
        announcement = {**info, "instance": secrets.token_hex(8), "since": _iso(clock())}
        self._announcement = json.dumps(announcement, separators=(",", ":"))
        self._client: Redis | None = None
        self._task: asyncio.Task[None] | None = None
        self._connected = False
        self._isolated_since: float | None = None  # wall time
        self._isolated_at = 0.0  # the same moment on the monotonic clock
        self._cut_off_by = ""  # why Redis does not answer, in a few fixed words (see _cause)
        self._displaced = False
        self._members: tuple[str, ...] = ()
        self._judging_from: float | None = None  # monotonic: until then nobody is told dead (see judged)
        self.on_change: Callable[[bool], None] | None = None
        self.on_members: Callable[[tuple[str, ...]], None] | None = None  # the live members changed

    @property
    def name(self) -> str:
        return self._name

    @property
    def connected(self) -> bool:
        return self._connected

    @property
    def isolated_since(self) -> float | None:
        return self._isolated_since

    @property
    def members(self) -> tuple[str, ...]:
        return self._members

    @property
    def judged_members(self) -> tuple[str, ...] | None:
        """The live members, for telling the dead from the unheard (taking a member's tables and
        sessions): None while Redis is unreachable, and for one ttl after it answers again or is found
        restarted empty, when a member missing may only not have announced itself again yet."""
        if not self._connected or self._judging_from is not None:
            return None
        return self._members

    def status(self) -> dict[str, object]:
        """What a readiness probe reports: isolation is when Redis went away, so it can be alerted on."""
        if self._connected:
            return {"member": self._name, "redis": "connected", "members": list(self._members)}
        since = None if self._isolated_since is None else _iso(self._isolated_since)  # None before start
        cause = self._cut_off_by
        return {"member": self._name, "redis": "unreachable", "isolated_since": since, "cause": cause}

    async def start(self) -> None:
        """Claims the name, then beats; an unreachable Redis only isolates the member, so it still serves.

        A namesake's key is waited out, as a member that died leaves it behind for up to ttl; one still
        renewed after that belongs to a live member, and this start is refused."""
        client = calls.client(self._url)
        self._client = client
        try:
            await self._claim(client)
            await self._beat(client)
        except UNREACHABLE as error:
            self._isolate(error)
        except BaseException:
            self._client = None
            await client.aclose()
            raise
        else:
            self._connected = True
            self._notify_members()  # judged from now on (judged_members): the first view was not
        self._task = asyncio.create_task(self._beat_forever(client), name=f"cluster heartbeat {self._name}")

    async def stop(self) -> None:
        """Withdraws the announcement at once, so the other members need not wait for its ttl."""
        await calls.cancel(self._task)
        self._task = None
        client, self._client = self._client, None
        await calls.farewell(
            client,
            lambda redis: redis.eval(_WITHDRAW, 2, self._key, MEMBERS_KEY, self._announcement, self._name),
            f"withdrawal of member {self._name!r}",
        )

    async def _claim(self, client: Redis) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._ttl + 1
        held = _held(await bounded(self._announce(client)))
        if held is not None:
            log.info("member name %r is held (%s); waiting for it to expire", self._name, _holder(held))
        while held is not None:
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise MembershipError(
                    f"member name {self._name!r} is in use by a live member ({_holder(held)}): "
                    "stop that member or give this one another name"
                )
            await asyncio.sleep(min(self._heartbeat, remaining))
            held = _held(await bounded(self._announce(client)))

    def _announce(self, client: Redis) -> Any:
        """Writes the announcement (see _ANNOUNCE); on a pipeline it is queued, else awaitable."""
        return client.eval(_ANNOUNCE, 1, self._key, self._announcement, self._ttl_ms)

    async def _beat(self, client: Redis) -> None:
        """Renews the announcement and reads which members are alive, sweeping out the names that died."""
        async with client.pipeline(transaction=False) as pipe:
            self._announce(pipe)
            pipe.sadd(MEMBERS_KEY, self._name)
            pipe.smembers(MEMBERS_KEY)
            announced, _, names = await bounded(pipe.execute())
        held = _held(announced)
        if announced == 0 and self._judging_from is None and self._isolated_since is None:
            log.warning(
                "redis lost the announcements (restarted empty, or flushed): member %r announced again; "
                "members missing are not taken for dead for %.0f s",
                self._name,
                self._ttl,
            )
            self._judge_later()
        if held is not None and not self._displaced:
            log.error(
                "member name %r is held by another instance (%s): not announced", self._name, _holder(held)
            )
        self._displaced = held is not None
        names = sorted(names)
        announcements = await bounded(client.mget([KEY_PREFIX + name for name in names]))
        gone = [name for name, value in zip(names, announcements, strict=True) if value is None]
        if gone:
            # Should this race a member's restart, that member adds its name again at its next beat.
            await bounded(client.srem(MEMBERS_KEY, *gone))
        self._see(tuple(name for name in names if name not in gone))
        if self._judging_from is not None and self._monotonic() >= self._judging_from:
            self._judging_from = None
            self._notify_members()  # the members missing now are dead: their tables can be looked at

    def _judge_later(self) -> None:
        self._judging_from = self._monotonic() + self._ttl

    async def _beat_forever(self, client: Redis) -> None:
        while True:
            await asyncio.sleep(self._heartbeat)
            try:
                await self._beat(client)
            except UNREACHABLE as error:
                self._isolate(error)
            except Exception:
                log.exception("cluster heartbeat of member %r failed", self._name)
            else:
                self._reconnect()
            calls.stop_if_cancelled()

    def _isolate(self, error: BaseException) -> None:
        if self._isolated_since is not None:
            return
        notify = self._connected  # a start that finds Redis gone is no change: `connected` was never True
        self._connected = False
        self._isolated_since, self._isolated_at = self._clock(), self._monotonic()
        self._cut_off_by, hint = _cause(error)
        log.warning(
            "redis unreachable: serving this member's players only until it answers (%s)%s",
            _reason(error),
            hint,
        )
        if notify:  # before the view shrinks to this member: the others are cut off, not dead
            self._notify(False)
        self._see((self._name,))

    def _reconnect(self) -> None:
        if self._isolated_since is None:
            return
        lasted = self._monotonic() - self._isolated_at
        self._connected = True
        self._isolated_since = None
        log.warning("redis back after %.1f s: member %r announced again", lasted, self._name)
        self._judge_later()
        self._notify(True)

    def _see(self, members: tuple[str, ...]) -> None:
        if members == self._members:
            return
        self._members = members
        self._notify_members()

    def _notify_members(self) -> None:
        if self.on_members is not None:
            try:
                self.on_members(self._members)
            except Exception:
                log.exception("on_members of member %r failed", self._name)

    def _notify(self, connected: bool) -> None:
        if self.on_change is None:
            return
        try:
            self.on_change(connected)
        except Exception:
            log.exception("on_change(%s) of member %r failed", connected, self._name)


def _held(announced: Any) -> str | None:
    """What another instance holds, from _ANNOUNCE's answer."""
    return announced if isinstance(announced, str) else None


def _holder(held: str) -> str:
    """Who holds a name, for an operator to find that process."""
    try:
        data = json.loads(held)
    except ValueError:
        data = None
    if not isinstance(data, dict):
        return f"key holds {held[:80]!r}"
    return ", ".join(f"{field} {data.get(field, '?')}" for field in ("host", "pid", "since"))


def _cause(error: BaseException) -> tuple[str, str]:
    """What cuts this member off, for /readyz, and what to do about it, for the log: a Redis that
    refuses the URL's password or whose certificate is not trusted never answers by itself."""
    if isinstance(error, AuthenticationError):
        return "credentials refused", (
            ": Redis refused the credentials: check the password (and user) in --redis-url, "
            "redis://:PASSWORD@HOST:6379/0 (docs/cluster.md)"
        )
    if isinstance(error.__context__, ssl.SSLCertVerificationError):
        return "certificate not trusted", (
            ": Redis's TLS certificate is not trusted: name the authority that signed it with "
            "?ssl_ca_certs=PATH in the rediss:// URL (docs/cluster.md)"
        )
    return "no answer", ""


def _reason(error: BaseException) -> str:
    return str(error) or type(error).__name__


def _iso(wall: float) -> str:
    return datetime.fromtimestamp(wall, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
