"""Signed messages between the members of a cluster (docs/cluster.md, "Who may speak").

Redis delivers whatever anyone who can reach it publishes. So every message a member publishes is
sealed: `k1 MAC SENDER INSTANCE SINCE COUNTER TIME PAYLOAD`, the MAC an HMAC-SHA256, under the secret
the members share, of the channel and everything after the MAC. A receiver reads nothing of the payload
before the MAC checks out, and then takes a message only if it is fresh (its TIME within FRESH_SECONDS
of the receiver's clock, and not before the receiver's subscription began: a message published while
it did not listen never reached it, and cannot be handed to it later) and new: its COUNTER above the
last one taken from that sender's INSTANCE, or
an INSTANCE that started (SINCE) after the one heard before, which is a restart of that member. A
replayed message of an earlier instance is therefore dropped, never taken for a restart; so is any
message of an instance that said goodbye or that a later one replaced. Once the instance heard last
is over (its goodbye) or lapsed (its announcement expired), the next instance is taken whatever its
SINCE, so that a member restarted on a clock a little behind is heard. What is dropped is counted by
reason (/metrics) and logged once per DROP_LOG_SECONDS with the counts, never the message.

The counter is one for all the channels a member publishes on, in the order it publishes: a receiver
hears its own channel and the lobby's on one connection, in that order, and only what is sent to it,
so the counters it sees rise with gaps. Gaps are the business of the sequence numbers inside the
payloads (server/cluster/lobby.py), not of the seal.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import re
import secrets
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from server.logs import Fields

log = logging.getLogger(__name__)

FORMAT = "k1"  # the seal's version: a receiver drops any other as unsigned
FRESH_SECONDS = 30.0  # how far a message's time may be from the receiver's clock: members run NTP
_FRESH_MS = int(FRESH_SECONDS * 1000)
DROP_LOG_SECONDS = 60.0  # at most one log line about dropped messages in this time
DROP_REASONS = ("unsigned", "signature", "stale", "replay", "malformed")
MAX_NAMED_SENDERS = 5  # senders named in one log line about drops
RETIRED_KEPT = 8  # instances over, remembered per sender: their messages are replays, whatever their time
_SEALED = re.compile(
    r"k1 ([0-9a-f]{64}) ([A-Za-z0-9][A-Za-z0-9._:-]{0,99}) ([0-9a-f]{1,32}) ([0-9]{1,15}) ([0-9]{1,18}) "
    r"([0-9]{1,15}) ",
)
_KEY_PURPOSE = b"kropki cluster messages v1"  # a key of its own, should the secret ever sign other things


def _key(secret: str) -> hmac.HMAC:
    """The HMAC state after the key: each message copies it instead of hashing the key again."""
    derived = hmac.new(secret.encode(), _KEY_PURPOSE, hashlib.sha256).digest()
    return hmac.new(derived, digestmod=hashlib.sha256)


def _now_ms(clock: Callable[[], float]) -> int:
    return int(clock() * 1000)


class Seal:
    """This member's side: every message it publishes, sealed in the order it publishes them."""

    def __init__(self, name: str, secret: str, *, clock: Callable[[], float] = time.time) -> None:
        self.name = name
        self.instance = secrets.token_hex(8)  # tells a restarted namesake's messages from the old one's
        self._clock = clock
        self._since = _now_ms(clock)
        self._counter = 0
        self._key = _key(secret)

    def seal(self, channel: str, payload: str) -> str:
        self._counter += 1
        signed = f"{self.name} {self.instance} {self._since} {self._counter} {_now_ms(self._clock)} {payload}"
        mac = self._key.copy()
        mac.update(f"{channel}\n{signed}".encode())
        return f"{FORMAT} {mac.hexdigest()} {signed}"


class Opened(NamedTuple):
    """A message that passed: who sent it, from which of its lives, and what it says."""

    sender: str
    instance: str
    payload: Any
    restarted: bool  # the first message of a new instance of a sender heard before: it restarted


class Opener:
    """The receiving side: a message is opened only if it is sealed with one of the secrets, fresh and
    new; anything else is dropped and counted."""

    def __init__(
        self,
        name: str,
        secrets: Sequence[str],
        *,
        clock: Callable[[], float] = time.time,
        log_every: float = DROP_LOG_SECONDS,
    ) -> None:
        if not secrets:
            raise ValueError("a member of a cluster needs the cluster's secret (docs/cluster.md)")
        self._name = name
        self._keys = [_key(secret) for secret in secrets]
        self._clock = clock
        # sender -> (its instance's start, the instance, the last counter taken from it)
        self._heard: dict[str, tuple[int, str, int]] = {}
        self._retired: dict[str, deque[str]] = {}  # sender -> its instances that are over, latest last
        self._lapsed: set[str] = set()  # senders whose instance heard last is not seen alive
        self.dropped = dict.fromkeys(DROP_REASONS, 0)  # since the start, for /metrics
        self._log_every = log_every
        self._unlogged = dict.fromkeys(DROP_REASONS, 0)  # since the last log line
        self._senders: set[str] = set()  # the senders the unlogged drops claimed (names only)
        self._logged_at: float | None = None
        self._flush: asyncio.TimerHandle | None = None
        self._listening_since = _now_ms(clock)

    def listening(self) -> None:
        """The receiver subscribes (again): what was sent before now was lost to it, and stays so."""
        self._listening_since = _now_ms(self._clock)

    def open(self, channel: str, data: str) -> Opened | None:
        """The message, or None: this member's own (it hears the lobby it speaks on) or dropped."""
        head = _SEALED.match(data)
        if head is None:
            self._drop("unsigned", None)
            return None
        mac, sender, instance, since, counter, sent = head.groups()
        if sender == self._name:
            return None
        signed = f"{channel}\n{data[head.start(2) :]}".encode()
        for key in self._keys:
            check = key.copy()
            check.update(signed)
            if hmac.compare_digest(mac, check.hexdigest()):
                break
        else:
            self._drop("signature", sender)
            return None
        sent_ms = int(sent)
        if abs(_now_ms(self._clock) - sent_ms) > _FRESH_MS or sent_ms < self._listening_since:
            self._drop("stale", sender)
            return None
        heard, since_ms, number = self._heard.get(sender), int(since), int(counter)
        retired = self._retired.get(sender, ())
        restarted = False
        if instance in retired:
            self._drop("replay", sender)
            return None
        if heard is not None:
            if heard[1] == instance:
                if number <= heard[2]:
                    self._drop("replay", sender)
                    return None
            elif since_ms <= heard[0] and heard[1] not in retired and sender not in self._lapsed:
                self._drop("replay", sender)  # an earlier life of the sender
                return None
            else:  # a later life, or the next one after the last one heard is over, on any clock
                restarted = True
        try:
            payload = json.loads(data[head.end() :])
        except ValueError:
            self._drop("malformed", sender)
            return None
        if restarted:
            self.retire(sender)
        self._lapsed.discard(sender)
        self._heard[sender] = (since_ms, instance, number)
        return Opened(sender, instance, payload, restarted)

    def retire(self, sender: str) -> None:
        """The instance of `sender` heard last is over (it said goodbye, or a later one spoke): its
        messages are replays from now on, and the next instance is new whatever its start."""
        heard = self._heard.get(sender)
        if heard is not None:
            retired = self._retired.setdefault(sender, deque(maxlen=RETIRED_KEPT))
            if heard[1] not in retired:
                retired.append(heard[1])

    def lapsed(self, sender: str) -> None:
        """`sender` is not seen alive (its announcement expired: it died, or cannot reach Redis): the
        next instance is new whatever its start; this one, should it come back, is heard as before."""
        if sender in self._heard:
            self._lapsed.add(sender)

    # --- what was dropped ---------------------------------------------------------------------

    def _drop(self, reason: str, sender: str | None) -> None:
        self.dropped[reason] += 1
        self._unlogged[reason] += 1
        if sender is not None and len(self._senders) < MAX_NAMED_SENDERS:
            self._senders.add(sender)
        loop = asyncio.get_running_loop()
        if self._logged_at is None or loop.time() - self._logged_at >= self._log_every:
            self._log_drops()
        elif self._flush is None:
            self._flush = loop.call_at(self._logged_at + self._log_every, self._log_drops)

    def _log_drops(self) -> None:
        self._flush = None
        if not any(self._unlogged.values()):
            return
        counts = {reason: count for reason, count in self._unlogged.items() if count}
        senders = ",".join(sorted(self._senders)) or "none"
        log.warning(
            "cluster messages dropped: not signed with this member's secret, stale or replayed; check that "
            "every member has the same cluster secret and a synchronised clock, and who else can publish "
            "on Redis (counts since the last such line) %s",
            Fields(**counts, claimed_senders=senders),
        )
        self._unlogged = dict.fromkeys(DROP_REASONS, 0)
        self._senders = set()
        self._logged_at = asyncio.get_running_loop().time()

    def close(self) -> None:
        if self._flush is not None:
            self._flush.cancel()
            self._flush = None
