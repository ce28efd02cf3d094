"""Limits on expensive or guessable requests: per address (failed logins, registrations), per account
(failed logins, with a growing wait), and requests per second.

"Per address" is per host and, looser, per network (server/web/networks.py): the limiters named
Network... keep both, keyed by a client's Origin."""

from __future__ import annotations

import time
from collections import OrderedDict, deque
from collections.abc import Callable

from server.hub.model import Origin

MAX_ADDRESSES = 10_000  # beyond this many tracked addresses, the quiet ones are forgotten first
MAX_ACCOUNTS = 20_000  # accounts (or made-up nicks) with failed logins kept; the quiet ones go first
MAX_KNOWN = 20_000  # (account, address) pairs that logged in, kept; the longest unused go first
FORGET_FAILURES = 24 * 3600.0  # an account's failures are forgotten after a day without one
REMEMBER_ADDRESS = 30 * 24 * 3600.0  # an address that logged in to an account stays known for 30 days
FIRST_WAIT = 1.0  # seconds, after an account's free failures; doubled by each further failure


class AddressLimiter:
    """At most `limit` events per address in any `window` seconds."""

    def __init__(self, limit: int, window: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.limit, self.window, self.clock = limit, window, clock
        self._events: dict[str, deque[float]] = {}

    def _recent(self, address: str) -> deque[float]:
        events = self._events.get(address)
        if events is None:
            return deque()
        cutoff = self.clock() - self.window
        while events and events[0] <= cutoff:
            events.popleft()
        if not events:
            del self._events[address]
        return events

    def exhausted(self, address: str) -> bool:
        return len(self._recent(address)) >= self.limit

    def record(self, address: str) -> None:
        if len(self._events) >= MAX_ADDRESSES and address not in self._events:
            self._forget_stale()
        self._events.setdefault(address, deque()).append(self.clock())

    def unrecord(self, address: str) -> None:
        """Take back the newest event (it was recorded in advance and turned out not to count)."""
        events = self._events.get(address)
        if events:
            events.pop()
            if not events:
                del self._events[address]

    def _forget_stale(self) -> None:
        for address in list(self._events):
            self._recent(address)
        while len(self._events) >= MAX_ADDRESSES:  # all busy: drop the one idle longest
            oldest = min(self._events, key=lambda a: self._events[a][-1])
            del self._events[oldest]


class NetworkLimiter:
    """At most `limit` events per host and `limit * factor` per network in any `window` seconds."""

    def __init__(
        self, limit: int, window: float, factor: int, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.hosts = AddressLimiter(limit, window, clock)
        self.networks = AddressLimiter(limit * factor, window, clock)

    def exhausted(self, origin: Origin) -> bool:
        return self.hosts.exhausted(origin.host) or self.networks.exhausted(origin.group)

    def record(self, origin: Origin) -> None:
        self.hosts.record(origin.host)
        self.networks.record(origin.group)

    def unrecord(self, origin: Origin) -> None:
        self.hosts.unrecord(origin.host)
        self.networks.unrecord(origin.group)


class LoginGuard:
    """Failed logins to registered accounts, counted three ways: per address (at most `per_address` in
    `window` seconds, and `factor` times that per network), per account from any address (nicks nobody
    registered too), and per account and address where that address has logged in to the account
    before (the owner's own). An account, and
    such a pair, may fail `per_account` times; after that each further try waits, 1 second after the
    last failure, doubling with each further failure up to `longest_wait`.

    An address that has logged in to the account is held back only by its own pair's count, never by
    the account's or the address's: strangers' guesses elsewhere cannot shut the owner out. This is
    OWASP's "device cookie" defence with the address in the cookie's place (zagram's clients keep no
    cookies).

    An attempt is counted as failed when it is admitted and given back when the id was right, so that
    a burst of parallel guesses cannot all pass before the first one is counted.
    """

    def __init__(
        self,
        per_address: int,
        window: float,
        per_account: int,
        longest_wait: float,
        factor: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.addresses = NetworkLimiter(per_address, window, factor, clock)
        self.per_account, self.longest_wait, self.clock = per_account, longest_wait, clock
        # account -> (failures, last failure), the least recent failure first
        self._failures: OrderedDict[str, tuple[int, float]] = OrderedDict()
        # (account, host) -> (last login, failures since, last failure), the least recent login first
        self._known: OrderedDict[tuple[str, str], tuple[float, int, float]] = OrderedDict()
        # host -> {id HMAC -> when last sent} of the ids it sent that no session of its had, counted as
        # guesses (`guess`); the hosts least recently heard from first
        self._guessed: OrderedDict[str, dict[str, float]] = OrderedDict()
        self.window = window

    def wait(self, account: str, origin: Origin) -> float:
        """Seconds before this address may try the account again."""
        known = self._known.get((account, origin.host))
        count, last = (known[1], known[2]) if known is not None else self._failures.get(account, (0, 0.0))
        if count < self.per_account:
            return 0.0
        delay = min(self.longest_wait, FIRST_WAIT * 2.0 ** min(count - self.per_account, 64))
        return max(0.0, last + delay - self.clock())

    def knows(self, account: str | None, origin: Origin) -> bool:
        """Whether this address has logged in to the account: its owner's, as far as the server can tell."""
        return account is not None and (account, origin.host) in self._known

    def admit(self, account: str | None, origin: Origin) -> bool:
        """False: refuse this login without looking at the id. True: it is counted as failed until
        `succeeded` says otherwise. `account` is the nick's key; None for a nick no account can have."""
        self._forget_old()
        known = self.knows(account, origin)
        if (account is not None and self.wait(account, origin) > 0) or (
            not known and self.addresses.exhausted(origin)
        ):
            return False
        self.addresses.record(origin)
        if account is None:
            return True
        now = self.clock()
        count, _ = self._failures.pop(account, (0, 0.0))
        self._failures[account] = (count + 1, now)
        if len(self._failures) > MAX_ACCOUNTS:
            self._failures.popitem(last=False)
        if known:
            login, failures, _ = self._known[account, origin.host]
            self._known[account, origin.host] = (login, failures + 1, now)
        return True

    def guess(self, origin: Origin, fingerprint: str) -> bool:
        """A request carrying an id that no session used from this address has (an unknown id, or a
        session logged in elsewhere): counted as a failed login is, once per distinct id (`fingerprint`,
        its HMAC) and address within the window. False: refuse it, whatever the id. An id already
        counted goes on being answered, so that an anonymous reader polling with one made-up id for
        hours is counted once and never held up."""
        now = self.clock()
        guessed = self._guessed.pop(origin.host, None)
        if guessed is None:
            guessed = {}
        else:
            for old in [key for key, when in guessed.items() if when <= now - self.window]:
                del guessed[old]
        known = fingerprint in guessed
        admitted = known or not self.addresses.exhausted(origin)
        if admitted:
            if not known:
                self.addresses.record(origin)
            guessed[fingerprint] = now
        if guessed:
            self._guessed[origin.host] = guessed
            while len(self._guessed) > MAX_ADDRESSES:
                self._guessed.popitem(last=False)
        return admitted

    def unguess(self, origin: Origin, fingerprint: str) -> None:
        """The id counted in advance by `guess` turned out to be a session of this address's (a member
        of a cluster brought it from another)."""
        guessed = self._guessed.get(origin.host)
        if guessed is not None and guessed.pop(fingerprint, None) is not None:
            self.addresses.unrecord(origin)

    def succeeded(self, account: str, origin: Origin) -> None:
        """The id was right: the attempt is not a failure, and the address is known to the account."""
        self.give_back(account, origin)
        self.remember(account, origin)

    def give_back(self, account: str, origin: Origin) -> None:
        """An admitted attempt is not a failure after all."""
        self.addresses.unrecord(origin)
        count, last = self._failures.get(account, (1, 0.0))
        if count <= 1:
            self._failures.pop(account, None)
        else:
            self._failures[account] = (count - 1, last)
        known = self._known.get((account, origin.host))
        if known is not None and known[1]:
            self._known[account, origin.host] = (known[0], known[1] - 1, known[2])

    def remember(self, account: str, origin: Origin) -> None:
        """The owner logged in (or registered) from this address: its own count starts again."""
        self._known.pop((account, origin.host), None)
        self._known[account, origin.host] = (self.clock(), 0, 0.0)
        if len(self._known) > MAX_KNOWN:
            self._known.popitem(last=False)

    def _forget_old(self) -> None:
        """Both tables are ordered oldest first, so this looks only at what it drops, plus one."""
        now = self.clock()
        while self._failures and next(iter(self._failures.values()))[1] <= now - FORGET_FAILURES:
            self._failures.popitem(last=False)
        while self._known and next(iter(self._known.values()))[0] <= now - REMEMBER_ADDRESS:
            self._known.popitem(last=False)


class TokenBuckets:
    """Requests per second per key (a player id or an address): `rate` a second, bursts up to `burst`."""

    def __init__(self, rate: float, burst: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.rate, self.burst, self.clock = rate, burst, clock
        self._buckets: dict[str, tuple[float, float]] = {}  # key -> (tokens, when)
        self._swept = clock()

    def take(self, key: str, cost: float = 1.0) -> bool:
        """Spend `cost` tokens if there are as many; False means: too fast, refuse."""
        now = self.clock()
        tokens, when = self._buckets.get(key, (self.burst, now))
        tokens = min(self.burst, tokens + (now - when) * self.rate)
        if tokens < cost:
            self._buckets[key] = (tokens, now)
            return False
        self._buckets[key] = (tokens - cost, now)
        if len(self._buckets) > MAX_ADDRESSES and now - self._swept >= self._refill_seconds:
            self._forget_full(now)
        return True

    @property
    def _refill_seconds(self) -> float:
        return self.burst / self.rate

    def _forget_full(self, now: float) -> None:
        """A bucket that has refilled is the same as no bucket: drop those.

        At most once per refill time: when more than MAX_ADDRESSES keys are all busy (many clients, or
        made-up ids), sweeping on every request would cost a pass over all of them per request.
        """
        self._swept = now
        for key in [k for k, (_, when) in self._buckets.items() if now - when >= self._refill_seconds]:
            del self._buckets[key]


class NetworkBuckets:
    """Requests per second per host, and `factor` times as many per network."""

    def __init__(
        self, rate: float, burst: float, factor: int, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.hosts = TokenBuckets(rate, burst, clock)
        self.networks = TokenBuckets(rate * factor, burst * factor, clock)

    def take(self, origin: Origin, cost: float = 1.0) -> bool:
        return self.hosts.take(origin.host, cost) and self.networks.take(origin.group, cost)


class RecentKeys:
    """The last `most` keys seen, each once: the hashes of the bots' tokens and the organisers' keys known
    to be right, looked up without counting against the store's reads (clients.STORE_READS), which a
    flood of made-up ones uses up."""

    def __init__(self, most: int = MAX_ADDRESSES) -> None:
        self.most = most
        self._keys: OrderedDict[str, None] = OrderedDict()

    def __contains__(self, key: str) -> bool:
        return key in self._keys

    def add(self, key: str) -> None:
        self._keys[key] = None
        self._keys.move_to_end(key)
        if len(self._keys) > self.most:
            self._keys.popitem(last=False)

    def discard(self, key: str) -> None:
        self._keys.pop(key, None)
