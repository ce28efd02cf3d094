"""Who may enter a tournament the server runs (docs/tournaments.md): its ratings and its registered-only
rule, and what an entry costs the hub's limits, checked before anything is written."""

from __future__ import annotations

from collections.abc import Iterable

from server.hub.hub import Hub
from server.hub.model import Player
from server.protocol.codec import ProtocolError
from server.store.hosted import Entry, Settings


def check_eligible(settings: Settings, rating: float | None) -> None:
    """`rating`: an account's, None for a guest."""
    limited = settings.min_rating is not None or settings.max_rating is not None  # 0 is a limit too
    if rating is None and (settings.registered_only or limited):
        raise ProtocolError("registeredOnly", "Only registered players may play in this tournament.")
    if rating is not None and settings.min_rating is not None and rating < settings.min_rating:
        raise ProtocolError(
            "ratingTooLow", f"This tournament is for ratings of {settings.min_rating} and more."
        )
    if rating is not None and settings.max_rating is not None and rating > settings.max_rating:
        raise ProtocolError("ratingTooHigh", f"This tournament is for ratings up to {settings.max_rating}.")


class EntryLimits:
    """What a new entry may cost the hub's limits: a guest's entry is kept for good (its address's entries
    an hour, Limits.entered: `entryFlood`), and holds one of its address's and network's guest tables
    while it lasts (Limits.entries): an entry is a table at each pairing, so that one address's guests
    in many tournaments starting together could sit at more tables than the address may hold."""

    def __init__(self, hub: Hub) -> None:
        self.hub = hub

    def check(self, player: Player, new: bool) -> None:
        """Refuse, before anything is written, an entry beyond the address's entries an hour (`new`: not
        one made again under the same nick) or its guest tables."""
        if new:
            self.hub.ctx.limits.entered.check_bound(player, "entryFlood")
        self.hub.ctx.limits.guest_tables(self.hub.tables, player)

    def made(self, tournament: str, player: Player, new: bool) -> None:
        if new:
            self.hub.ctx.limits.entered.add((player,))
        self.hub.ctx.limits.entered_tournament(tournament, player)

    def held(self, tournament: str, entries: Iterable[Entry]) -> None:
        """Count the tournament's live entries whose session is online (after a restart, as they poll)."""
        for entry in entries:
            player = self.hub.roster.online(entry.nick)
            if not entry.withdrawn and player is not None and player.seat_key == entry.seat:
                self.hub.ctx.limits.entered_tournament(tournament, player)

    def ended(self, tournament: str, nick: str | None = None) -> None:
        """`nick`'s entry is withdrawn; None: the tournament is over."""
        self.hub.ctx.limits.entry_ended(tournament, nick)
