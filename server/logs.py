"""Log lines an operator can grep and a collector can parse: one line per event, key=value fields.

A line reads `2026-11-24 21:30:00,123 level=INFO logger=server.hub.hub table opened uid=3 blue="AI easy"`:
the time, the level and the logger as fields, the event in a few words, then its fields. A value is
written bare when it is one plain word and in double quotes (JSON escapes) otherwise, so a nick with a
space or a trace with line breaks never splits a line or a field.

A warning or an error that repeats is written once per REPEAT_INTERVAL with a count (RepeatFilter), so
that a flood of the same failure (`accept()` out of files, a database that cannot be written) cannot
fill the disk.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

LOG_FORMAT = "%(asctime)s level=%(levelname)s logger=%(name)s %(message)s"
# Every character str.splitlines() breaks a line on, and the escape it is written as
_LINE_BREAKS = str.maketrans({char: repr(char)[1:-1] for char in "\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"})


def quoted(value: object) -> str:
    """A field's value: bare when it is one plain word, else quoted with JSON's escapes, every character
    that is not printable escaped too (JSON leaves U+2028, U+0085 and the C1 controls as they are, and
    readers break lines on them or terminals obey them)."""
    text = str(value)
    if text and not any(char.isspace() or char in '"=\\' or not char.isprintable() for char in text):
        return text
    written = json.dumps(text, ensure_ascii=False)
    if written.isprintable():
        return written
    return "".join(char if char.isprintable() else json.dumps(char)[1:-1] for char in written)


class Fields:
    """key=value pairs for a log message, formatted only when the line is written."""

    __slots__ = ("values",)

    def __init__(self, **values: object) -> None:
        self.values = values

    def __str__(self) -> str:
        return " ".join(f"{key}={quoted(value)}" for key, value in self.values.items())


class OneLineFormatter(logging.Formatter):
    """LOG_FORMAT, with a record's trace as a `trace=` field and any line break escaped; a storage error's
    trace without the database's messages (server/store/outage.py: they quote the rows refused)."""

    def __init__(self) -> None:
        super().__init__(LOG_FORMAT)

    def formatException(self, ei: Any) -> str:
        # imported here: the bot player's and the command line's start need no SQLAlchemy
        from server.store.outage import holds_storage_error, safe_trace

        error = ei[1]
        if isinstance(error, BaseException) and holds_storage_error(error):
            return safe_trace(error).rstrip("\n")
        return super().formatException(ei)

    def format(self, record: logging.LogRecord) -> str:
        record.message = record.getMessage()
        record.asctime = self.formatTime(record, self.datefmt)
        line = self.formatMessage(record)
        # The trace made here, not one another handler left in exc_text, which may quote the database
        trace = self.formatException(record.exc_info) if record.exc_info else record.exc_text
        if trace:
            line += " trace=" + quoted(trace)
        if record.stack_info:
            line += " stack=" + quoted(self.formatStack(record.stack_info))
        # Messages of other libraries may hold line breaks of their own.
        return line.translate(_LINE_BREAKS)


REPEAT_INTERVAL = 10.0  # seconds
MAX_REPEATING_KINDS = 1_000  # kinds of record followed at once; beyond, a new kind is written as it comes


@dataclass(slots=True)
class _Repeats:
    written_at: float  # when the last line of this kind was written
    left_out: int = 0  # records of this kind not written since
    latest: logging.LogRecord | None = None  # the latest of them


class RepeatFilter(logging.Filter):
    """Write a warning or an error that repeats once per `interval` seconds, with how often it came.

    Records are of one kind when they have the same logger, level and message template (`record.msg`
    before its arguments are filled in, its first line only: asyncio puts an error's context on the lines
    after). The first is written as it comes; the next ones within `interval` are counted, not written;
    the first one after that is written with "(repeated N times in the last T s)", N being the ones left
    out since the line before, and starts a new interval. When the repeats stop, the latest one left out
    is written with that count as soon as anything is logged after the interval. Records below WARNING
    always pass: request lines and the hub's events are distinct events that share their templates.
    """

    def __init__(
        self,
        handler: logging.Handler,
        interval: float = REPEAT_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__()
        self.handler = handler  # where the counts of repeats that stopped are written
        self.interval = interval
        self.clock = clock
        self.kinds: dict[tuple[str, int, str], _Repeats] = {}  # in the order their intervals began
        self.lock = threading.Lock()  # records also come from the database's threads

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "repeats_summary", False):
            return True  # a count this filter writes
        with self.lock:
            now = self.clock()
            passes = record.levelno < logging.WARNING or self._admit(record, now)
            stopped = self._stopped(now)
        for summary in stopped:
            self.handler.handle(summary)
        return passes

    def _admit(self, record: logging.LogRecord, now: float) -> bool:
        key = (record.name, record.levelno, str(record.msg).partition("\n")[0])
        kind = self.kinds.get(key)
        if kind is not None and now - kind.written_at < self.interval:
            kind.left_out += 1
            kind.latest = record
            return False
        if kind is not None:
            del self.kinds[key]  # back in at the end, in the order of the intervals
            if kind.left_out:
                _mark_repeated(record, kind.left_out, now - kind.written_at)
        if len(self.kinds) < MAX_REPEATING_KINDS:
            self.kinds[key] = _Repeats(now)
        return True

    def _stopped(self, now: float) -> list[logging.LogRecord]:
        """The counts of the kinds whose interval is over (the oldest first), which are forgotten."""
        over = []
        for key, kind in self.kinds.items():
            if now - kind.written_at < self.interval:
                break
            over.append(key)
        summaries = []
        for key in over:
            kind = self.kinds.pop(key)
            if kind.latest is not None:
                _mark_repeated(kind.latest, kind.left_out, now - kind.written_at)
                kind.latest.repeats_summary = True
                summaries.append(kind.latest)
        return summaries


def _mark_repeated(record: logging.LogRecord, times: int, seconds: float) -> None:
    record.msg = f"{record.msg} (repeated {times} times in the last {round(seconds)} s)"


def configure(level: str) -> None:
    """Send every logger's records to standard error as one-line records (unless logging is set up),
    repeated warnings and errors once per REPEAT_INTERVAL."""
    handler = logging.StreamHandler()
    handler.setFormatter(OneLineFormatter())
    handler.addFilter(RepeatFilter(handler))
    logging.basicConfig(level=level, handlers=[handler])
    logging.getLogger("alembic.runtime.migration").addFilter(_without_alembic_context)


def _without_alembic_context(record: logging.LogRecord) -> bool:
    """Alembic says which database driver and DDL mode it uses each time it looks at the schema, three
    times at a start; the upgrades it runs are kept, and the server logs the revision it serves once."""
    return not str(record.msg).startswith(("Context impl", "Will assume"))
