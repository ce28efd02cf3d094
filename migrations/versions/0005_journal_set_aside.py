"""journal_set_aside: journal entries a start could not read or replay, kept for inspection

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-25 12:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "journal_set_aside",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("uid", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=20), nullable=False),
        sa.Column("data", sa.Text(), nullable=False),
        sa.Column("reason", sa.String(length=300), nullable=False),
        sa.Column("set_aside_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("journal_set_aside", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_journal_set_aside_uid"), ["uid"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("journal_set_aside", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_journal_set_aside_uid"))
    op.drop_table("journal_set_aside")
