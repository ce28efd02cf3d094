"""hosted_entries: the nicks an entry's account had before in the tournament (an admin's renames)

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-02 10:50:00.000000

An entry of a tournament the server runs now follows its account through `kropki-server user rename`
(docs/tournaments.md, "Joining and withdrawing"): it takes the new nick, and keeps the earlier ones, under
which its games were set up. An account renamed before this revision while entered gets the same here:
its entry (the seat names the account's number) takes the account's nick now and keeps the one it had,
unless another entry of the tournament has that nick already.
"""

from __future__ import annotations

import json

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("hosted_entries", sa.Column("former", sa.Text(), server_default="[]", nullable=False))
    connection = op.get_bind()
    entries = connection.execute(
        sa.text("SELECT id, tournament_id, nick, nick_key, seat FROM hosted_entries WHERE seat LIKE '@%#%'")
    ).all()
    for entry_id, tournament_id, nick, key, seat in entries:
        number = seat.partition("#")[2]
        if not (number.isascii() and number.isdigit()):
            continue
        account = connection.execute(
            sa.text("SELECT nick, nick_key FROM users WHERE id = :number"), {"number": int(number)}
        ).first()
        if account is None or account.nick_key == key:
            continue
        taken = connection.execute(
            sa.text("SELECT 1 FROM hosted_entries WHERE tournament_id = :tournament AND nick_key = :key"),
            {"tournament": tournament_id, "key": account.nick_key},
        ).first()
        if taken is not None:
            continue
        connection.execute(
            sa.text(
                "UPDATE hosted_entries SET nick = :nick, nick_key = :key, seat = :seat, former = :former "
                "WHERE id = :id"
            ),
            {
                "nick": account.nick,
                "key": account.nick_key,
                "seat": f"@{account.nick_key}#{number}",
                "former": json.dumps([nick]),
                "id": entry_id,
            },
        )


def downgrade() -> None:
    # entries keep the nick they have now; the games under earlier ones no longer count for them
    with op.batch_alter_table("hosted_entries") as batch_op:
        batch_op.drop_column("former")
