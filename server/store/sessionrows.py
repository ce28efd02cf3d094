"""The live sessions' rows and the server's own values (server_state): a saved session to its row and
back, many sessions' rows in a few statements, the heartbeat."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import BigInteger, bindparam, case, cast, update
from sqlalchemy.orm import Session

from server.hub.persistence import SavedSession, SessionOrigin
from server.store.models import LiveSession, ServerState
from server.store.paging import in_pages, insert_pages

# server_state rows
HMAC_KEY = "session_hmac_key"  # hex of 32 random bytes, made at the first start
EVENT_MARK = "event_mark"  # every event number handed out so far, by any member, is at most this
ALIVE_AT = "alive_at"  # the last heartbeat (wall time), written with the sessions' quiet_since


def alive_at_key(member: int) -> str:
    """Each member's own last heartbeat: a member restarting counts its sessions' quiet time to it, not
    to the heartbeats the other members of its cluster wrote while it was down. A server alone (member
    0) keeps the name it always had."""
    return ALIVE_AT if member == 0 else f"{ALIVE_AT}:{member}"


def saved_session(row: LiveSession) -> SavedSession:
    return SavedSession(
        id_hmac=row.id_hmac,
        nick=row.nick,
        lang=row.lang,
        registered=row.registered,
        free=row.free,
        client=row.client,
        tables=tuple(json.loads(row.tables)),
        blocked=tuple(json.loads(row.blocked)),
        last_command=row.last_command,
        quiet_since=row.quiet_since,
        origin=_session_origin(row.origin),
        ignored=tuple(json.loads(row.ignored)),
    )


def _session_origin(text: str | None) -> SessionOrigin:
    if not text:
        return SessionOrigin()
    data = json.loads(text)
    return SessionOrigin(data["host"], data["network"], tuple(data["networks"]), data["unlimited"])


def _origin_text(origin: SessionOrigin) -> str | None:
    if origin == SessionOrigin():
        return None
    return json.dumps(
        {
            "host": origin.host,
            "network": origin.network,
            "networks": list(origin.networks),
            "unlimited": origin.unlimited,
        }
    )


def save_sessions(session: Session, saved: dict[str, SavedSession], member: int) -> None:
    """Insert or update session rows, as `member`'s (a session saved by another member has moved to it);
    `quiet_since` changes only with the heartbeat (`heartbeat`)."""
    if not saved:
        return
    rows = [
        {
            "id_hmac": s.id_hmac,
            "nick": s.nick,
            "lang": s.lang,
            "registered": s.registered,
            "free": s.free,
            "client": s.client,
            "tables": json.dumps(list(s.tables)),
            "blocked": json.dumps(list(s.blocked)),
            "ignored": json.dumps(list(s.ignored)),
            "last_command": s.last_command,
            "quiet_since": None,
            "owner": member,
            "origin": _origin_text(s.origin),
        }
        for s in saved.values()
    ]
    kept = [name for name in rows[0] if name not in ("id_hmac", "quiet_since")]
    insert_pages(
        session,
        LiveSession,
        rows,
        "upsert",
        lambda insert: insert.on_conflict_do_update(
            index_elements=["id_hmac"], set_={name: insert.excluded[name] for name in kept}
        ),
    )


def heartbeat(
    session: Session, member: int, alive_at: float, quiet: dict[str, float | None], k: dict[str, int]
) -> None:
    """The member's heartbeat's wall time, with when each session not polling then went quiet (None:
    polling) and the sessions' k that changed since the last one."""
    set_state(session, {alive_at_key(member): repr(alive_at)})
    _set_column(session, "quiet_since", quiet)
    # k alone: the whole rows of thousands of sessions, every 5 s, held every move behind them (19.2)
    _set_column(session, "last_command", k)


def _set_column(session: Session, column: str, values: dict[str, Any]) -> None:
    """One column of many sessions' rows (id HMAC -> value), by pages of one UPDATE each."""
    if not values:
        return
    table = LiveSession.__table__
    value_type = table.c[column].type  # last_command's is a big integer: an int32 overflows on PostgreSQL

    def page(size: int) -> Any:
        keys = [bindparam(f"key_{i}") for i in range(size)]
        value = case(
            *((table.c.id_hmac == keys[i], bindparam(f"value_{i}", type_=value_type)) for i in range(size))
        )
        return update(table).where(table.c.id_hmac.in_(keys)).values({column: value})

    rows = [{"key": key, "value": value} for key, value in values.items()]
    in_pages(session, (column, table.name), rows, 3, page)


def set_state(session: Session, values: dict[str, str]) -> None:
    """Through `insert_pages`, whose statements are built once: an upsert built at every heartbeat made
    its `excluded` alias of the table anew, SQLAlchemy objects in reference cycles that only the full
    collection frees (issue 19.2)."""
    insert_pages(
        session,
        ServerState,
        [{"name": name, "value": value} for name, value in values.items()],
        "upsert",
        lambda insert: insert.on_conflict_do_update(
            index_elements=["name"], set_={"value": insert.excluded.value}
        ),
    )


def raise_event_mark(session: Session, mark: int) -> None:
    """The mark goes up only: members of a cluster share it, and one restarting must number its events
    above every number it handed out, also when a quieter member wrote its lower mark last."""
    insert_pages(
        session,
        ServerState,
        [{"name": EVENT_MARK, "value": str(mark)}],
        "raise",
        lambda insert: insert.on_conflict_do_update(
            index_elements=["name"],
            set_={
                "value": case(
                    (
                        cast(ServerState.value, BigInteger) > cast(insert.excluded.value, BigInteger),
                        ServerState.value,
                    ),
                    else_=insert.excluded.value,
                )
            },
        ),
    )
