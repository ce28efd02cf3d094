"""The store's times as the director reads them: wall-clock seconds, which its hub's clock also gives."""

from __future__ import annotations

from datetime import datetime

from server.store.database import as_utc
from server.store.hosted import Entry, Settings


def arena_end(settings: Settings) -> float:
    return wall(settings.starts_at) + settings.minutes * 60


def wall(moment: datetime) -> float:
    """Seconds since the epoch of a time read back from the store."""
    return as_utc(moment).timestamp()


def joined(entries: list[Entry]) -> dict[str, float]:
    return {entry.nick: wall(entry.registered_at) for entry in entries}
