"""A person of one member of a cluster as the others see them: what a member sends of a person here
(`person`), and who stands for a person of another member here (`visiting`), seated at this member's
tables, invited, paired or answering a seek."""

from __future__ import annotations

import secrets
from typing import Any

from server.hub.mailbox import EventLog
from server.hub.model import Player
from server.hub.persistence import NO_ROLE, ROLES


def person(player: Player) -> dict[str, Any]:
    """What the owner of a table needs of a person here to seat them there (Visitors.enter)."""
    return {
        "nick": player.nick,
        "lang": player.lang,
        "guest": player.guest,
        "role": player.role,
        "seat": player.seat_key,
        "account": player.account,  # so that a registered player's seat_key there is the account's too
        "record": list(player.record) if player.record else None,  # a ranked game's colours go by it
        "bot": player.bot,  # a rated invitation between a bot and a person is refused (botUnrated)
        # where a guest sits down from: the seat's place (Table.guest_places), which a guest coming back
        # with a new id on another member is matched against (docs/protocol.md, "A guest who comes back")
        "host": player.host if player.guest else "",
        "network": player.network if player.guest else "",
        "unlimited": player.unlimited,
    }


def visiting(member: str, someone: dict[str, Any]) -> Player:
    """Who stands here for a person of `member`, from what `person` said of them there (an invitee
    known by nick alone has the rest missing). In no roster: its lines go to its member."""
    guest = bool(someone.get("guest", True))
    record = someone.get("record")
    account = someone.get("account")
    return Player(
        secret=f"visitor-{secrets.token_hex(16)}",  # no client can send it: ids have no '-'
        nick=someone["nick"],
        lang=someone.get("lang", ""),
        inbox=EventLog(1),  # never read
        guest=guest,
        role=someone["role"] if someone.get("role") in ROLES else NO_ROLE,
        record=(record[0], record[1], record[2], record[3], record[4]) if record else None,
        id_hmac=someone.get("seat", "") if guest else "",  # so that its seat_key is the person's
        account=account if isinstance(account, int) and not guest else 0,
        host=str(someone.get("host", "")) if guest else "",
        network=str(someone.get("network", "")) if guest else "",
        unlimited=bool(someone.get("unlimited", False)),
        visiting_from=member,
        bot=bool(someone.get("bot", False)),
    )
