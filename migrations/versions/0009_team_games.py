"""team games: every player of a team game, by side, so that the archive lists it under each of them;
tournament tables' sides long enough for a team's nicks (docs/teams.md)

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-28 10:00:00.000000

Games archived before this revision are games of two: `games.blue_nick` and `red_nick` name their
players, and they have no rows here. A team game's row there names its teams' first players (side 1
and 2); its players are all here.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "game_players",
        sa.Column("game_number", sa.Integer(), nullable=False),
        sa.Column("side", sa.Integer(), nullable=False),
        sa.Column("nick", sa.String(length=40), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(["game_number"], ["games.number"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("game_number", "side"),
    )
    op.create_index("ix_game_players_nick", "game_players", ["nick", "game_number"])
    op.create_index("ix_game_players_user_id", "game_players", ["user_id", "game_number"])
    # nothing refers to tournament_tables, so SQLite's batch mode may copy it safely
    with op.batch_alter_table("tournament_tables") as batch_op:
        for column in ("blue", "red"):
            batch_op.alter_column(column, type_=sa.String(length=200), existing_type=sa.String(length=40))


def downgrade() -> None:
    with op.batch_alter_table("tournament_tables") as batch_op:
        for column in ("blue", "red"):
            batch_op.alter_column(column, type_=sa.String(length=40), existing_type=sa.String(length=200))
    op.drop_index("ix_game_players_user_id", table_name="game_players")
    op.drop_index("ix_game_players_nick", table_name="game_players")
    op.drop_table("game_players")
