"""ignored players: the players each registered player ignores, and a guest's with its session

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-02 09:00:00.000000

Nobody ignored anybody before this revision: the new table starts empty and every session's list too.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "ignored_players",
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("nick_key", sa.String(length=80), nullable=False),
        sa.Column("nick", sa.String(length=40), nullable=False),
        sa.Column("ignored_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("user_id", "nick_key"),
    )
    with op.batch_alter_table("sessions") as batch_op:
        batch_op.add_column(sa.Column("ignored", sa.Text(), server_default="[]", nullable=False))


def downgrade() -> None:
    with op.batch_alter_table("sessions") as batch_op:
        batch_op.drop_column("ignored")
    op.drop_table("ignored_players")
