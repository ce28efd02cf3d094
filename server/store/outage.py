"""Telling a database that cannot take writes now from a write that is itself bad.

Storage that is unavailable (a full disk, a read-only or locked database, PostgreSQL gone or refusing)
may come back, so what failed is kept and tried again; a write the database refuses for what it holds
(a constraint, a value out of range, a bug in a statement) would fail for ever, so it is set aside.
The reasons are fixed short texts, never a driver's message: those can quote the values written.

Nor does a storage error's own text reach a log line or an admin's terminal: PostgreSQL's DETAIL quotes
the row it refused ("Failing row contains (...)", "Key (...)=(...) already exists"): a chat line, a nick,
an address, an id's hash. `described` tells it by its class, the database's code and the names of the
constraint and table; `safe_trace` is its traceback with that in place of each message of the database.
"""

from __future__ import annotations

import errno
import re
import ssl
import traceback
from collections.abc import Iterator

from sqlalchemy import exc

# SQLite's result codes (`sqlite3.Error.sqlite_errorname`, extended codes reduced to their primary one)
_SQLITE = {
    "SQLITE_FULL": "disk full",
    "SQLITE_READONLY": "database is read-only",
    "SQLITE_BUSY": "database is locked",
    "SQLITE_LOCKED": "database is locked",
    "SQLITE_CANTOPEN": "cannot open the database file",
    "SQLITE_IOERR": "disk I/O error",
    "SQLITE_NOMEM": "out of memory",
    "SQLITE_PERM": "permission denied",
    "SQLITE_AUTH": "permission denied",
    "SQLITE_CORRUPT": "database file is damaged",
    "SQLITE_NOTADB": "database file is damaged",
    "SQLITE_PROTOCOL": "database is locked",
}
_DISK = {errno.ENOSPC: "disk full", errno.EROFS: "read-only file system", errno.EIO: "disk I/O error"}
# PostgreSQL's SQLSTATEs: the exact codes first, then the classes (their first two characters)
_POSTGRES = {
    "53100": "disk full",
    "25006": "database is read-only",
    "42501": "permission denied",
    "57P01": "server shut down",
    "57P02": "server crashed",
    "57P03": "server not accepting connections",
    "3D000": "database does not exist",
}
_POSTGRES_CLASSES = {
    "08": "connection failed",
    "25": "transaction failed",
    "28": "login refused",
    "40": "transaction conflict",
    "53": "server out of resources",
    "55": "server not accepting writes",
    "57": "server stopped the statement",
    "58": "server I/O error",
    "XX": "server internal error",
}


def unavailable(error: BaseException) -> str | None:
    """Why storage cannot take writes now, when `error` says so; None when the write itself is bad."""
    if isinstance(error, exc.DBAPIError):
        original = error.orig
        sqlstate = getattr(original, "sqlstate", None)  # PostgreSQL (asyncpg)
        if isinstance(sqlstate, str) and sqlstate:
            reason = _POSTGRES.get(sqlstate) or _POSTGRES_CLASSES.get(sqlstate[:2])
            return f"{reason} ({sqlstate})" if reason else None
        name = getattr(original, "sqlite_errorname", None)  # SQLite
        if isinstance(name, str):
            primary = "_".join(name.split("_")[:2])
            if primary in _SQLITE:
                return _SQLITE[primary]
        if error.connection_invalidated or isinstance(error, exc.InterfaceError):
            return "connection lost"
        if isinstance(error, exc.OperationalError):  # e.g. SQLite's "no such table": nothing can be written
            return f"database error ({name or type(original).__name__})"
        return None
    if isinstance(error, exc.TimeoutError):
        return "no database connection free"
    if isinstance(error, TimeoutError):
        return "timed out"
    if isinstance(error, ssl.SSLCertVerificationError):  # asyncpg with ?ssl=verify-full or verify-ca
        return "its TLS certificate is not trusted: see PGSSLROOTCERT"
    if isinstance(error, OSError):  # connecting (refused, no socket, no route) or the disk itself
        if error.errno in _DISK:
            return _DISK[error.errno]
        name = errno.errorcode.get(error.errno or 0)
        return f"cannot reach the database ({name})" if name else "connection lost"
    return None


# What PostgreSQL names of an error besides its code (asyncpg's PostgresError's fields), in this order
_POSTGRES_NAMES = ("schema_name", "table_name", "column_name", "constraint_name")
# The names SQLite's message for a constraint gives ("NOT NULL constraint failed: sessions.nick")
_SQLITE_NAMES = re.compile(r"constraint failed: ([\w.]+(?:, [\w.]+)*)$")


def described(error: BaseException) -> str:
    """A storage error as a log line or an admin's terminal may show it, one line: its class, the
    driver's class, PostgreSQL's SQLSTATE or SQLite's result code, and the constraint, table and column
    the database names; never its message nor the statement's values."""
    parts = [type(error).__name__]
    for cause in _below(error):
        parts.append(type(cause).__name__)
        sqlstate = getattr(cause, "sqlstate", None)
        if isinstance(sqlstate, str) and f"sqlstate={sqlstate}" not in parts:
            parts.append(f"sqlstate={sqlstate}")
        for field in _POSTGRES_NAMES:
            name = getattr(cause, field, None)
            if isinstance(name, str) and name:
                parts.append(f"{field.removesuffix('_name')}={name}")
        sqlite = getattr(cause, "sqlite_errorname", None)
        if isinstance(sqlite, str):
            parts.append(f"sqlite={sqlite}")
            if sqlite.startswith("SQLITE_CONSTRAINT") and (names := _SQLITE_NAMES.search(str(cause))):
                parts.append(f"on={names[1].replace(' ', '')}")
    return " ".join(dict.fromkeys(parts))


def unique_violation(error: BaseException) -> bool:
    """Whether `error` is a unique index refusing a row whose value another row holds (a name taken):
    PostgreSQL's SQLSTATE 23505, SQLite's SQLITE_CONSTRAINT_UNIQUE; not a CHECK, NOT NULL or foreign key
    refusal, which are bugs to be told as such rather than as a name taken."""
    if not isinstance(error, exc.IntegrityError):
        return False
    for cause in _below(error):
        if getattr(cause, "sqlstate", None) == "23505":
            return True
        name = getattr(cause, "sqlite_errorname", None)
        if name == "SQLITE_CONSTRAINT_UNIQUE":
            return True
        if name is None and str(cause).startswith("UNIQUE constraint failed"):  # a driver without codes
            return True
    return False


def _below(error: BaseException) -> Iterator[BaseException]:
    """The driver's exceptions under a SQLAlchemy error: `orig`, and what that one was raised from."""
    cause = error.orig if isinstance(error, exc.DBAPIError) else None
    seen: set[int] = set()
    while isinstance(cause, BaseException) and id(cause) not in seen:
        seen.add(id(cause))
        yield cause
        cause = cause.__cause__


def safe_trace(error: BaseException) -> str:
    """`error`'s traceback as Python writes it, except that from the first storage error down the
    chain each exception's message is `described` instead: the database's text stays out."""
    parts: list[str] = []
    of_storage = False
    for exception, link in _chain(error):  # the newest first; Python writes the oldest first
        of_storage = of_storage or isinstance(exception, exc.DBAPIError)
        if of_storage:
            last = described(exception) + "\n"
        else:
            last = "".join(traceback.format_exception_only(exception))
        stack = "".join(traceback.format_tb(exception.__traceback__))
        head = f"Traceback (most recent call last):\n{stack}" if stack else ""
        parts.insert(0, (f"\n{link}\n\n" if link else "") + head + last)
    return "".join(parts)


def holds_storage_error(error: BaseException) -> bool:
    """Whether `error` is a storage error or came from one (its cause or its context)."""
    return any(isinstance(exception, exc.DBAPIError) for exception, _ in _chain(error))


def _chain(error: BaseException) -> Iterator[tuple[BaseException, str]]:
    """`error` and those it came from, the newest first, each with how it came from the next one."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if current.__cause__ is not None:
            yield current, "The above exception was the direct cause of the following exception:"
            current = current.__cause__
        elif current.__context__ is not None and not current.__suppress_context__:
            yield current, "During handling of the above exception, another exception occurred:"
            current = current.__context__
        else:
            yield current, ""
            current = None
