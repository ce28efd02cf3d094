"""cluster members: who owns each live table, session and journal, so that several servers share one database

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-27 09:00:00.000000

Member 0 is a server that runs alone (no --redis-url): everything already stored is its.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "members",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("joined_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("name"),
    )
    # The journal's key gains the member: the lobby's chat, private chat and the sessions' journal are
    # each member's own; a table's entries are its owner's.
    _journal_key(["member", "uid", "seq"])
    with op.batch_alter_table("journal_set_aside") as batch_op:
        batch_op.add_column(sa.Column("member", sa.Integer(), nullable=False, server_default="0"))
    with op.batch_alter_table("tables") as batch_op:
        batch_op.add_column(sa.Column("owner", sa.Integer(), nullable=False, server_default="0"))
    with op.batch_alter_table("sessions") as batch_op:
        batch_op.add_column(sa.Column("owner", sa.Integer(), nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("sessions") as batch_op:
        batch_op.drop_column("owner")
    with op.batch_alter_table("tables") as batch_op:
        batch_op.drop_column("owner")
    with op.batch_alter_table("journal_set_aside") as batch_op:
        batch_op.drop_column("member")
    op.execute("DELETE FROM journal WHERE member <> 0")
    _journal_key(["uid", "seq"])
    op.drop_table("members")


def _journal_key(key: list[str]) -> None:
    """The journal with `key` as its primary key, with or without the member column. SQLite cannot
    change a key in place: a new table takes the rows (Alembic's batch mode would warn that the
    reflected key differs)."""
    with_member = "member" in key
    if op.get_bind().dialect.name != "sqlite":
        if with_member:
            op.add_column("journal", sa.Column("member", sa.Integer(), nullable=False, server_default="0"))
        op.drop_constraint("journal_pkey", "journal", type_="primary")
        op.create_primary_key("journal_pkey", "journal", key)
        if not with_member:
            op.drop_column("journal", "member")
        return
    columns = [
        sa.Column("uid", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=20), nullable=False),
        sa.Column("data", sa.Text(), nullable=False),
    ]
    if with_member:
        columns.insert(0, sa.Column("member", sa.Integer(), nullable=False, server_default="0"))
    op.create_table("journal_new", *columns, sa.PrimaryKeyConstraint(*key))
    op.execute("INSERT INTO journal_new (uid, seq, kind, data) SELECT uid, seq, kind, data FROM journal")
    op.drop_table("journal")
    op.rename_table("journal_new", "journal")
