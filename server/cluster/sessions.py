"""Sessions that move between members (docs/cluster.md, "Routing").

nginx sends each player's requests to one member by a hash of the id; when members come or go, some
players' requests reach another member than the one serving them. That member brings the session
over: it asks the member serving it (if alive) to write the session as it stands and let it go, then
takes it from the store as after a restart. A session of a member that died is taken at once, once
the store shows that member's lock free (server/store/moving.py): one member serves a session at a
time. The player's client sees what it sees after a restart: the whole state of the lobby and of its
tables, and the same k; its request waits meanwhile rather than be answered `sd`.

A guest whose client started again with a new id (MultiPoints draws one at every start) and whose login
reaches another member than its old session's asks that member to end the old session for it, as one
member does (docs/protocol.md, "A guest who comes back"; `give_up`).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from asyncio import Future
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Literal, Protocol, TypeVar

from server.hub.limits import STORAGE_REFUSED
from server.hub.persistence import Account, SavedSession
from server.hub.saved import SESSION_JOURNAL
from server.hub.sessions import Carried
from server.logs import Fields
from server.protocol.codec import ProtocolError
from server.store.moving import HELD, TakenSession
from server.store.outage import unavailable

log = logging.getLogger(__name__)

K = TypeVar("K")  # what a question's answer is looked up by: an id's HMAC, a ticket
A = TypeVar("A")  # the answer

HAND_OVER_SECONDS = 3.0  # how long the member serving a session has to let it go
# How long a request waits for its session to come here: past a dead member's announcement (10 s) and
# a restarting member's start, within nginx's proxy_read_timeout (60 s) with a long poll's 30 s after it.
BRING_AT_MOST = 25.0
BRING_AGAIN_AFTER = 0.5
# What a member says to another about sessions (server/cluster/lobby.py hands them here).
MESSAGES = frozenset({"hand_over", "handed_over", "give_up", "given_up"})


class NickHolds(Protocol):
    """What the mover needs of this member's nick claims (NickClaims implements it)."""

    async def reconcile(self) -> None: ...
    async def hold(self, nick: str) -> None: ...
    async def let_go(self, nick: str) -> None: ...


class Movable(Protocol):
    """What the mover needs of the hub (Hub implements it)."""

    def knows(self, secret: str) -> bool: ...
    def hand_over(self, id_hmac: str) -> bool: ...
    def give_up(self, nick: str, network: str) -> Carried | None: ...
    def take_over(self, saved: SavedSession, account: Account | None) -> None: ...
    def writes(self) -> int: ...
    async def settled(self, since: int) -> bool: ...


class SessionMover:
    def __init__(
        self,
        name: str,
        hub: Movable,
        id_hmac: Callable[[str], str],
        session_of: Callable[[str], Any],
        take_session: Callable[..., Awaitable[TakenSession | Literal["held"] | None]],
        alive: Callable[[], tuple[str, ...] | None],
        nicks: NickHolds,
    ) -> None:
        """`session_of(id_hmac)`: the store's (member, session, account) or None; `take_session`:
        server/store/moving.py's; `alive()`: the live members' names as membership last saw them, None
        while Redis is unreachable or just back (nothing moves then: this member cannot tell a member
        that died from one it cannot hear); `nicks`: this member's nick claims."""
        self._name, self._hub, self._id_hmac = name, hub, id_hmac
        self._session_of, self._take_session, self._alive = session_of, take_session, alive
        self._nicks = nicks
        self._tickets = itertools.count(1)
        self._giving_up: dict[int, asyncio.Future[Carried | None]] = {}  # ticket -> the holder's answer
        self.send: Callable[[str, dict[str, Any]], None] | None = None  # the link's, once it runs
        self._bringing: dict[str, asyncio.Future[None]] = {}  # id_hmac -> the bringing under way
        self._asked: dict[str, asyncio.Future[bool]] = {}  # id_hmac -> the owner's answer (False: gone)
        self._tasks: set[asyncio.Task[None]] = set()

    async def bring(self, secret: str, network: str = "") -> None:
        """Before a request with an id this member does not serve: the session comes here if another
        member has it, unless it is a registered player's that `network` may not use (server/web/ids.py;
        "": a login, which may). One bringing per session at a time; a request that finds none goes on
        as here. An id nobody serves costs one look-up by primary key per request (no cache of misses: a
        session created here and moved away must be found again at once), which the limits on guessed
        ids bound."""
        if self._hub.knows(secret):
            return
        id_hmac = self._id_hmac(secret)
        under_way = self._bringing.get(id_hmac)
        if under_way is not None:
            await asyncio.shield(under_way)
            return
        done = self._bringing[id_hmac] = asyncio.get_running_loop().create_future()
        try:
            await self._bring(id_hmac, network)
        finally:
            del self._bringing[id_hmac]
            done.set_result(None)

    async def _bring(self, id_hmac: str, network: str) -> None:
        """Until the session is here, or gone, or BRING_AT_MOST has passed: the request waits rather than
        be answered as an unknown id's (`sd`, which MultiPoints takes as the end of its session) while
        the member serving it is slow to answer, starting, or has just died."""
        deadline = asyncio.get_running_loop().time() + BRING_AT_MOST
        held: list[str] = []  # the session's nick, held here from the first time it is asked for
        try:
            while True:
                try:
                    brought = await self._try_bringing(id_hmac, network, held)
                except Exception as failure:
                    if unavailable(failure) is None:
                        raise
                    brought = None  # the database restarting: it is asked again
                if brought is not None:
                    return
                if asyncio.get_running_loop().time() > deadline:
                    log.warning("session not brought in time %s", Fields(seconds=BRING_AT_MOST))
                    return
                await asyncio.sleep(BRING_AGAIN_AFTER)
        finally:
            for nick in held:
                await self._nicks.let_go(nick)

    async def _try_bringing(self, id_hmac: str, network: str, held: list[str]) -> bool | None:
        """True: the session is here now; False: it is nobody's to bring (ended, this member's, or a
        registered player's that `network` may not use); None: not yet, try again."""
        found = await self._session_of(id_hmac)
        if found is None:
            return False
        owner, saved, _ = found
        if owner == self._name:  # ended meanwhile, or ours and claimed by its first request
            return False
        networks = saved.origin.networks
        if network and saved.registered and networks and network not in networks:
            return False  # answered as a stranger's id wherever it is: no reason to move it
        alive = self._alive()  # None: cut off from Redis, or just back: a member unheard is not dead
        handed = False
        if alive is None or owner in alive:
            if saved.nick not in held:  # before its member lets it go, so that no login there takes it
                held.append(saved.nick)
                await self._nicks.hold(saved.nick)
            answer = await self._ask(owner, id_hmac)
            if answer is None and alive is not None:
                log.warning("session not handed over in time %s", Fields(nick=saved.nick, member=owner))
            if not answer and (answer is None or alive is None):
                return None
            handed = bool(answer)
        taken = await self._take_session(id_hmac, owner, handed=handed, k_journal=SESSION_JOURNAL)
        if taken is None or taken == HELD:  # moved meanwhile / its member is alive or starting: ask it
            return None
        self._hub.take_over(taken.saved, taken.account)
        log.info("session moved here %s", Fields(nick=saved.nick, member=owner, handed=handed))
        return True

    async def _ask(self, owner: str, id_hmac: str) -> bool | None:
        """True: the owner let the session go; False: the owner is gone (nobody took the question);
        None: no answer in time."""
        try:
            return await self._question(owner, {"hand_over": id_hmac}, self._asked, id_hmac)
        except TimeoutError:
            return None

    async def ask_to_give_up(self, holder: str, nick: str, network: str) -> Carried | None:
        """A guest logs in here under `nick`, which member `holder` has online: if it is a guest session
        used from `network`, the same person come back with a new id, `holder` ends it (its games wait
        for this login) and frees the nick. What that session hands over (whom it blocked and ignored,
        its private conversations), once `holder` has stored the end and freed the nick; None: somebody
        else's nick, or no answer in time. Raises ProtocolError `storage` while `holder`'s storage fails."""
        ticket = next(self._tickets)
        try:
            return await self._question(holder, {"give_up": [nick, network, ticket]}, self._giving_up, ticket)
        except TimeoutError:
            log.warning("guest session not given up in time %s", Fields(nick=nick, member=holder))
            return None

    async def _question(
        self, member: str, message: dict[str, Any], waiting: dict[K, Future[A]], key: K
    ) -> A | None:
        """`message` to `member`, and its answer, which `_answer` puts under `key` in `waiting`; None
        while the link does not run; TimeoutError past HAND_OVER_SECONDS."""
        if self.send is None:
            return None
        answer = waiting[key] = asyncio.get_running_loop().create_future()
        self.send(member, message)
        try:
            async with asyncio.timeout(HAND_OVER_SECONDS):
                return await answer
        finally:
            waiting.pop(key, None)

    # --- the messages (server/cluster/lobby.py hands them here) ---------------------------------

    def take(self, member: str, message: dict[str, Any]) -> None:
        if "hand_over" in message:
            self._run(self._hand_over(member, message["hand_over"]))
        elif "handed_over" in message:
            _answer(self._asked, message["handed_over"], True)
        elif "give_up" in message:
            nick, network, ticket = message["give_up"]
            self._run(self._give_up(member, str(nick), str(network), ticket))
        elif "given_up" in message:
            ticket, kept = message["given_up"]
            if message.get("refused") == "storage":
                _refuse(self._giving_up, ticket, ProtocolError("storage", STORAGE_REFUSED))
            else:
                _answer(self._giving_up, ticket, _carried(kept) if kept else None)

    def not_delivered(self, message: dict[str, Any]) -> None:
        """A question nobody took: the member serving the session is gone (stopped, or died and its
        announcement not yet expired), so the session is taken as it is in the store; a guest's login
        waits no longer for a session to be given up (its nick is free once that member's claims
        expire)."""
        if "hand_over" in message:
            _answer(self._asked, message["hand_over"], False)
        elif "give_up" in message:
            _answer(self._giving_up, message["give_up"][2], None)

    def _run(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _give_up(self, member: str, nick: str, network: str, ticket: int) -> None:
        """Another member's guest login asks for a guest session of this nick: ended here if it is the
        same person's (Sessions.give_up), and answered once its end is stored and its nick free. While
        storage fails the answer is `refused`, which that login answers `err.storage`, as any command
        storage must keep is answered (an earlier version reads it as not given up: `err.nickInUse`).
        Not given up, the claims are made this member's people first: a session of the nick that ended
        here since the last reconciliation (a logout, a time-out) holds it no more, and the login that
        asked claims it again after the answer (NickClaims.claiming)."""
        since = self._hub.writes()
        try:
            carried = self._hub.give_up(nick, network)
        except ProtocolError:  # storage fails: nothing ended
            carried, stored = None, False
        else:
            stored = carried is None or await self._hub.settled(since)
            await self._nicks.reconcile()  # ended here (its end stored or not), or held by no session here
        if not stored:
            log.warning("guest session not given up: storage fails %s", Fields(nick=nick))
            carried = None
        if self.send is not None:
            kept = None if carried is None else _kept(carried)
            self.send(member, {"given_up": [ticket, kept]} | ({} if stored else {"refused": "storage"}))

    async def _hand_over(self, member: str, id_hmac: str) -> None:
        """Another member asks for a session: written as it stands, let go, and said so once stored."""
        since = self._hub.writes()
        if self._hub.hand_over(id_hmac) and not await self._hub.settled(since):
            log.warning("session not handed over: storage did not take it %s", Fields(member=member))
            return
        if self.send is not None:
            self.send(member, {"handed_over": id_hmac})


def _kept(carried: Carried) -> dict[str, Any]:
    """A given-up session's hand-over as it goes to the login's member (`given_up`)."""
    return {"blocked": sorted(carried.blocked), "ignored": carried.ignored, "talks": carried.talks}


def _carried(kept: dict[str, Any]) -> Carried:
    """`_kept` read back; from a member of an earlier version, without the conversations."""
    return Carried(set(kept["blocked"]), dict(kept["ignored"]), list(kept.get("talks", [])))


def _answer(waiting: dict[K, Future[A]], key: K, value: A) -> None:
    """The answer to a question still waiting (SessionMover._question); a late one is dropped."""
    answer = waiting.get(key)
    if answer is not None and not answer.done():
        answer.set_result(value)


def _refuse(waiting: dict[K, Future[A]], key: K, refusal: ProtocolError) -> None:
    """A question still waiting answered with a refusal, which its asker raises; a late one is dropped."""
    answer = waiting.get(key)
    if answer is not None and not answer.done():
        answer.set_exception(refusal)
