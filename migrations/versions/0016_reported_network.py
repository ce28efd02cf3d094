"""reports: a report of a guest keeps the guest's network, which a ban on closing it covers
(docs/moderation.md, "Reports")

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-02 01:20:00.000000

A guest's nick is anyone's once the guest is gone: looked up when the report is closed, it named the
network of whoever held the nick by then. A report made before this revision keeps none (""): closing
it with a ban bans the nick's look alone.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("reports") as batch_op:
        batch_op.add_column(
            sa.Column("reported_network", sa.String(length=50), server_default="", nullable=False)
        )


def downgrade() -> None:
    with op.batch_alter_table("reports") as batch_op:
        batch_op.drop_column("reported_network")
