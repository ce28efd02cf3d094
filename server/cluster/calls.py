"""How a member calls Redis: every call bounded, no retries inside the client, and the one Python 3.11
pitfall of cancelling such calls handled; shared by membership and the lobby link."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError

CALL_TIMEOUT = 1.0  # seconds one call to Redis may take, so an unreachable Redis never stalls a member
UNREACHABLE = (RedisError, OSError, TimeoutError)


def client(url: str, *, socket_timeout: float | None = CALL_TIMEOUT) -> Redis:
    """A client that fails fast: the caller's own loop (a heartbeat, a resubscription) is the retry.
    A subscriber passes no socket time-out: it waits for messages as long as the channel is quiet."""
    return Redis.from_url(
        url,
        decode_responses=True,
        socket_connect_timeout=CALL_TIMEOUT,
        socket_timeout=socket_timeout,
        retry=Retry(NoBackoff(), 0),
    )


async def bounded(call: Awaitable[Any]) -> Any:
    """Awaits one call to Redis, bounded even where the client's socket timeouts do not reach."""
    async with asyncio.timeout(CALL_TIMEOUT):
        return await call


def stop_if_cancelled() -> None:
    """Ends a task whose cancellation a call swallowed: redis-py sends with asyncio.wait_for, which on
    Python 3.11 returns normally when the send completes as its task is cancelled (CPython gh-86296);
    a loop that went on would keep stop() waiting for ever."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError
