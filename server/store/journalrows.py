"""The journals' rows: which rows are one journal, entries inserted a page at a time, and an entry that
cannot be replayed set aside."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from server.logs import Fields
from server.store.models import JournalEntry, JournalSetAside
from server.store.paging import insert_pages

log = logging.getLogger(__name__)


@dataclass
class Entry:
    """One entry of journal `uid`, as the hub queues it and as its row holds it."""

    uid: int
    seq: int
    kind: str
    data: dict[str, Any]


def journal_of(uid: int, member: int) -> list[Any]:
    """Which rows are journal `uid`: a table's are all its own, whoever wrote them (its owner may have
    changed); the lobby's chat, private chat and the sessions' k (uid <= 0) are each member's own."""
    if uid > 0:
        return [JournalEntry.uid == uid]
    return [JournalEntry.uid == uid, JournalEntry.member == member]


def insert_entries(session: Session, entries: list[Entry], member: int) -> None:
    """Insert `member`'s journal entries; one already written (same table and number) is left as it is."""
    if not entries:
        return
    rows = [
        {"member": member, "uid": e.uid, "seq": e.seq, "kind": e.kind, "data": json.dumps(e.data)}
        for e in entries
    ]
    insert_pages(session, JournalEntry, rows, "or skip", lambda insert: insert.on_conflict_do_nothing())


def set_aside(
    session: Session, member: int, uid: int, seq: int, reason: str, row: tuple[str, str] | None = None
) -> None:
    """Move one journal entry to journal_set_aside (`row`: its kind and data, when already read)."""
    where = [*journal_of(uid, member), JournalEntry.seq == seq]
    if row is None:
        entry = session.scalars(select(JournalEntry).where(*where)).first()
        if entry is None:
            return
        row = (entry.kind, entry.data)
    kind, data = row
    session.add(
        JournalSetAside(
            member=member,
            uid=uid,
            seq=seq,
            kind=kind,
            data=data,
            reason=reason[:300],
            set_aside_at=datetime.now(UTC),
        )
    )
    session.execute(delete(JournalEntry).where(*where))
    log.warning("journal entry set aside %s", Fields(uid=uid, seq=seq, kind=kind, reason=reason[:300]))
