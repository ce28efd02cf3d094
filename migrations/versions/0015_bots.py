"""bots: an account may be a bot (docs/bots.md), which plays through the bot API with a token

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-29 15:40:00.000000

A token is not a password: it is random (the server makes it), so a SHA-256 hash is enough to keep
it and lets a request find its account by one indexed look-up. Nobody was a bot before this revision.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("users") as batch_op:
        batch_op.add_column(sa.Column("bot", sa.Boolean(), server_default=sa.false(), nullable=False))
        batch_op.add_column(sa.Column("bot_token_hash", sa.String(length=64), nullable=True))
        batch_op.create_index("ix_users_bot_token_hash", ["bot_token_hash"], unique=True)


def downgrade() -> None:
    with op.batch_alter_table("users") as batch_op:
        batch_op.drop_index("ix_users_bot_token_hash")
        batch_op.drop_column("bot_token_hash")
        batch_op.drop_column("bot")
