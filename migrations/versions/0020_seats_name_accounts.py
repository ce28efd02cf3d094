"""journal, hosted_entries: a registered player's seat taken before seats named the account's number
names it now

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-02 13:40:00.000000

A seat at a live table (the journal's `seat` entries) and a tournament entry (hosted_entries.seat) name
a registered player as `@<nick key>#<account number>` since 2026-12-02, and follow the account through
`kropki-server user rename` by that number (docs/operations.md, "Accounts"). One from before, `@<nick
key>` alone, was the account's with that nick, whoever has it now (server/hub/model.py, owns): it gets
the number of the account whose nick it is now, and so follows that account's renames from here on, as
it was already that account's seat. One whose nick no account has now (its account was renamed, or
deleted) is left as it is: the nick may have been somebody else's since, so it follows nobody.
"""

from __future__ import annotations

import json

import sqlalchemy as sa
from alembic import op

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None


def upgrade() -> None:
    connection = op.get_bind()
    seats = []
    for member, uid, seq, data in connection.execute(
        sa.text("SELECT member, uid, seq, data FROM journal WHERE kind = 'seat' AND data LIKE '%\"@%'")
    ):
        try:
            entry = json.loads(data)
        except ValueError:
            continue  # set aside at the next start, as any entry that does not parse
        if isinstance(entry, dict) and _unnumbered(entry.get("owner")):
            seats.append(((member, uid, seq), entry))
    entries = connection.execute(
        sa.text("SELECT id, seat FROM hosted_entries WHERE seat LIKE '@%' AND seat NOT LIKE '%#%'")
    ).all()
    numbers = _numbers(
        connection, {entry["owner"][1:] for _, entry in seats} | {seat[1:] for _, seat in entries}
    )
    for (member, uid, seq), entry in seats:
        key = entry["owner"][1:]
        if key in numbers:
            connection.execute(
                sa.text(
                    "UPDATE journal SET data = :data WHERE member = :member AND uid = :uid AND seq = :seq"
                ),
                {
                    "data": json.dumps({**entry, "owner": f"@{key}#{numbers[key]}"}),
                    "member": member,
                    "uid": uid,
                    "seq": seq,
                },
            )
    for entry_id, seat in entries:
        if seat[1:] in numbers:
            connection.execute(
                sa.text("UPDATE hosted_entries SET seat = :seat WHERE id = :id"),
                {"seat": f"{seat}#{numbers[seat[1:]]}", "id": entry_id},
            )


def _unnumbered(owner: object) -> bool:
    """Whether `owner` is a registered player's seat key without an account's number."""
    return isinstance(owner, str) and owner.startswith("@") and "#" not in owner


def _numbers(connection: sa.Connection, keys: set[str]) -> dict[str, int]:
    """The number of the account whose nick has each of these keys now, for those an account has."""
    found: dict[str, int] = {}
    chosen = sorted(keys)
    for start in range(0, len(chosen), 500):
        rows = connection.execute(
            sa.text("SELECT nick_key, id FROM users WHERE nick_key IN :keys").bindparams(
                sa.bindparam("keys", expanding=True)
            ),
            {"keys": chosen[start : start + 500]},
        )
        found.update(dict(rows.all()))
    return found


def downgrade() -> None:
    # the seats keep their account's number: the code before reads it as it reads a seat taken after
    pass
