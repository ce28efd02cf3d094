"""One lobby across the members of a cluster, over Redis pub/sub (docs/cluster.md, "One lobby").

Every member publishes the lobby lines it makes (people arriving and leaving, their `i` lines, tables
opened and closed, descriptions, results, lobby chat) on one channel, and relays the other members'
lines to its own readers, numbered into its own event stream. Pub/sub delivers in order but at most
once, so every message carries its sender's sequence number: a receiver that finds one missing (or
whose subscription broke, or whose Redis came back) asks for the sender's whole part and shows its
readers only what changed (server/hub/remote.py). A member's whole part is published in the same order
as its lines, so a receiver knows exactly which lines it already contains.

The link also carries what one member has for one other member alone, on that member's own channel:
private chat lines, and the tables that people of one member sit at on another (server/hub/mirrors.py,
server/hub/visitors.py). Those messages are numbered per receiving member; a receiver that finds one
missing asks the sender to send its view again (`resync`), and one that no subscriber took comes back to
the hub as not delivered (docs/cluster.md, "Tables across members", "Private chat").

Every message is sealed with the cluster's secret, its sender and a counter, and read only once its seal
checks out (server/cluster/signing.py): whoever else can publish on Redis is not heard.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from redis.asyncio import Redis
from redis.asyncio.client import PubSub

from server.cluster import calls
from server.cluster.calls import CALL_TIMEOUT, UNREACHABLE, bounded, stop_if_cancelled
from server.cluster.sessions import MESSAGES as SESSION_MESSAGES
from server.cluster.sessions import SessionMover
from server.cluster.signing import Opened, Opener, Seal

log = logging.getLogger(__name__)

CHANNEL = "kropki:lobby"
DIRECT_PREFIX = "kropki:to:"  # + a member's name: messages for that member alone
RETRY_SECONDS = 1.0  # between two attempts to subscribe again
# a member heard from this recently is not dropped for missing from the live members: the view may have
# been read (two bounded calls) before it announced itself
NEWCOMER_SECONDS = 3 * CALL_TIMEOUT
# An action at a table and its answer (`do`, `done`, `undone`) that no member listened for are sent again
# this long: the member they are for subscribes again within a heartbeat of Redis's return (issue 44: a
# confirmation lost so held its client's k 30 s, and an action so lost was refused). Tried with 15 s, past
# the 10 s in which a dead member is found gone: its moves were given up instead of refused "Not done",
# sent again by their clients at once, and refused "There is no game table N." until the take-over (55
# refusals against 32, one chaos run each).
RESENT_FOR = 10.0
RESEND_EVERY = 0.5
# The answers to a private line are sent again as well: lost, the writer never saw a line its recipient
# had, nor a refusal (the writer's member takes each answer once: Chats.private_kept)
RESENT = ("do", "done", "undone", "private_kept", "private_refused", "undelivered")
# a whole part asked for and not had this long is asked for again: the ask or the part was lost (a
# publish that failed is sent again, but a part can still be dropped on its way in, stale or unread)
ASK_AGAIN_SECONDS = 3.0


@dataclass(slots=True)
class Resend:
    """A message sent again until its member listens (LobbyLink._sent_again)."""

    message: dict[str, Any]  # held here, so that its id names it alone while it is sent again
    until: float  # loop time past which it is given up
    due: asyncio.TimerHandle | None = None  # its next sending, once one is set


class SharedLobby(Protocol):
    """What the link needs of the hub (Hub implements it)."""

    def share_lobby(self, listener: Any) -> None: ...
    def lobby_part(self) -> list[str]: ...
    def take_lobby_line(self, member: str, line: str, b_only: bool) -> None: ...
    def take_lobby_part(self, member: str, lines: list[str]) -> None: ...
    def drop_lobby_part(self, member: str) -> None: ...
    def share_with_members(self, send: Any) -> None: ...
    def take_from_member(self, member: str, message: dict[str, Any]) -> None: ...
    def not_delivered(self, member: str, message: dict[str, Any]) -> None: ...
    def resync_member(self, member: str) -> None: ...
    def missed_from_member(self, member: str) -> None: ...
    def table_peers(self) -> set[str]: ...
    def member_gone(self, member: str) -> None: ...


class LobbyLink:
    """This member's side of the shared lobby: its lines out, the others' lines in."""

    def __init__(self, url: str, name: str, hub: SharedLobby, secrets: Sequence[str]) -> None:
        """`secrets`: the cluster's; the first signs, any opens (two while the secret is changed)."""
        self._url, self._name, self._hub = url, name, hub
        self._opener = Opener(name, secrets)  # refuses to be made without a secret
        self._seal = Seal(name, secrets[0])
        self._sequence = 0
        self._outbox: list[tuple[str, bool]] = []
        self._direct: list[tuple[str, dict[str, Any]]] = []  # (member, message) for one member alone
        self._direct_sequence: dict[str, int] = {}  # member -> the last number of a message sent to it
        self._direct_heard: dict[str, tuple[str, int]] = {}  # member -> (instance, last number from it)
        self._isolated = False
        self.sessions: SessionMover | None = None  # sessions moving between members (cluster/sessions.py)
        self._send_part = False  # this member's whole part goes out with the next message
        self._ask = False  # and a request for everyone's whole part
        self._wake = asyncio.Event()
        self._heard: dict[str, tuple[str, int]] = {}  # member -> (instance, last sequence taken)
        self._waiting_for_part: dict[str, float] = {}  # member -> when its part was last asked for
        self._known: dict[str, float] = {}  # member -> when this member first heard from it (loop time)
        self._alive: set[str] = set()  # the members alive as membership last said
        self._resending: dict[int, Resend] = {}  # by id of the message
        self._client: Redis | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._resubscribe = asyncio.Event()

    @property
    def dropped(self) -> Mapping[str, int]:
        """Messages heard and not taken, by reason (server/cluster/signing.py), for /metrics."""
        return self._opener.dropped

    async def start(self) -> None:
        self._client = calls.client(self._url, socket_timeout=None)
        self._hub.share_lobby(self._made)
        self._hub.share_with_members(self.send_to)
        self._tasks = [
            asyncio.create_task(self._send_forever(), name="cluster lobby out"),
            asyncio.create_task(self._listen_forever(), name="cluster lobby in"),
        ]

    async def stop(self) -> None:
        """Says goodbye, so that the others take this member's people and tables out of the lobby at
        once (a member that dies is taken out when its announcement expires: members_changed)."""
        self._hub.share_lobby(None)
        self._hub.share_with_members(None)
        await calls.cancel(*self._tasks)
        self._tasks = []
        self._opener.close()
        client, self._client = self._client, None
        goodbye = self._sealed(CHANNEL, {"bye": True})
        await calls.farewell(client, lambda redis: redis.publish(CHANNEL, goodbye), "lobby goodbye")

    # --- what membership says -----------------------------------------------------------------

    def members_changed(self, members: tuple[str, ...]) -> None:
        """Members heard from that are no longer alive leave the lobby. One heard from only just now
        is left alone: it announced itself before it spoke, but this view may have been read before.
        `members` as membership judges them (Membership.judged_members): not while a member missing may
        only not have announced itself again after Redis came back, which took its tables away from
        the people here, and dropped the actions and confirmations sent to it (issue 44)."""
        alive = self._alive = set(members)
        settled = asyncio.get_running_loop().time() - NEWCOMER_SECONDS
        for member, since in list(self._known.items()):
            if member not in alive and since < settled:
                self._forget(member)
                self._opener.lapsed(member)
        if not self._isolated:  # cut off, this member sees itself alone: the others are not dead
            for member in self._hub.table_peers() - alive:
                self._gone(member)
                self._opener.lapsed(member)

    def reconnected(self, connected: bool) -> None:
        """Redis went: this member serves its own players only, and its lobby shows only them. Redis
        came back (possibly restarted empty): lines were lost both ways, so everything is asked again."""
        self._isolated = not connected
        if connected:
            self._resubscribe.set()
        else:
            for member in list(self._known):
                self._forget(member)

    def _forget(self, member: str) -> None:
        """`member` leaves this member's lobby (its tables here stay: see _gone)."""
        self._known.pop(member, None)
        self._heard.pop(member, None)
        self._waiting_for_part.pop(member, None)
        self._hub.drop_lobby_part(member)

    def _gone(self, member: str) -> None:
        """`member` stopped, died or restarted: whatever it shared here with this member ends."""
        self._forget(member)
        self._direct_heard.pop(member, None)
        self._direct_sequence.pop(member, None)
        self._hub.member_gone(member)

    # --- out ----------------------------------------------------------------------------------

    def _made(self, line: str, b_only: bool) -> None:
        self._outbox.append((line, b_only))
        self._wake.set()

    def send_to(self, member: str, message: dict[str, Any]) -> None:
        """A message for `member` alone, in order with everything else this member sends it. One that is
        being sent again already (see _sent_again) is not queued a second time: the copy's failure began
        a sending again of its own, which went on after the first had given the message up (2 of 13
        full test runs: a move queued again by Mirrors.send_again while Redis was down was told
        "Not done" after RESENT_FOR, and played once Redis was back)."""
        if id(message) in self._resending:
            return
        self._direct.append((member, message))
        self._wake.set()

    async def _send_forever(self) -> None:
        assert self._client is not None
        while True:
            await self._wake.wait()
            self._wake.clear()
            messages = self._messages()
            direct = self._direct_messages()
            try:
                async with self._client.pipeline(transaction=False) as pipe:
                    # sealed in the order they are published: their counters rise in that order
                    for message in messages:
                        pipe.publish(CHANNEL, self._sealed(CHANNEL, message))
                    for member, (message, _) in direct.items():
                        channel = DIRECT_PREFIX + member
                        pipe.publish(channel, self._sealed(channel, message))
                    heard_by: list[int | None] = (await bounded(pipe.execute()))[len(messages) :]
            except UNREACHABLE as error:
                # Lost: the others see the gap in the sequence and ask for this member's whole part. A
                # part or an ask lost would be missed for good (the others wait for the part, dropping
                # this member's lines): sent again, after a pause that keeps a Redis down from a busy loop.
                log.debug("lobby lines not sent: %s", error)
                heard_by = [None] * len(direct)  # not known whether anyone would have heard them
                part, ask = (any(key in message for message in messages) for key in ("part", "ask"))
                if part or ask:
                    loop = asyncio.get_running_loop()
                    loop.call_later(RETRY_SECONDS, functools.partial(self._queue, part=part, ask=ask))
            for (member, (_, bodies)), listeners in zip(direct.items(), heard_by, strict=True):
                if not listeners:
                    self._not_delivered(member, bodies, gone=listeners == 0)
                elif self._resending:
                    for body in bodies:
                        self._resent_no_more(body)
            stop_if_cancelled()
            if self._outbox or self._send_part or self._ask or self._direct:
                self._wake.set()

    def _messages(self) -> list[dict[str, Any]]:
        """The queued lines, then (built in the same turn of the loop, so it holds exactly those lines)
        this member's whole part, then a request for the others'."""
        messages: list[dict[str, Any]] = []
        if self._outbox:
            self._sequence += 1
            lines, self._outbox = self._outbox, []
            messages.append({"n": self._sequence, "l": lines})
        if self._send_part:
            self._send_part = False
            messages.append({"n": self._sequence, "part": self._hub.lobby_part()})
        if self._ask:
            self._ask = False
            messages.append({"ask": True})
        return messages

    def _sealed(self, channel: str, message: dict[str, Any]) -> str:
        return self._seal.seal(channel, json.dumps(message, separators=(",", ":")))

    def _not_delivered(self, member: str, bodies: list[dict[str, Any]], *, gone: bool) -> None:
        """`gone`: Redis took the message and no member listened (that member stopped or died); else
        Redis itself could not be reached. A session is taken from a member only when it is gone."""
        for body in bodies:
            if "hand_over" in body:
                if gone and self.sessions is not None:
                    self.sessions.not_delivered(body)
            elif "give_up" in body:  # whether heard or not, the login waits no longer
                if self.sessions is not None:
                    self.sessions.not_delivered(body)
            elif not self._sent_again(member, body, heard_maybe=not gone):
                self._resent_no_more(body)
                self._hub.not_delivered(member, body)

    def _sent_again(self, member: str, body: dict[str, Any], *, heard_maybe: bool) -> bool:
        """An action or its confirmation that nobody heard, to a member alive that is not listening yet
        (subscribing again after Redis came back, or dead and not found so yet), or that Redis may have
        taken before it failed (`heard_maybe`): sent again soon, for RESENT_FOR. The table's member does
        an action it hears twice once, by its ticket (Visitors.act); one without a ticket (from a member
        of an earlier version) is not sent again when it may have been heard, for it would be done twice.
        Taken as not done, an action done after all was refused to its player ("Not done...") and
        played. A request to sit down (`enter`) is not sent again: by the time it was heard, its person
        may have gone on to another member (tried: a chaos run's players seated from where they no
        longer were, and their table stood 29 s)."""
        if not any(kind in body for kind in RESENT) or member not in self._alive:
            return False
        if heard_maybe and "do" in body and body.get("t") is None:
            return False
        loop = asyncio.get_running_loop()
        resend = self._resending.get(id(body))
        if resend is None:
            resend = self._resending[id(body)] = Resend(body, loop.time() + RESENT_FOR)
        if loop.time() > resend.until:
            return False
        if resend.due is None:  # one sending at a time, however many copies of it failed
            resend.due = loop.call_later(RESEND_EVERY, self._send_again_now, member, body)
        return True

    def _send_again_now(self, member: str, body: dict[str, Any]) -> None:
        resend = self._resending.get(id(body))
        if resend is not None:  # neither delivered nor given up meanwhile
            resend.due = None
            self._direct.append((member, body))
            self._wake.set()

    def _resent_no_more(self, body: dict[str, Any]) -> None:
        resend = self._resending.pop(id(body), None)
        if resend is not None and resend.due is not None:
            resend.due.cancel()

    def _direct_messages(self) -> dict[str, tuple[dict[str, Any], list[dict[str, Any]]]]:
        """The queued messages for single members, one numbered message per member, in order."""
        by_member: dict[str, list[dict[str, Any]]] = {}
        for member, body in self._direct:
            by_member.setdefault(member, []).append(body)
        self._direct = []
        messages = {}
        for member, bodies in by_member.items():
            number = self._direct_sequence[member] = self._direct_sequence.get(member, 0) + 1
            messages[member] = ({"n": number, "b": bodies}, bodies)
        return messages

    def _queue(self, *, part: bool = False, ask: bool = False) -> None:
        self._send_part |= part
        self._ask |= ask
        self._wake.set()

    # --- in -----------------------------------------------------------------------------------

    async def _listen_forever(self) -> None:
        assert self._client is not None
        await calls.subscribed_for_ever(self._client, self._subscribed, "lobby channel", RETRY_SECONDS)

    async def _subscribed(self, pubsub: PubSub) -> None:
        self._opener.listening()
        await calls.subscribed(pubsub, CHANNEL, DIRECT_PREFIX + self._name)
        self._resubscribe.clear()
        # Whatever was said while this member was not listening is asked for again, and the others
        # hear this member's part (they may have dropped it, or never had it).
        self._heard.clear()
        self._waiting_for_part = dict.fromkeys(self._known, asyncio.get_running_loop().time())
        self._queue(part=True, ask=True)
        for member in self._hub.table_peers():  # the tables shared: each side's view again
            self.send_to(member, {"resync": True})
            self._hub.resync_member(member)
        await self._listen(pubsub)

    async def _listen(self, pubsub: PubSub) -> None:
        while not self._resubscribe.is_set():
            self._ask_again()
            message = await pubsub.get_message(timeout=RETRY_SECONDS)
            if message is None or message.get("type") != "message":
                continue
            channel = message["channel"]
            opened = self._opener.open(channel, message["data"])
            if opened is None:  # this member's own, or dropped (and counted)
                continue
            try:
                if opened.restarted:  # what it shared with this member is gone
                    self._gone(opened.sender)
                if channel == CHANNEL:
                    self._take(opened)
                else:
                    self._take_direct(opened)
            except Exception:  # one bad message must not end the lobby for this member
                log.exception("lobby message not taken")

    def _take(self, opened: Opened) -> None:
        member, instance, message = opened.sender, opened.instance, opened.payload
        self._known.setdefault(member, asyncio.get_running_loop().time())
        if message.get("bye"):
            self._gone(member)
            self._opener.retire(member)
            return
        if message.get("ask"):
            self._queue(part=True)
            return
        sequence = message["n"]
        if "part" in message:
            self._hub.take_lobby_part(member, message["part"])
            self._heard[member] = (instance, sequence)
            self._waiting_for_part.pop(member, None)
            return
        heard = self._heard.get(member)
        if heard is None or heard != (instance, sequence - 1):
            if member not in self._waiting_for_part:
                self._waiting_for_part[member] = asyncio.get_running_loop().time()
                log.info("lobby lines of member %r missed; asking for its whole part", member)
                self._queue(ask=True)
            return
        self._heard[member] = (instance, sequence)
        for line, b_only in message["l"]:
            self._hub.take_lobby_line(member, line, b_only)

    def _ask_again(self) -> None:
        """The parts asked for ASK_AGAIN_SECONDS ago and not had are asked for again (one ask for all)."""
        now = asyncio.get_running_loop().time()
        late = [member for member, asked in self._waiting_for_part.items() if now - asked > ASK_AGAIN_SECONDS]
        if late:
            log.info("whole parts of members %r not had; asking again", late)
            self._waiting_for_part.update(dict.fromkeys(late, now))
            self._queue(ask=True)

    def _take_direct(self, opened: Opened) -> None:
        member, instance, message = opened.sender, opened.instance, opened.payload
        number = message["n"]
        heard = self._direct_heard.get(member)
        self._direct_heard[member] = (instance, number)
        for body in message["b"]:
            if self.sessions is not None and not SESSION_MESSAGES.isdisjoint(body):
                self.sessions.take(member, body)
            else:
                self._hub.take_from_member(member, body)
        if heard != (instance, number - 1) and not (heard is None and number == 1):
            log.info("messages of member %r missed; asking it to send its view again", member)
            self.send_to(member, {"resync": True})
            self._hub.missed_from_member(member)  # after this message's answers: what is still unanswered
