"""What every part of the hub shares: the clocks, storage, chance and caps.

One object that the parts hold, not copies of its fields: a test or the app may swap the timers or
change the poll time-out after the hub is built, and every part sees it.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from server.hub.clock import Timers
from server.hub.limits import Limits
from server.hub.persistence import Persistence
from server.hub.sanctions import SanctionBook


@dataclass(eq=False)
class Context:
    clock: Callable[[], float]  # wall time, for chat timestamps, records and what outlives a restart
    # monotonic time and deadlines: game clocks, time-outs and limits, which a step of the wall
    # clock must not change
    timers: Timers
    persistence: Persistence
    rng: random.Random
    limits: Limits
    poll_timeout: float  # seconds without a poll before a player is logged out
    table_history: int  # events kept per table
    lobby_history: int  # events kept in the lobby's log
    player_history: int  # events kept in a player's own log
    sanctions: SanctionBook = field(default_factory=SanctionBook)  # in force now (server/hub/sanctions.py)

    def writable(self) -> None:
        """Refuse a command whose effect storage would have to keep while it takes no writes."""
        if self.persistence.storage_failure is not None:  # (Limits.writable, without a call more per command)
            self.limits.writable(self.persistence)
