"""hosted tournaments: swiss and arena tournaments the server runs, their players and swiss pairings;
the moves of each tournament table's game (tables archived before this revision have none)

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-27 17:10:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # an arena's points read how long each game was (a quick draw scores nothing): kept with the result
    with op.batch_alter_table("tournament_tables") as batch_op:
        batch_op.add_column(sa.Column("moves", sa.Integer(), nullable=True))
    op.create_table(
        "hosted_tournaments",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("kind", sa.String(length=10), nullable=False),
        sa.Column("game_type", sa.String(length=200), nullable=False),
        sa.Column("rounds", sa.Integer(), nullable=False),
        sa.Column("minutes", sa.Integer(), nullable=False),
        sa.Column("starts_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("min_rating", sa.Integer(), nullable=True),
        sa.Column("max_rating", sa.Integer(), nullable=True),
        sa.Column("registered_only", sa.Boolean(), nullable=False),
        sa.Column("say_hi", sa.Integer(), nullable=False),
        sa.Column("created_by", sa.String(length=100), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("state", sa.String(length=12), nullable=False),
        sa.Column("round", sa.Integer(), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("name"),
    )
    op.create_table(
        "hosted_entries",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("tournament_id", sa.Integer(), nullable=False),
        sa.Column("nick", sa.String(length=40), nullable=False),
        sa.Column("nick_key", sa.String(length=80), nullable=False),
        sa.Column("seat", sa.String(length=81), nullable=False),
        sa.Column("rating", sa.Float(), nullable=False),
        sa.Column("registered_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("withdrawn_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["tournament_id"], ["hosted_tournaments.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_hosted_entries_player", "hosted_entries", ["tournament_id", "nick_key"], unique=True)
    op.create_table(
        "hosted_rounds",
        sa.Column("tournament_id", sa.Integer(), nullable=False),
        sa.Column("round", sa.Integer(), nullable=False),
        sa.Column("paired_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("boards", sa.Text(), nullable=False),
        sa.Column("bye", sa.String(length=40), nullable=True),
        sa.ForeignKeyConstraint(["tournament_id"], ["hosted_tournaments.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("tournament_id", "round"),
    )


def downgrade() -> None:
    op.drop_table("hosted_rounds")
    op.drop_index("ix_hosted_entries_player", table_name="hosted_entries")
    op.drop_table("hosted_entries")
    op.drop_table("hosted_tournaments")
    with op.batch_alter_table("tournament_tables") as batch_op:
        batch_op.drop_column("moves")
