"""One name space across the members of a cluster (docs/cluster.md, "One name space").

Within one member the roster refuses a nick that is online or looks like one that is; across members,
each member keeps the keys of its people's nicks (`nick_key` and `look_key`, as the roster compares
them) in a Redis set of its own, and a login is admitted only once a script, atomic in Redis, found the
keys in no other live member's set and added them to this member's. The set expires with the member
(renewed at every reconciliation), so a member that dies frees its nicks without anyone cleaning up.
A session's end, or a refused login, frees its nick at once, and a session moving here from another
member holds it before that member lets it go; each reconciliation makes the set exactly the people
online here, so whatever those missed, and a Redis restarted empty, heal by themselves within one
heartbeat.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import asynccontextmanager
from typing import TypeVar

from redis.asyncio import Redis

from server.cluster import calls
from server.cluster.calls import UNREACHABLE, bounded, stop_if_cancelled
from server.cluster.membership import DEFAULT_HEARTBEAT, DEFAULT_TTL, MEMBERS_KEY
from server.logs import Fields
from server.protocol.codec import ProtocolError, look_key, nick_key

log = logging.getLogger(__name__)

T = TypeVar("T")
NICKS_PREFIX = "kropki:nicks:"  # + a member's name: the claim keys of the people online there

# KEYS[1] the live members' names, KEYS[2] this member's set; ARGV: this member's name, the sets'
# prefix, the set's ttl in ms, then the claim keys. Returns the member holding one of the keys, or
# nil once they are this member's. Other members' sets are named from the members' set, which a
# standalone Redis allows (this server does not run on Redis Cluster).
_CLAIM = """
for _, member in ipairs(redis.call('SMEMBERS', KEYS[1])) do
    if member ~= ARGV[1] then
        for i = 4, #ARGV do
            if redis.call('SISMEMBER', ARGV[2] .. member, ARGV[i]) == 1 then
                return member
            end
        end
    end
end
redis.call('SADD', KEYS[2], unpack(ARGV, 4))
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return false
"""


def claim_keys(nick: str) -> set[str]:
    return {"n:" + nick_key(nick), "l:" + look_key(nick)}


class NickClaims:
    """This member's claims: taken at each login, made exactly its people at every heartbeat."""

    def __init__(
        self,
        url: str,
        name: str,
        online: Callable[[], tuple[Iterable[str], Iterable[str]]],
        holder: Callable[[str], str | None],
        *,
        every: float = DEFAULT_HEARTBEAT,
        ttl: float = DEFAULT_TTL,
    ) -> None:
        """`online()`: the nick keys and look keys of everyone online here whose nick must be theirs
        alone (Roster.unique_keys); `holder(nick)`: the nick of whoever here has that nick or a look-alike,
        if it is theirs alone (Roster.unique_holder)."""
        self._url, self._name, self._online, self._holder = url, name, online, holder
        self._every, self._ttl_ms = every, max(1, round(ttl * 1000))
        self._key = NICKS_PREFIX + name
        self._client: Redis | None = None
        self._task: asyncio.Task[None] | None = None
        # One call at a time: a login's claim and a reconciliation that removes a key must reach Redis
        # in the order they were decided in.
        self._lock = asyncio.Lock()
        self._claimed: set[str] | None = None  # what the set holds; None: not known, written whole next
        # Redis's comings and goings (`reconnected`): a call's result is learned only within its epoch
        self._epoch = 0
        # claim keys of logins and moves here under way: kept though not online yet
        self._logging_in: dict[str, int] = {}
        self._changed: set[str] = set()  # nicks of sessions ended or come here, to be settled (nick_changed)
        self._settling: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._client = calls.client(self._url)
        await self._reconcile()
        self._task = asyncio.create_task(self._reconcile_forever(), name="cluster nick claims")

    async def stop(self) -> None:
        """Frees this member's nicks at once (they would expire with the member anyway)."""
        await calls.cancel(self._task, self._settling)
        self._task = self._settling = None
        client, self._client = self._client, None
        await calls.farewell(client, lambda redis: redis.delete(self._key), "nick claims' withdrawal")

    def reconnected(self, connected: bool) -> None:
        """Redis went or came back (possibly empty): the set is written whole at the next turn. A call in
        flight meanwhile may have reached the Redis that went, so what it wrote is not learned."""
        self._epoch += 1
        self._claimed = None

    def _learn(self, epoch: int, removed: set[str], added: set[str]) -> None:
        """A call begun in `epoch` changed the set so, if Redis neither went nor came back since."""
        if self._epoch == epoch and self._claimed is not None:
            self._claimed = (self._claimed - removed) | added

    @asynccontextmanager
    async def claiming(
        self, nick: str, give_up: Callable[[str], Awaitable[T | None]] | None = None
    ) -> AsyncIterator[T | None]:
        """Around a login: refused (`nickInUse`, as the hub refuses a nick online here) if another member
        has the nick online, unless `give_up(member)` lets it go there (a guest come back with a new id:
        server/cluster/sessions.py); what that gave is yielded. Claimed again after any answer of
        `give_up`: a member that holds no session of the nick any more (logged out or timed out since
        its last reconciliation) frees it before answering. The claim stays while the login is under
        way, and after it only if the player is then online here: a refused login frees it before its
        answer, not at the next heartbeat, so that the nick's player is not refused on another member
        meanwhile. An unreachable Redis admits the login (an isolated member serves its own players;
        docs/cluster.md)."""
        keys = claim_keys(nick)
        self._keep(keys)
        admitted = False
        try:
            given = None
            held = await self._claim(keys)
            if held is not None and give_up is not None:
                given = await give_up(held)
                held = await self._claim(keys)
            if held is not None:
                log.info("login refused %s", Fields(nick=nick, held_by=held))
                raise ProtocolError("nickInUse", "This nick is in use.")
            yield given
            admitted = True
        finally:
            self._unkeep(keys)
            if not admitted:
                async with self._lock:
                    await self._settle({nick})

    async def hold(self, nick: str) -> None:
        """A session of the nick is about to move here (server/cluster/sessions.py): its keys are added
        to this member's set before the member serving it lets it go, unchecked (that member holds them
        until then), so that no login there takes the nick while neither member lists the player; kept,
        as a login's, until `let_go`."""
        keys = claim_keys(nick)
        self._keep(keys)
        async with self._lock:
            if self._client is None:  # stopped, perhaps while this call waited for its turn
                return
            epoch = self._epoch
            try:
                async with self._client.pipeline(transaction=True) as pipe:
                    pipe.sadd(self._key, *keys)
                    pipe.pexpire(self._key, self._ttl_ms)
                    await bounded(pipe.execute())
            except UNREACHABLE as error:
                log.debug("nick not held, redis unreachable: %s", error)
                self._claimed = None
                return
            self._learn(epoch, set(), keys)

    async def let_go(self, nick: str) -> None:
        """The move `hold` was for is over: the keys stay only if the player is online here now."""
        self._unkeep(claim_keys(nick))
        async with self._lock:
            await self._settle({nick})

    def _keep(self, keys: set[str]) -> None:
        for key in keys:
            self._logging_in[key] = self._logging_in.get(key, 0) + 1

    def _unkeep(self, keys: set[str]) -> None:
        for key in keys:
            left = self._logging_in.pop(key) - 1
            if left:
                self._logging_in[key] = left

    def nick_changed(self, nick: str) -> None:
        """A session of the nick ended here, or came here from another member (Hub.watch_nicks): its
        claim is made now rather than at the next heartbeat. An ended session's nick is free at once for
        a login on another member that asks nobody to give it up (`/auth.py`, the bots'); a session
        come here holds its nick before the member it left lets it go at its own heartbeat, so that no
        stranger takes it in between. Changes that come together are made in one call."""
        if self._client is None:
            return
        self._changed.add(nick)
        if self._settling is None:
            self._settling = asyncio.create_task(self._settle_changed(), name="cluster nick claims changed")

    async def _settle_changed(self) -> None:
        try:
            while self._changed:
                async with self._lock:
                    nicks, self._changed = self._changed, set()
                    try:
                        await self._settle(nicks)
                    except Exception:  # the next heartbeat writes the whole set
                        self._claimed = None
                        log.exception("nick claims not changed on member %r", self._name)
                stop_if_cancelled()
        finally:
            self._settling = None

    async def _settle(self, nicks: set[str]) -> None:
        """Under the lock: the nicks' keys claimed if someone here holds them, freed if nobody does and no
        login of them is under way. An unknown set (Redis just back) is written whole at the next
        heartbeat anyway."""
        if self._claimed is None or self._client is None:
            return
        held: set[str] = set()
        for nick in nicks:
            holder = self._holder(nick)
            if holder is not None:
                held |= claim_keys(holder)
        added = held - self._claimed
        removed = {key for nick in nicks for key in claim_keys(nick)} & self._claimed
        removed -= held | self._logging_in.keys()
        if not added and not removed:
            return
        epoch = self._epoch
        try:
            async with self._client.pipeline(transaction=True) as pipe:
                if removed:
                    pipe.srem(self._key, *removed)
                if added:
                    pipe.sadd(self._key, *added)
                await bounded(pipe.execute())
        except UNREACHABLE as error:
            log.debug("nick claims not changed, redis unreachable: %s", error)
            self._claimed = None
            return
        self._learn(epoch, removed, added)

    async def _claim(self, keys: set[str]) -> str | None:
        """The member holding one of the keys; None once they are this member's (or Redis unreachable)."""
        async with self._lock:
            if self._client is None:
                return None
            epoch = self._epoch
            try:
                held = await bounded(
                    self._client.eval(
                        _CLAIM, 2, MEMBERS_KEY, self._key, self._name, NICKS_PREFIX, self._ttl_ms, *keys
                    )
                )
            except UNREACHABLE as error:
                log.debug("nick not claimed, redis unreachable: %s", error)
                self._claimed = None
                return None
            if held is not None:
                return str(held)
            self._learn(epoch, set(), keys)
            return None

    async def _reconcile_forever(self) -> None:
        while True:
            await asyncio.sleep(self._every)
            try:
                await self._reconcile()
            except Exception:
                log.exception("nick claims of member %r not reconciled", self._name)
            stop_if_cancelled()

    async def reconcile(self) -> None:
        """At once rather than at the next heartbeat: a nick this member let go is free for another's
        login (server/cluster/sessions.py, give_up)."""
        await self._reconcile()

    async def _reconcile(self) -> None:
        """Makes this member's set exactly its people online and the logins under way, and renews it."""
        async with self._lock:
            if self._client is None:
                return
            nick_keys, look_keys = self._online()
            wanted = {"n:" + key for key in nick_keys} | {"l:" + key for key in look_keys}
            wanted |= self._logging_in.keys()
            claimed, epoch = self._claimed, self._epoch
            try:
                async with self._client.pipeline(transaction=True) as pipe:
                    if claimed is None:
                        pipe.delete(self._key)
                        added, removed = wanted, set()
                    else:
                        added, removed = wanted - claimed, claimed - wanted
                    if removed:
                        pipe.srem(self._key, *removed)
                    if added:
                        pipe.sadd(self._key, *added)
                    pipe.pexpire(self._key, self._ttl_ms)
                    await bounded(pipe.execute())
            except UNREACHABLE as error:
                log.debug("nick claims not reconciled, redis unreachable: %s", error)
                self._claimed = None
                return
            if self._epoch == epoch:
                self._claimed = wanted
