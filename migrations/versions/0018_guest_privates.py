"""users: an account may refuse private lines from guests (docs/protocol.md, "Private lines from guests")

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-02 08:30:00.000000

Guests cost nothing to make and a new one comes at every start of a client, so no list of the ignored
keeps a flood of them out. Every account stored before this revision takes their lines, as it did.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # a column added in place, not through a copy of the table (batch mode): SQLite's copy would lose
    # AUTOINCREMENT's count of the numbers given (0017)
    op.add_column(
        "users", sa.Column("refuses_guest_privates", sa.Boolean(), server_default=sa.false(), nullable=False)
    )


def downgrade() -> None:
    connection = op.get_bind()
    if connection.dialect.name != "sqlite":
        op.drop_column("users", "refuses_guest_privates")
        return
    # SQLite drops a column through a copy of the table, which counts its numbers again from the highest
    # it holds: the count of the numbers given (0017) is set back after it
    given = connection.execute(sa.text("SELECT seq FROM sqlite_sequence WHERE name = 'users'")).scalar()
    with op.batch_alter_table("users", table_kwargs={"sqlite_autoincrement": True}) as batch_op:
        batch_op.drop_column("refuses_guest_privates")
    if given is not None:
        connection.execute(sa.text("DELETE FROM sqlite_sequence WHERE name = 'users'"))
        connection.execute(
            sa.text("INSERT INTO sqlite_sequence (name, seq) VALUES ('users', :given)"), {"given": given}
        )
