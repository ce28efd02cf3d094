"""A registered player's id is their password: the database keeps only a slow, salted hash of it.

scrypt from the standard library (r=8, p=1, N=2^cost: at the default cost 14, 16 MB and about 40 ms on
this project's machine), run in threads of its own (HASH_THREADS) so the event loop goes on serving
everyone else while logins are checked, and so that a flood of logins takes no more memory than those
threads need and queues in front of nothing else that runs in asyncio's default threads (a database
host's name looked up, a tournament's pairing); a check asked `first` (the account's owner, logging in
from an address it logged in from) takes the next free thread. Any other call that would wait longer than
MOST_WAIT for a thread is refused at once (HashesBusy): a flood of guesses from many addresses then gets
a prompt answer (`nieOk.tooFast`) rather than holding its connections for minutes. The cost is the
operator's (`serve --id-hash-cost`, docs/operations.md): a hash keeps the parameters it was made with, so
one made at another cost still checks, and is made again at the player's next login.

Each hash has a salt of its own, so an id cannot be looked up by its hash: an account is found by
nick first. Live sessions, which a poll names by id only, are kept under a keyed HMAC instead
(`server.hub.persistence.id_hmac`, docs/protocol.md "After a restart").
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import os
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

DEFAULT_COST = 14
# From 2^10 (1 MB and about 3 ms a check: the test suite's) to 2^17 (128 MB and about 0.4 s, times the
# HASH_THREADS that may check at once).
MIN_COST, MAX_COST = 10, 17
R, P = 8, 1
HASH_THREADS = min(4, os.cpu_count() or 1)
SALT_BYTES = 16
KEY_BYTES = 32
# Seconds a call other than `first` may expect to wait for a thread: the turns ahead of it, HASH_THREADS at
# a time, each as long as the last checks took. Longer, a person has given up on the login anyway.
MOST_WAIT = 10.0
SCHEME = "scrypt"
T = TypeVar("T")


def _derive(secret: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    # scrypt needs about 128 * r * N bytes, and OpenSSL refuses over 32 MB (N >= 2^15) unless given a
    # limit: twice the need
    limit = 2 * 128 * r * (n + p + 2)
    return hashlib.scrypt(secret.encode(), salt=salt, n=n, r=r, p=p, maxmem=limit, dklen=KEY_BYTES)


def id_matches(secret: str, stored: str) -> bool:
    scheme, n_text, r_text, p_text, salt, key = stored.split("$")
    if scheme != SCHEME:
        raise ValueError(f"unknown id hash scheme {scheme!r}")
    n, r, p = int(n_text), int(r_text), int(p_text)
    if n * r > 2**MAX_COST * R or p > P:  # a stored row may not ask for more than the dearest cost
        raise ValueError(f"id hash parameters beyond any cost the server makes: N={n}, r={r}, p={p}")
    derived = _derive(secret, base64.b64decode(salt), n, r, p)
    return hmac.compare_digest(derived, base64.b64decode(key))


class HashesBusy(Exception):
    """The hashes' threads are taken for longer than MOST_WAIT: try again in a while."""


class IdHashing:
    """New hashes at `cost` (log2 of scrypt's N); checks of hashes made at any cost."""

    def __init__(self, cost: int = DEFAULT_COST) -> None:
        if not MIN_COST <= cost <= MAX_COST:
            raise ValueError(f"an id hash cost is from {MIN_COST} to {MAX_COST}, got {cost}")
        self.n = 2**cost
        self.prefix = f"{SCHEME}${self.n}${R}${P}$"  # of every hash made at this cost
        self.threads = ThreadPoolExecutor(HASH_THREADS, thread_name_prefix="id-hash")
        self.free = HASH_THREADS  # threads no check holds; the others' turns wait below, first-come
        self.turns: dict[bool, deque[asyncio.Future[None]]] = {True: deque(), False: deque()}  # by `first`
        self.waiting = 0  # the turns above still waiting (a cancelled one stays there until skipped)
        # what the last hashes took on a thread, smoothed: what a turn waits for; from the start one hash
        # timed here, so that a flood meeting a server just started is bounded from its first check
        began = time.perf_counter()
        self.hash(os.urandom(KEY_BYTES).hex())
        self.seconds = time.perf_counter() - began
        # Nobody's hash at the current cost (random salt and key: nothing derives to it), checked for an
        # unknown nick so that it takes as long as a known one.
        self.decoy = self._stored(os.urandom(SALT_BYTES), os.urandom(KEY_BYTES))

    def hash(self, secret: str) -> str:
        """`scrypt$N$r$p$salt$key`: the parameters kept, so that the cost can change without locking
        anyone out."""
        salt = os.urandom(SALT_BYTES)
        return self._stored(salt, _derive(secret, salt, self.n, R, P))

    def outdated(self, stored: str) -> bool:
        """Whether `stored` was made with other parameters than new hashes are: made again at the next
        login that matches it."""
        return not stored.startswith(self.prefix)

    async def hash_async(self, secret: str) -> str:
        return await self._in_turn(False, self.hash, secret)

    async def check_async(self, secret: str, stored: str | None, *, first: bool = False) -> bool:
        """Check an id against a stored hash; an unknown nick (`None`) costs a check at the current cost,
        and fails. `first`: ahead of every check waiting without it (an account's owner from an address
        it logged in from, while strangers flood the threads with guesses)."""
        matches = await self._in_turn(first, id_matches, secret, self.decoy if stored is None else stored)
        return matches and stored is not None

    def expected_wait(self) -> float:
        """Seconds a call queued now would wait for a thread."""
        return (self.waiting + 1) / HASH_THREADS * self.seconds

    async def _in_turn(self, first: bool, work: Callable[..., T], *args: str) -> T:
        """`work` on one of the threads, once it is this call's turn: `first` calls before the others,
        each in the order they came; HashesBusy for a call not `first` that would wait over MOST_WAIT."""
        loop = asyncio.get_running_loop()
        if self.free and not self.waiting:
            self.free -= 1
        elif not first and self.expected_wait() > MOST_WAIT:
            raise HashesBusy(f"{self.waiting} id checks waiting")
        else:
            turn = loop.create_future()
            self.turns[first].append(turn)
            self.waiting += 1
            try:
                await turn
            except asyncio.CancelledError:
                if turn.cancelled():  # while it waited (a client gone): skipped when its turn comes
                    self.waiting -= 1
                elif turn.done():  # given the thread, cancelled before it ran
                    self._next_turn()
                raise
        began = loop.time()
        done = loop.run_in_executor(self.threads, work, *args)
        # the thread is let go of when the work ends, even if the caller gave up waiting for it before
        done.add_done_callback(lambda _: self._ended(loop.time() - began))
        return await asyncio.shield(done)

    def _ended(self, seconds: float) -> None:
        self.seconds = 0.8 * self.seconds + 0.2 * seconds
        self._next_turn()

    def _next_turn(self) -> None:
        """The thread just let go of goes to the first call waiting, or back to the free ones."""
        for waiting in (self.turns[True], self.turns[False]):
            while waiting:
                turn = waiting.popleft()
                if not turn.done():  # not cancelled while it waited
                    self.waiting -= 1
                    turn.set_result(None)
                    return
        self.free += 1

    def close(self) -> None:
        """No more hashes: those waiting are dropped, those under way finish in their threads."""
        self.threads.shutdown(wait=False, cancel_futures=True)

    def _stored(self, salt: bytes, key: bytes) -> str:
        return f"{self.prefix}{_b64(salt)}${_b64(key)}"


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()
