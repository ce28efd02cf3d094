"""reports: players' reports of chat lines and of players, with the lines around them, open until a
moderator closes them (docs/moderation.md, "Reports")

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-29 15:10:00.000000

Nobody reported anything before this revision: the table starts empty.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "reports",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("made_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("reporter", sa.String(length=40), nullable=False),
        sa.Column("reporter_key", sa.String(length=80), nullable=False),
        sa.Column("reporter_network", sa.String(length=50), nullable=False),
        sa.Column("reported", sa.String(length=40), nullable=False),
        sa.Column("place", sa.String(length=50), nullable=False),
        sa.Column("line", sa.String(length=30), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("context", sa.Text(), nullable=False),
        sa.Column("closed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("closed_by", sa.String(length=40), nullable=True),
        sa.Column("action", sa.String(length=10), nullable=True),
        sa.Column("note", sa.Text(), nullable=True),
    )
    op.create_index("ix_reports_closed_at", "reports", ["closed_at"])
    op.create_index("ix_reports_reporter_key_made_at", "reports", ["reporter_key", "made_at"])
    op.create_index("ix_reports_reporter_network_made_at", "reports", ["reporter_network", "made_at"])


def downgrade() -> None:
    op.drop_index("ix_reports_reporter_network_made_at", "reports")
    op.drop_index("ix_reports_reporter_key_made_at", "reports")
    op.drop_index("ix_reports_closed_at", "reports")
    op.drop_table("reports")
