"""rating changes: each registered player's rating after each rated game, for the player page's graph

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-27 15:00:00.000000

Games rated before this revision have no row: the graph starts with the first game rated after it.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "rating_changes",
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("game_number", sa.Integer(), nullable=False),
        sa.Column("rated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("rating", sa.Float(), nullable=False),
        sa.Column("deviation", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["game_number"], ["games.number"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("user_id", "game_number"),
    )


def downgrade() -> None:
    op.drop_table("rating_changes")
