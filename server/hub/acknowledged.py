"""k as a client is shown it (docs/protocol.md, "k"; docs/cluster.md, "Tables across members").

A command counts as processed in the reply's k only once what it wrote is stored, and, for an action at
another member's table, once that member says it stored it (`done`). A `done` lost with a broken
connection must not hold k for ever, and the commands a player sends after it must not hold it longer
(issue 44: a player acting every few seconds kept k held for 171 s, each action starting the wait
again). So each step that k waits for keeps its own: the writes of one poll (as long as storage takes),
and each action sent to another member (UNCONFIRMED_AT_MOST); k moves on through the steps in order.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from server.protocol.codec import ProtocolError

# seconds a client's k waits for another member to store one of its actions: past that (its `done` lost
# with a broken connection), k goes on, rather than the client sending those commands for ever
UNCONFIRMED_AT_MOST = 30.0
REFUSALS_KEPT = 16  # the latest refusals by other members, for the requests that sent them (refused_between)
# What a request that is answered (Hub.answered) answers for an action of it at another member's table,
# besides that member's own refusals: one that never reached that member, and one sent to a member that
# left the cluster before it answered (it may have stored it first)
NOT_REACHED = ProtocolError("notReached", "The table's server cannot be reached now.")
UNCONFIRMED = ProtocolError(
    "unconfirmed",
    "The table's server stopped before it said whether this was done: "
    "the table shows it once another server has taken it over.",
)


@dataclass(frozen=True, slots=True)
class Sent:
    """An action sent to another member, until it answers `done` (or `undone`) with its ticket."""

    owner: str
    ticket: int
    number: int  # its command number
    message: dict[str, Any]  # as sent, to send again if it or its answer was lost (Mirrors.send_again)


@dataclass(slots=True)
class Step:
    k: int  # the client's k once this step is done
    mark: float = 0  # Persistence.queued after its writes: stored once `written` reaches it
    owners: list[Sent] = field(default_factory=list)  # its actions other members have not answered
    until: float = math.inf  # timers' time past which those confirmations are waited for no more
    first: int = 0  # the command number of its first action sent to another member


class Acknowledged:
    """One player's k as shown, and the steps it still waits for, oldest first."""

    __slots__ = ("refusals", "shown", "steps", "tickets")

    def __init__(self) -> None:
        self.steps: deque[Step] = deque()
        self.shown = 0  # while steps wait: the k of the last step done
        self.tickets = 0  # the last ticket given to an action sent to another member
        # (ticket, code, sentence) of the latest actions other members refused, oldest first
        self.refusals: deque[tuple[int, str, str]] = deque(maxlen=REFUSALS_KEPT)

    def begin(self, k: int) -> None:
        """Commands come (a poll's, or an old-style action): with nothing waited for, k shown is `k`."""
        if not self.steps:
            self.shown = k

    def poll(self, k: int, first_elsewhere: int) -> Step:
        """A poll's commands, up to `k`: their writes, whose mark the caller sets once they are queued
        (until then it waits), and the actions they send to other members (`sent`), the first of which
        is command `first_elsewhere` (0: none), kept as not done from the start (`kept`)."""
        step = Step(k, mark=math.inf, first=first_elsewhere)
        self.steps.append(step)
        return step

    def sent(self, k: int, owner: str, until: float, number: int, message: dict[str, Any]) -> int:
        """An action, command `number`, goes to `owner` as `message`; k shows `k` once that member stored
        it (or at `until`): with the poll that sent it, or a step of its own (an old-style request). Its
        ticket, which that member's answer names and which `message` is then given ("t")."""
        self.tickets += 1
        message["t"] = self.tickets
        sent = Sent(owner, self.tickets, number, message)
        building = self.steps[-1] if self.steps and self.steps[-1].mark == math.inf else None
        if building is None:
            self.steps.append(Step(k, owners=[sent], until=until, first=number))
        else:
            building.owners.append(sent)
            building.until = until
            building.first = min(building.first or number, number)
        return self.tickets

    def kept(self, last_command: int) -> int:
        """The k the store keeps for the session: every command up to `last_command` but the actions
        whose members have not confirmed them (and what came after them). A member that dies with the
        session hands it on with this k, so that its client sends those again (issue 44: kept as done,
        they were acknowledged by the member that took the session, and lost)."""
        pending = [step.first for step in self.steps if step.first and (step.owners or step.mark == math.inf)]
        return min(pending) - 1 if pending else last_command

    def confirmed(self, owner: str, ticket: int | None) -> None:
        """`owner` stored (or refused) the action with this ticket; None, from a member of an earlier
        version: the oldest one it had not answered (it answers in order, but not an action it took
        back: see `undone`). An answer past its wait finds nothing."""
        for step in self.steps:
            for sent in step.owners:
                if sent.owner == owner and ticket in (None, sent.ticket):
                    step.owners.remove(sent)
                    return

    def refused(self, ticket: int, code: str, sentence: str) -> None:
        """The member that runs the table refused the action with this ticket (after `confirmed`)."""
        self.refusals.append((ticket, code, sentence))

    def refused_between(self, since: int, upto: int) -> tuple[str, str] | None:
        """The first refusal of the actions with tickets after `since` up to `upto` (those one request
        sent): what that request answers, as it would answer a refusal of a table of its own member."""
        return next(((code, why) for number, code, why in self.refusals if since < number <= upto), None)

    def unconfirmed_action(self, owner: str, ticket: int) -> dict[str, Any] | None:
        """The message of the action with this ticket sent to `owner`, while it is not answered."""
        return next(
            (
                sent.message
                for step in self.steps
                for sent in step.owners
                if (sent.owner, sent.ticket) == (owner, ticket)
            ),
            None,
        )

    def unconfirmed(self, owner: str) -> list[dict[str, Any]]:
        """The messages of the actions sent to `owner` that it has not answered, oldest first."""
        return [sent.message for step in self.steps for sent in step.owners if sent.owner == owner]

    def waiting_for(self) -> bool:
        """Whether an action sent to another member is not confirmed yet."""
        return any(step.owners for step in self.steps)

    def undone(self, owner: str, ticket: int | None) -> int | None:
        """`owner` took the action with this ticket back: its storage failed before it stored it
        (server/hub/takeback.py). Answered as done, the move was lost (issue 44); left unanswered, the
        next action's `done` was taken for it. It is not done, nor anything the client sent after it,
        so that the client sends them again. The k to go back to, or None (its wait was over)."""
        for index, step in enumerate(self.steps):
            for sent in step.owners:
                if sent.owner == owner and ticket in (None, sent.ticket):
                    return self._back_to(index, sent.number)
        return None

    def given_up(self, owner: str) -> int | None:
        """`owner` left the cluster: the actions it did not confirm are taken as never done, with every
        command the client sent after them, so that it sends them again (to the table where it is
        after the take-over, or refused there: either way its client knows). The k to go back to, or
        None. A move that member stored after all is refused when sent again; a chat line would be
        said twice. For the request that sent each of those actions, if it is one that is answered
        (refused_between), its outcome is `unconfirmed`: not known to be done, nor known not to be."""
        for index, step in enumerate(self.steps):
            numbers = [sent.number for sent in step.owners if sent.owner == owner]
            if numbers:
                for later in list(self.steps)[index:]:
                    for sent in later.owners:
                        if sent.owner == owner:
                            self.refused(sent.ticket, UNCONFIRMED.code, str(UNCONFIRMED))
                return self._back_to(index, min(numbers))
        return None

    def _back_to(self, index: int, number: int) -> int:
        """Command `number` (of step `index`) and those after it are not done: the later steps are
        dropped, and that one shows the k before it, once the rest of it is done as it was waited for."""
        while len(self.steps) > index + 1:
            self.steps.pop()
        step = self.steps[index]
        step.owners = [sent for sent in step.owners if sent.number < number]
        step.first = min((sent.number for sent in step.owners), default=0)
        step.k = min(step.k, number - 1)
        return number - 1

    def k(self, last_command: int, written: int, now: float) -> int:
        """The k a reply shows now: through every step done, in order."""
        steps = self.steps
        while steps:
            step = steps[0]
            if step.owners and now > step.until:  # their `done` lost with a broken connection
                step.owners.clear()
            if step.owners or written < step.mark:
                return self.shown
            self.shown = step.k
            steps.popleft()
        return last_command

    def clear(self) -> None:
        """A login again: its client numbers its commands from 1."""
        self.steps.clear()
