"""The id a request is answered for (docs/protocol.md, "Guessed ids").

A player's id is their password, and every request carries it. Without this, any poll or command with
a guessed id told whether it was a live session's (`ok` against `sd`, `err.notLoggedIn` against
nothing), about 280 guesses a second, where `/auth.py` stopped the same list after a few tries. So:

- a registered player's session answers only requests from the networks it was logged in from (by
  `/auth.py`, which counts failures per account); from anywhere else its id is answered exactly as an
  id that no session has, so a right guess cannot be told from a wrong one;
- every distinct id that is no session of the requester's network counts, per address and per network,
  against the failed-login limit (LoginGuard.guess); past it every such request is refused alike;
- a guest's id (a guest has nothing else) used from a new network is counted once, then the session
  is used from there as well;
- an id already counted from that address, and the id of a session that ended lately from that
  network, are never held up: an anonymous reader polls with one made-up id for hours, and a client
  whose session timed out goes on polling until it logs in again.
"""

from __future__ import annotations

from aiohttp import web

from server.hub.model import Standing
from server.protocol.codec import ProtocolError
from server.web.clients import origin
from server.web.common import HUB_KEY, LOGIN_GUARD_KEY, MOVER_KEY

STRANGER_ID = "-"  # what a stranger's id is answered as: no client can have it (ids have no '-')
TOO_MANY_GUESSES = "Too many unknown ids from your address; wait a few minutes, then log in again."


async def screened_id(request: web.Request, secret: str | None, *, login: bool = False) -> str | None:
    """The id to answer `request` for: `secret`, or STRANGER_ID for a registered player's id sent from
    another network; raises `err.tooManyFailedLogins` past the limit. `login`: a guest login, whose
    unknown id makes a new session (its own limit counts those) rather than a guess.

    On a member of a cluster, a session another member serves is brought here first
    (server/cluster/sessions.py): the guess is counted before the store is asked, so that past the
    limit an unknown id costs no look-up."""
    if not secret:
        return secret
    hub = request.app[HUB_KEY]
    client = origin(request)
    standing, fingerprint = hub.standing(secret, client.group)
    if standing is Standing.HERE:  # nearly every request
        return secret
    guard = request.app[LOGIN_GUARD_KEY]
    counted = False
    mover = request.app.get(MOVER_KEY)
    if standing is Standing.STRANGER and mover is not None:
        if not login:
            _count(guard.guess(client, fingerprint))
            counted = True
        await mover.bring(secret, client.group)
        standing, fingerprint = hub.standing(secret, client.group)
        if standing is Standing.HERE:
            if counted:
                guard.unguess(client, fingerprint)
            return secret
    if standing is Standing.ENDED_HERE:
        return secret
    if standing is Standing.STRANGER and login:
        return secret  # a new session, unless this id is a registered player's: then a bad guest id
    if not counted:
        _count(guard.guess(client, fingerprint))
    if standing is Standing.ADOPTABLE:
        hub.adopt_network(secret, client.group)
        return secret
    return STRANGER_ID


def _count(admitted: bool) -> None:
    if not admitted:
        raise ProtocolError("tooManyFailedLogins", TOO_MANY_GUESSES)
