"""Who may enter a tournament the server runs (docs/tournaments.md): its ratings and its registered-only
rule, checked before anything is written."""

from __future__ import annotations

from server.protocol.codec import ProtocolError
from server.store.hosted import Settings


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
