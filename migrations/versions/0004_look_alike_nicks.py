"""users.look_key: no account may look like another (UTS #39 skeletons)

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-29 12:00:00.000000

Every account gets the look key of its nick, oldest account first. Where two accounts registered
before this revision look alike, the younger keeps working (its nick and login are untouched) with no
look key, so it blocks nobody; the older one's key still keeps new look-alikes out. The keys come from
the code's `look_key`: a later change of that function (a new confusables table) needs its own
revision that recomputes them.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from server.protocol.codec import look_key

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

users = sa.table(
    "users", sa.column("id", sa.Integer), sa.column("nick", sa.String), sa.column("look_key", sa.String)
)


def upgrade() -> None:
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.add_column(sa.Column("look_key", sa.String(length=80), nullable=True))
    connection = op.get_bind()
    taken: set[str] = set()
    for user_id, nick in connection.execute(sa.select(users.c.id, users.c.nick).order_by(users.c.id)):
        key = look_key(nick)
        if key not in taken:
            taken.add(key)
            connection.execute(sa.update(users).where(users.c.id == user_id).values(look_key=key))
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_users_look_key"), ["look_key"], unique=True)


def downgrade() -> None:
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_users_look_key"))
        batch_op.drop_column("look_key")
