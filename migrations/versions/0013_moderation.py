"""moderation: a role for each account (none, moderator, admin) in place of the moderator flag; the
sanctions (mute, kick, ban, the lobby's chat modes) and the moderation log (docs/moderation.md)

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-29 13:30:00.000000

Every moderator before this revision is a moderator after it; nobody is an admin until an admin of the
machine names one (`kropki-server user set-role NICK admin`). Nobody was sanctioned before it.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("users") as batch_op:
        batch_op.add_column(sa.Column("role", sa.String(length=10), server_default="none", nullable=False))
    op.execute("UPDATE users SET role = 'moderator' WHERE moderator")
    with op.batch_alter_table("users") as batch_op:
        batch_op.drop_column("moderator")
    op.create_table(
        "sanctions",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("key", sa.String(length=32), nullable=False, unique=True),
        sa.Column("kind", sa.String(length=10), nullable=False),
        sa.Column("target", sa.String(length=100), nullable=False),
        sa.Column("user_id", sa.Integer(), sa.ForeignKey("users.id", ondelete="SET NULL"), nullable=True),
        sa.Column("look_key", sa.String(length=80), nullable=True),
        sa.Column("network", sa.String(length=50), nullable=True),
        sa.Column("seconds", sa.Integer(), nullable=True),
        sa.Column("starts_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("ends_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("made_by", sa.String(length=40), nullable=False),
        sa.Column("lifted_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("lifted_by", sa.String(length=40), nullable=True),
    )
    op.create_index("ix_sanctions_lifted_at_ends_at", "sanctions", ["lifted_at", "ends_at"])
    op.create_table(
        "moderation_log",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("actor", sa.String(length=40), nullable=False),
        sa.Column("action", sa.String(length=20), nullable=False),
        sa.Column("target", sa.String(length=100), nullable=False),
        sa.Column("detail", sa.String(length=100), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("moderation_log")
    op.drop_index("ix_sanctions_lifted_at_ends_at", "sanctions")
    op.drop_table("sanctions")
    with op.batch_alter_table("users") as batch_op:
        batch_op.add_column(sa.Column("moderator", sa.Boolean(), server_default=sa.false(), nullable=False))
    op.execute("UPDATE users SET moderator = (role <> 'none')")
    with op.batch_alter_table("users") as batch_op:
        batch_op.drop_column("role")
