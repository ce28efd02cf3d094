"""tournament tables: each tournament's count of changes, and the count each row was last written at

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-02 14:20:00.000000

An arena's wave reads only its tournament's rows changed since the last wave (server/store/changes.py,
docs/tournaments.md "What a wave reads"). Rows written before this revision have the count 0 and no
tournament has a count yet: a director's first read after a start reads every row, and the first write
after this revision counts 1.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0022"
down_revision = "0021"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "tournament_changes",
        sa.Column("tournament", sa.String(length=200), nullable=False),
        sa.Column("count", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("tournament"),
    )
    with op.batch_alter_table("tournament_tables") as batch_op:
        batch_op.add_column(sa.Column("changed", sa.BigInteger(), server_default="0", nullable=False))
        batch_op.create_index("ix_tournament_tables_changes", ["tournament", "changed"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("tournament_tables") as batch_op:
        batch_op.drop_index("ix_tournament_tables_changes")
        batch_op.drop_column("changed")
    op.drop_table("tournament_changes")
