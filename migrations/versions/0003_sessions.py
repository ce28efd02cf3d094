"""live sessions and the server's own state, so that sessions survive a restart

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-29 10:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "sessions",
        sa.Column("id_hmac", sa.String(length=64), nullable=False),
        sa.Column("nick", sa.String(length=40), nullable=False),
        sa.Column("lang", sa.String(length=8), nullable=False),
        sa.Column("registered", sa.Boolean(), nullable=False),
        sa.Column("free", sa.Boolean(), nullable=False),
        sa.Column("client", sa.String(length=8), nullable=False),
        sa.Column("tables", sa.Text(), nullable=False),
        sa.Column("blocked", sa.Text(), nullable=False),
        sa.Column("last_command", sa.BigInteger(), nullable=False),
        sa.Column("quiet_since", sa.Float(), nullable=True),
        sa.PrimaryKeyConstraint("id_hmac"),
    )
    op.create_table(
        "server_state",
        sa.Column("name", sa.String(length=40), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("name"),
    )


def downgrade() -> None:
    op.drop_table("server_state")
    op.drop_table("sessions")
