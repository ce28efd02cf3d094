"""Telling a database that cannot take writes now from a write that is itself bad.

Storage that is unavailable (a full disk, a read-only or locked database, PostgreSQL gone or refusing)
may come back, so what failed is kept and tried again; a write the database refuses for what it holds
(a constraint, a value out of range, a bug in a statement) would fail for ever, so it is set aside.
The reasons are fixed short texts, never a driver's message: those can quote the values written.
"""

from __future__ import annotations

import errno
import ssl

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
