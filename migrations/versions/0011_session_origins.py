"""where each live session was logged in from: its host and network, and the networks it may be used
from (issue 43: a registered player's id answers only from those; the per-address caps count restored
sessions again)

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-29 09:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # NULL for the sessions of an earlier version: they are claimed, as before, by their first request
    with op.batch_alter_table("sessions") as batch_op:
        batch_op.add_column(sa.Column("origin", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("sessions") as batch_op:
        batch_op.drop_column("origin")
