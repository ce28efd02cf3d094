"""users: the nicks an account had before (an admin's renames), so that a login tells the other members
of a cluster to move its seats only when it has a seat to move

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-02 14:10:00.000000

A registered player's login sent every other member of a cluster a `renamed` message, so that a seat
its account had there under an earlier nick moved to the new one (docs/cluster.md, "Tables across
members"): every login, renamed or not. Now the member sends it only to a member whose tables seat one
of the account's earlier nicks, which `users.former` lists (their nick keys, oldest first). An account
renamed before this revision gets the nick it logs in with, its first; a nick it had in between is not
known, and a seat under it at another member's table no longer moves (docs/operations.md, "Accounts").
"""

from __future__ import annotations

import json

import sqlalchemy as sa
from alembic import op

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # a column added in place, not through a copy of the table (batch mode): SQLite's copy would lose
    # AUTOINCREMENT's count of the numbers given (0017)
    op.add_column("users", sa.Column("former", sa.Text(), server_default="[]", nullable=False))
    connection = op.get_bind()
    renamed = connection.execute(sa.text("SELECT id, login_key FROM users WHERE login_key <> nick_key"))
    for number, login_key in renamed.all():
        connection.execute(
            sa.text("UPDATE users SET former = :former WHERE id = :id"),
            {"former": json.dumps([login_key]), "id": number},
        )


def downgrade() -> None:
    connection = op.get_bind()
    if connection.dialect.name != "sqlite":
        op.drop_column("users", "former")
        return
    # SQLite drops a column through a copy of the table, which counts its numbers again from the highest
    # it holds: the count of the numbers given (0017) is set back after it
    given = connection.execute(sa.text("SELECT seq FROM sqlite_sequence WHERE name = 'users'")).scalar()
    with op.batch_alter_table("users", table_kwargs={"sqlite_autoincrement": True}) as batch_op:
        batch_op.drop_column("former")
    if given is not None:
        connection.execute(sa.text("DELETE FROM sqlite_sequence WHERE name = 'users'"))
        connection.execute(
            sa.text("INSERT INTO sqlite_sequence (name, seq) VALUES ('users', :given)"), {"given": given}
        )
