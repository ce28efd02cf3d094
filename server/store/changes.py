"""Each tournament's count of changes to its tables, so that an arena's wave reads only the rows changed
since the last (docs/tournaments.md, "What a wave reads").

Every write to a `tournament_tables` row notes it (`note_change`); before its transaction commits,
`stamp_changes` adds one to each noted tournament's count in `tournament_changes` and stamps the rows
with it. The count's row stays locked until the commit, so a tournament's counts commit in the order
they were given: a reader that has seen count N has seen every change counted below N, and the rows
changed after its read all have a count above the highest it read. A sequence or a timestamp has no
such order on PostgreSQL, where a transaction that took its number first may commit last. The counts
are taken last, in the tournaments' order, so that no two transactions wait for each other in a cycle.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import update
from sqlalchemy.orm import Session

from server.store.database import insert_with_on_conflict
from server.store.models import TournamentChange, TournamentTable

_NOTED = "tournament changes"  # the session's info key: tournament -> the uids of its rows changed


def note_change(info: dict[Any, Any], tournament: str, uid: int) -> None:
    """A write changed this tournament's row `uid` (`info`: the session's, sync or async)."""
    info.setdefault(_NOTED, {}).setdefault(tournament, set()).add(uid)


def stamp_changes(session: Session) -> None:
    """Count the noted changes and stamp their rows: the last writes of the transaction."""
    noted: dict[str, set[int]] = session.info.pop(_NOTED, {})
    for tournament in sorted(noted):
        counted = insert_with_on_conflict(session.get_bind().dialect, TournamentChange.__table__)
        count = session.scalar(
            counted.values(tournament=tournament, count=1)
            .on_conflict_do_update(index_elements=["tournament"], set_={"count": TournamentChange.count + 1})
            .returning(TournamentChange.count)
        )
        session.execute(
            update(TournamentTable)
            .where(TournamentTable.uid.in_(sorted(noted[tournament])))
            .values(changed=count)
            .execution_options(synchronize_session=False)
        )
