"""archived games: an index by tournament and number

Revision ID: 0023
Revises: 0022
Create Date: 2026-12-02 17:00:00.000000

`/tournament/<name>.sgf.zip` reads a tournament's archived games a page at a time in number order
(server/store/tournaments.py, `Tournaments.records`), and its answer's version counts them: without the
index each read scanned every game of the archive.
"""

from __future__ import annotations

from alembic import op

revision = "0023"
down_revision = "0022"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_games_tournament", "games", ["tournament", "number"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_games_tournament", table_name="games")
