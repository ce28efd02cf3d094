"""The admin's `kropki-server report list` and `report close`: the open reports, and closing one or many
of them on the database as a moderator's `what=close`/`what=closemany` does (docs/moderation.md,
"Closing many reports"), with the same selection, bound and refusals (server/web/closing.py) and the
same line of the moderation log for each report, by `admin (CLI)`."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from server.protocol.codec import MAX_CHAT, ProtocolError, clean_text
from server.store.reports import place_name
from server.web.closing import MANY_CLOSINGS, MOST_AT_ONCE

if TYPE_CHECKING:
    from server.store.reports import OpenReport

LISTED = 200  # open reports `report list` prints, as a moderator's list shows them


def add_parser(
    add: Callable[..., argparse.ArgumentParser], parents: list[argparse.ArgumentParser]
) -> argparse.ArgumentParser:
    """`report` and its actions, under the main parser's sub-commands (`parents`: each action's)."""
    report = add(
        "report",
        help="players' open reports: list them, close them (docs/moderation.md)",
        description="Players' open reports. A report is closed with an action, one or many at once.",
    )
    actions = report.add_subparsers(dest="action", metavar="ACTION", required=True)
    actions.add_parser("list", help="print the open reports, a moderator's first 200", parents=parents)
    close = actions.add_parser(
        "close",
        help=f"close reports by number, against a player or from a reporter (at most {MOST_AT_ONCE})",
        parents=parents,
    )
    close.add_argument("numbers", nargs="*", metavar="NUMBER")
    close.add_argument("--against", default="", metavar="NICK", help="every open report against this player")
    close.add_argument(
        "--from", dest="reporter", default="", metavar="NICK", help="every one by this reporter"
    )
    close.add_argument(
        "--action", dest="closing", choices=MANY_CLOSINGS, default="none", help="default: none"
    )
    close.add_argument("--for", dest="lasting", default="", metavar="DURATION", help="a mute's or ban's")
    close.add_argument("--reason", default="", help="the sanction's reason; default: the newest report's")
    close.add_argument("--note", default="", help="the closing note for the log; default: the reason")
    return report


def run(args: argparse.Namespace, url: str, by: str) -> int:
    from server.store.database import SchemaError

    try:
        print(asyncio.run(_run(args, url, by)))
        return 0
    except (SchemaError, ProtocolError) as refused:
        print(f"kropki-server: error: {refused}", file=sys.stderr)
        return 1


async def _run(args: argparse.Namespace, url: str, by: str) -> str:
    from server.store.reports import ReportGone
    from server.store.store import Store
    from server.web.closing import choose, not_open, sanction_order
    from server.web.moderation import parse_duration

    if args.action == "close":  # checked before the database is opened
        reason = sanction_reason(args.reason)
        note = clean_text(args.note).strip()[:MAX_CHAT] or reason
        lasting = parse_duration(args.lasting)
    store = await Store.open(url)
    try:
        if args.action == "list":
            return (
                "\n".join(_line(found) for found in await store.reports.open_ones(LISTED))
                or "no open reports"
            )
        chosen = await choose(store.reports, ",".join(args.numbers), args.against, args.reporter)
        order = await sanction_order(store.moderation, chosen.reports, args.closing, reason, lasting)
        numbers = [found.number for found in chosen.reports]
        try:
            await store.reports.close_many(numbers, by=by, action=args.closing, note=note, sanction=order)
        except ReportGone as gone:
            raise not_open(gone) from None
        return f"{len(numbers)} report(s) closed ({args.closing}); {chosen.left} more open"
    finally:
        await store.close()


def _line(found: OpenReport) -> str:
    """Tab-separated: number, when (UTC), reporter, reported, where, reason."""
    made = f"{found.made_at:%Y-%m-%d %H:%M}"
    return "\t".join(
        (str(found.number), made, found.reporter, found.reported, place_name(found.place), found.reason)
    )


def sanction_reason(text: str) -> str:
    """`--reason` as a moderator's reaches the server (server/web/moderation.py): one line without
    control characters, for the player's line, a banned login's answer and the log's line; at most
    MAX_CHAT characters, refused (ProtocolError) rather than cut, since the admin can say it again."""
    reason = clean_text(text).strip()
    if len(reason) > MAX_CHAT:
        raise ProtocolError(
            "tooLong", f"a reason is at most {MAX_CHAT} characters (this one has {len(reason)})"
        )
    return reason
