"""Which open reports a closing names, and the one sanction that closes them (docs/moderation.md,
"Closing many reports"): shared by a moderator's `co=moderate&what=closemany` (server/web/moderation.py)
and the admin's `kropki-server report close` (server/admin.py), so that both refuse the same input with
the same words."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import timedelta

from server.hub.sanctions import BAN, KICK, MUTE
from server.protocol.codec import ProtocolError, check_nick, nick_key, parse_number
from server.store.moderation import Moderation
from server.store.reports import OpenReport, ReportGone, Reports, SanctionOrder

MOST_AT_ONCE = 100  # reports one closing closes: one transaction, one answer
MANY_CLOSINGS = ("none", MUTE, KICK, BAN)  # `delete` deletes a line: one report at a time


@dataclass(frozen=True)
class Chosen:
    reports: list[OpenReport]
    left: int  # open reports the selection names beyond the MOST_AT_ONCE chosen


async def choose(reports: Reports, numbers: str, against: str, reporter: str) -> Chosen:
    """Exactly one of: report numbers (`3,8,12`, each open), the open reports against one player, or
    the open ones by one reporter; of the last two, the oldest MOST_AT_ONCE."""
    given = [value for value in (numbers, against, reporter) if value]
    if not given:
        raise ProtocolError("missing.reports", "Name the reports: numbers, a reported player or a reporter.")
    if len(given) > 1:
        raise ProtocolError(
            "badCommand", "Name the reports one way: numbers, a reported player or a reporter."
        )
    if numbers:
        wanted = parse_numbers(numbers)
        left = 0
    else:
        check_nick(given[0], guest=given[0].startswith("*"))
        found = await reports.open_numbers(
            against=against, reporter_key=nick_key(reporter) if reporter else ""
        )
        if not found:
            whose = f"against {against}" if against else f"from {reporter}"
            raise ProtocolError("noSuchReport", f"No open report {whose}.")
        wanted, left = found[:MOST_AT_ONCE], max(len(found) - MOST_AT_ONCE, 0)
    try:
        return Chosen(await reports.get_open_ones(wanted), left)
    except ReportGone as gone:
        raise not_open(gone) from None


def parse_numbers(text: str) -> list[int]:
    """`3,8,12`: 1 to MOST_AT_ONCE report numbers (one named twice is closed once)."""
    numbers = [parse_number(part) for part in text.split(",")]
    if None in numbers:
        raise ProtocolError("badCommand", f"Report numbers are whole numbers, comma-separated, not {text!r}.")
    unique = list(dict.fromkeys(number for number in numbers if number is not None))
    if len(unique) > MOST_AT_ONCE:
        raise ProtocolError("tooManyAtOnce", f"At most {MOST_AT_ONCE} reports at once, not {len(unique)}.")
    return unique


def not_open(gone: ReportGone) -> ProtocolError:
    """`err.noSuchReport.4.9`: the numbers that are not open (closed by someone else, or never made)."""
    numbers = [str(number) for number in gone.args]
    return ProtocolError(f"noSuchReport.{'.'.join(numbers)}", f"No open report {', '.join(numbers)}.")


async def sanction_order(
    moderation: Moderation, chosen: list[OpenReport], action: str, reason: str, lasting: timedelta | None
) -> SanctionOrder | None:
    """The one sanction these reports close with (None for `none` and `delete`): they must name one
    player. A guest's ban covers the network the newest report that kept one kept, never that of whoever
    holds the nick now; the reason is the newest report's when none is given."""
    if action not in (MUTE, KICK, BAN):
        return None
    if len({nick_key(found.reported) for found in chosen}) > 1:
        raise ProtocolError("severalReported", "A sanction closes the reports against one player at a time.")
    newest = sorted(chosen, key=lambda found: found.number, reverse=True)
    target = await moderation.target(newest[0].reported)
    network = next((found.reported_network for found in newest if found.reported_network), "")
    if action == BAN and target.user_id is None and network:
        target = dataclasses.replace(target, network=network)
    return SanctionOrder(action, target, reason or newest[0].reason, None if action == KICK else lasting)
