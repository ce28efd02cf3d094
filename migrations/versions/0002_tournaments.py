"""tournament keys and tables

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22 14:35:25.799448
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "tournament_keys",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=80), nullable=False),
        sa.Column("key_hash", sa.String(length=64), nullable=False),
        sa.Column("tournament", sa.String(length=200), nullable=True),
        sa.Column("registered_only", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("key_hash"),
        sa.UniqueConstraint("name"),
    )
    op.create_table(
        "tournament_tables",
        sa.Column("uid", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("tournament", sa.String(length=200), nullable=False),
        sa.Column("round", sa.String(length=200), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("blue", sa.String(length=40), nullable=False),
        sa.Column("red", sa.String(length=40), nullable=False),
        sa.Column("game_type", sa.String(length=200), nullable=False),
        sa.Column("result", sa.String(length=20), nullable=True),
        sa.Column("game_number", sa.Integer(), nullable=True),
        sa.PrimaryKeyConstraint("uid"),
    )
    with op.batch_alter_table("tournament_tables", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_tournament_tables_tournament"), ["tournament"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("tournament_tables", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_tournament_tables_tournament"))

    op.drop_table("tournament_tables")
    op.drop_table("tournament_keys")
