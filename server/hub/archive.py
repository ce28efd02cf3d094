"""Where finished games go. Until the database store exists, games are kept in memory behind the
same interface, numbered from 1."""

from __future__ import annotations

from typing import Protocol

from server.engine.sgf import GameRecord, write_record


class Archive(Protocol):
    def store(self, record: GameRecord) -> int:
        """Keep a finished game's record; return its archive number."""
        ...


class MemoryArchive:
    def __init__(self) -> None:
        self.records: dict[int, str] = {}

    def store(self, record: GameRecord) -> int:
        number = len(self.records) + 1
        self.records[number] = write_record(record)
        return number
