"""tournament tables: when the organiser cancelled the table's tournament game (cancelTable)

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-27 14:45:00.000000

Tables set up before this revision were never cancelled: the column starts empty.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("tournament_tables") as batch_op:
        batch_op.add_column(sa.Column("cancelled_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("tournament_tables") as batch_op:
        batch_op.drop_column("cancelled_at")
