"""users: an account's number is never given again on SQLite (AUTOINCREMENT), so that two deleted
accounts never share the name `deleted<number>` (docs/operations.md, "Accounts (admins)")

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-02 06:00:00.000000

Without AUTOINCREMENT SQLite gave a new account the number of the newest one deleted: deleting that
account too named both players `deleted<n>` in the archive and in tournaments, and listed both players'
games under that name. The copy of `users` starts its count past every number in use, and past every
number a deleted account's name still shows. PostgreSQL's sequences never give a number twice: nothing
changes there.
"""

from __future__ import annotations

import re

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None

# a deleted account's name, or one of its tournament entries' (`deleted<n>.2`); sides of a team joined
# by ", "
DELETED_NAME = re.compile(r"deleted([0-9]+)(?:\.[0-9]+)?", re.IGNORECASE)
NAMED_BY = {
    "games": ("blue_nick", "red_nick"),
    "game_players": ("nick",),
    "hosted_entries": ("nick",),
    "tournament_tables": ("blue", "red"),
}


def highest_deleted_number(connection: sa.Connection) -> int:
    """The highest account number that a deleted account's name shows anywhere; 0 for none."""
    highest = 0
    for name, columns in NAMED_BY.items():
        for column in columns:
            rows = connection.execute(
                sa.text(f"SELECT {column} FROM {name} WHERE lower({column}) LIKE '%deleted%'")
            )
            for (value,) in rows:
                for nick in value.split(", "):
                    found = DELETED_NAME.fullmatch(nick)
                    if found:
                        highest = max(highest, int(found.group(1)))
    return highest


def upgrade() -> None:
    connection = op.get_bind()
    if connection.dialect.name != "sqlite":
        return
    with op.batch_alter_table("users", recreate="always", table_kwargs={"sqlite_autoincrement": True}):
        pass
    highest = highest_deleted_number(connection)
    # the copy counted from the highest number it holds; a row is there only if it held one
    connection.execute(
        sa.text("UPDATE sqlite_sequence SET seq = :highest WHERE name = 'users' AND seq < :highest"),
        {"highest": highest},
    )
    connection.execute(
        sa.text(
            "INSERT INTO sqlite_sequence (name, seq) SELECT 'users', :highest"
            " WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'users')"
        ),
        {"highest": highest},
    )


def downgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    with op.batch_alter_table("users", recreate="always", table_kwargs={"sqlite_autoincrement": False}):
        pass
