"""How a member calls Redis: every call bounded, no retries inside the client, and the one Python 3.11
pitfall of cancelling such calls handled; shared by membership, the lobby link and the hourly counts' link."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.client import PubSub
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError

log = logging.getLogger(__name__)

CALL_TIMEOUT = 1.0  # seconds one call to Redis may take, so an unreachable Redis never stalls a member
# seconds Redis's answer to a subscription is waited for (`subscribed`): a connection whose Redis died
# fails at once, and a slow answer is better waited for than given up (which unsubscribes)
SUBSCRIBED_WITHIN = 10 * CALL_TIMEOUT
UNREACHABLE = (RedisError, OSError, TimeoutError)


def client(url: str, *, socket_timeout: float | None = CALL_TIMEOUT) -> Redis:
    """A client that fails fast: the caller's own loop (a heartbeat, a resubscription) is the retry.
    A subscriber passes no socket time-out: it waits for messages as long as the channel is quiet.
    What is read is text, and bytes that are not UTF-8 (anyone who can reach Redis can write them) become
    U+FFFD instead of an exception that would end the loop reading them."""
    return Redis.from_url(
        url,
        decode_responses=True,
        encoding_errors="replace",
        socket_connect_timeout=CALL_TIMEOUT,
        socket_timeout=socket_timeout,
        retry=Retry(NoBackoff(), 0),
    )


async def bounded(call: Awaitable[Any]) -> Any:
    """Awaits one call to Redis, bounded even where the client's socket timeouts do not reach."""
    async with asyncio.timeout(CALL_TIMEOUT):
        return await call


async def subscribed(pubsub: PubSub, *channels: str) -> None:
    """Subscribes, once Redis says so (bounded). redis-py's subscribe() only writes the command, and its
    pool hands out an idle connection unchecked (8.1.0 with maintenance notifications "auto", the
    default; upstream: redis/redis-py#4252, PR #4260): on one whose Redis had died, the write succeeds
    and nothing is subscribed. A member so took itself for subscribed again while Redis was down, and
    sent again, a second time, what its people had sent other members' tables (most likely what had a
    move told "Not done" played: server/cluster/lobby.py, send_to). `pubsub` must not ignore subscribe
    messages: the first is the answer."""
    await bounded(pubsub.subscribe(*channels))
    async with asyncio.timeout(SUBSCRIBED_WITHIN):
        while True:
            message = await pubsub.get_message(timeout=CALL_TIMEOUT)
            if message is not None and message["type"] == "subscribe":
                return


async def subscribed_for_ever(
    client: Redis, listen: Callable[[PubSub], Awaitable[None]], what: str, retry_every: float
) -> None:
    """`listen` on a new subscription of `client`'s, again every `retry_every` seconds after it ended:
    Redis unreachable (a debug line: membership says so once) or anything else (logged whole), this
    member must go on hearing the others. `what`: the channel, as the log names it."""
    while True:
        pubsub = client.pubsub()  # its subscribe messages are read (`subscribed`)
        try:
            await listen(pubsub)
        except UNREACHABLE as error:
            log.debug("%s not reachable: %s", what, error)
        except Exception:
            log.exception("%s failed; subscribing again", what)
        finally:
            try:
                await bounded(pubsub.aclose())
            except UNREACHABLE:
                pass
        stop_if_cancelled()
        await asyncio.sleep(retry_every)


def stop_if_cancelled() -> None:
    """Ends a task whose cancellation a call swallowed: redis-py sends with asyncio.wait_for, which on
    Python 3.11 returns normally when the send completes as its task is cancelled (CPython gh-86296);
    a loop that went on would keep stop() waiting for ever."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


async def cancel(*tasks: asyncio.Task[None] | None) -> None:
    """Ends a part's loops, waiting until they are done (see stop_if_cancelled)."""
    running = [task for task in tasks if task is not None]
    for task in running:
        task.cancel()
    if running:
        await asyncio.wait(running)


async def farewell(client: Redis | None, call: Callable[[Redis], Awaitable[Any]], what: str) -> None:
    """A stopping part's last word to Redis (bounded), then its client closed; an unreachable Redis
    only costs the word, which the others make up for when this member's keys expire."""
    if client is None:
        return
    try:
        await bounded(call(client))
    except UNREACHABLE as error:
        log.debug("%s not sent: %s", what, str(error) or type(error).__name__)
    finally:
        await client.aclose()
