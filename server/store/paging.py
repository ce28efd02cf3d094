"""Many rows in few statements: an INSERT or UPDATE of many rows runs as a page of a multi-row
statement at a time, each page size compiled once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import bindparam
from sqlalchemy.orm import Session

from server.store.database import insert_with_on_conflict

# A multi-row INSERT carries at most PAGE_ROWS rows and PAGE_PARAMETERS values: SQLite before 3.32 takes
# no more than 999 (PostgreSQL 32,767)
PAGE_ROWS = 128
PAGE_PARAMETERS = 999


def insert_into(session: Session, model: type[Any]) -> Any:
    """The dialect's INSERT, which has ON CONFLICT on both SQLite and PostgreSQL.

    Of the model's table, not the model: the ORM's bulk insert would sort and check every row (a quarter
    of the CPU a journal row cost; issue 19.2)."""
    return insert_with_on_conflict(session.get_bind().dialect, model.__table__)


def insert_pages(
    session: Session,
    model: type[Any],
    rows: list[dict[str, Any]],
    conflict: str,
    on_conflict: Callable[[Any], Any],
) -> None:
    """INSERT rows (all with the same keys) with a multi-row VALUES, a page at a time; `conflict` names
    what `on_conflict` adds, for the statements' cache."""
    columns = tuple(rows[0])

    def page(size: int) -> Any:
        insert = insert_into(session, model)
        return on_conflict(insert.values([{c: bindparam(f"{c}_{i}") for c in columns} for i in range(size)]))

    in_pages(session, ("insert", model.__tablename__, columns, conflict), rows, len(columns), page)


def in_pages(
    session: Session,
    kind: tuple[Any, ...],
    rows: list[dict[str, Any]],
    per_row: int,
    page: Callable[[int], Any],
) -> None:
    """Run one statement per page of rows: `page(size)` is the statement for `size` rows, whose i-th row's
    value of `column` is bound as `{column}_{i}` (`per_row` parameters a row); `kind` names it.

    Not executemany: the sqlite3 driver lets go of the GIL around every row it steps, and the store's
    thread then waits up to a switch interval (5 ms) to get it back from a busy event loop, so 500 rows
    took 0.1-1.5 s of a loaded server and every move waited for them (issue 19.2); a page is one step.
    Pages have 2**n rows, so that few sizes exist: SQLAlchemy does not cache statements with many rows
    of VALUES, so each size is compiled once, here, and run as the driver's SQL."""
    connection = session.connection()
    most = min(PAGE_ROWS, 1 << ((PAGE_PARAMETERS // per_row).bit_length() - 1))
    start = 0
    while start < len(rows):
        size = min(most, 1 << ((len(rows) - start).bit_length() - 1))
        key = (connection.dialect.name, connection.dialect.driver, kind, size)  # drivers' paramstyles differ
        if key not in _pages:
            compiled = page(size).compile(dialect=connection.dialect)
            _pages[key] = (compiled.string, tuple(compiled.positiontup) if compiled.positional else None)
        sql, order = _pages[key]
        values = {
            f"{name}_{i}": value
            for i, row in enumerate(rows[start : start + size])
            for name, value in row.items()
        }
        connection.exec_driver_sql(
            sql, tuple(values[name] for name in order) if order is not None else values
        )
        start += size


# (dialect, driver, kind, page size) -> the driver's SQL and, if positional, its parameters' order
_pages: dict[tuple[Any, ...], tuple[str, tuple[str, ...] | None]] = {}
