"""users, game archive, live tables and their journal

Revision ID: 0001
Revises:
Create Date: 2026-11-22 13:42:14.100870
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "journal",
        sa.Column("uid", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("seq", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("kind", sa.String(length=20), nullable=False),
        sa.Column("data", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("uid", "seq"),
    )
    op.create_table(
        "tables",
        sa.Column("uid", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("opened_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("closed_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("uid"),
    )
    op.create_table(
        "users",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("nick", sa.String(length=20), nullable=False),
        sa.Column("nick_key", sa.String(length=80), nullable=False),
        sa.Column("login_key", sa.String(length=80), nullable=False),
        sa.Column("secret_hash", sa.String(length=200), nullable=False),
        sa.Column("email", sa.String(length=200), nullable=False),
        sa.Column("lang", sa.String(length=2), nullable=False),
        sa.Column("avatar", sa.String(length=40), nullable=False),
        sa.Column("about", sa.Text(), nullable=False),
        sa.Column("registered_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("rating", sa.Float(), nullable=False),
        sa.Column("deviation", sa.Float(), nullable=False),
        sa.Column("volatility", sa.Float(), nullable=False),
        sa.Column("wins", sa.Integer(), nullable=False),
        sa.Column("draws", sa.Integer(), nullable=False),
        sa.Column("losses", sa.Integer(), nullable=False),
        sa.Column("moderator", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("login_key"),
        sa.UniqueConstraint("nick_key"),
    )
    op.create_table(
        "games",
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("blue_nick", sa.String(length=40), nullable=False),
        sa.Column("red_nick", sa.String(length=40), nullable=False),
        sa.Column("blue_id", sa.Integer(), nullable=True),
        sa.Column("red_id", sa.Integer(), nullable=True),
        sa.Column("game_type", sa.String(length=200), nullable=False),
        sa.Column("result", sa.String(length=20), nullable=True),
        sa.Column("rated", sa.Boolean(), nullable=False),
        sa.Column("tournament", sa.String(length=200), nullable=True),
        sa.Column("sgf", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(["blue_id"], ["users.id"], ondelete="SET NULL"),
        sa.ForeignKeyConstraint(["red_id"], ["users.id"], ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("number"),
    )
    with op.batch_alter_table("games", schema=None) as batch_op:
        batch_op.create_index("ix_games_blue_id", ["blue_id", "number"], unique=False)
        batch_op.create_index("ix_games_red_id", ["red_id", "number"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("games", schema=None) as batch_op:
        batch_op.drop_index("ix_games_red_id")
        batch_op.drop_index("ix_games_blue_id")

    op.drop_table("games")
    op.drop_table("users")
    op.drop_table("tables")
    op.drop_table("journal")
