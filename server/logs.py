"""Log lines an operator can grep and a collector can parse: one line per event, key=value fields.

A line reads `2026-11-24 21:30:00,123 level=INFO logger=server.hub.hub table opened uid=3 blue="AI easy"`:
the time, the level and the logger as fields, the event in a few words, then its fields. A value is
written bare when it is one plain word and in double quotes (JSON escapes) otherwise, so a nick with a
space or a trace with line breaks never splits a line or a field.
"""

from __future__ import annotations

import json
import logging

LOG_FORMAT = "%(asctime)s level=%(levelname)s logger=%(name)s %(message)s"


def quoted(value: object) -> str:
    """A field's value: bare when it is one plain word, else quoted with JSON's escapes."""
    text = str(value)
    if text and not any(char.isspace() or char in '"=\\' or not char.isprintable() for char in text):
        return text
    return json.dumps(text, ensure_ascii=False)


class Fields:
    """key=value pairs for a log message, formatted only when the line is written."""

    __slots__ = ("values",)

    def __init__(self, **values: object) -> None:
        self.values = values

    def __str__(self) -> str:
        return " ".join(f"{key}={quoted(value)}" for key, value in self.values.items())


class OneLineFormatter(logging.Formatter):
    """LOG_FORMAT, with a record's trace as a `trace=` field and any line break escaped."""

    def __init__(self) -> None:
        super().__init__(LOG_FORMAT)

    def format(self, record: logging.LogRecord) -> str:
        record.message = record.getMessage()
        record.asctime = self.formatTime(record, self.datefmt)
        line = self.formatMessage(record)
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            line += " trace=" + quoted(record.exc_text)
        if record.stack_info:
            line += " stack=" + quoted(self.formatStack(record.stack_info))
        # Messages of other libraries may hold line breaks of their own.
        return line.replace("\r", "\\r").replace("\n", "\\n")


def configure(level: str) -> None:
    """Send every logger's records to standard error as one-line records (unless logging is set up)."""
    handler = logging.StreamHandler()
    handler.setFormatter(OneLineFormatter())
    logging.basicConfig(level=level, handlers=[handler])
