"""Games begun in an hour (docs/operations.md, "Abuse limits") on the members of a cluster: a player of
another member found at that bound is refused as one of its own would be, told why, at their member. Here
each hub counts the games begun at its own tables (sharing them is the cluster layer's:
tests/cluster/test_hourly.py)."""

from __future__ import annotations

from server.hub.limits import GAMES_BEGUN_PER_HOUR
from server.hub.pools import PROPOSAL_WAIT
from server.protocol.codec import decode_client_text
from tests.hub.test_pools_across import Cluster
from tests.hub.test_seeks_across import told


def paired_at_b(link: Cluster) -> None:
    """*Ala (member a) waits first, *Bob (member b) comes: their table opens at b; Bob resigns before any
    dot."""
    link.join("alaAla11")
    link.timers.advance(1)  # Ala came first, by a whole second
    link.join("bobBob22")
    tables = link.hubs["b"].tables.items()
    [uid] = [uid for uid, table in tables if table.room is not None and table.room.game.result is None]
    link.hubs["b"].propose("bobBob22", str(uid), "resign")
    link.deliver()
    link.timers.advance(2)  # within the pools' joins a minute


def test_a_waiter_at_its_bound_at_the_other_member_leaves_the_pool_told_why() -> None:
    """Before, member b refused the pairing (`gameFlood`, for Ala) and member a, which had counted none of
    those games, kept Ala waiting and proposed her again every PROPOSAL_WAIT for the rest of the hour,
    telling her nothing (test failed before the fix)."""
    link = Cluster()
    link.guest("a", "alaAla11", "*Ala")
    link.guest("b", "bobBob22", "*Bob")
    for _ in range(GAMES_BEGUN_PER_HOUR):
        paired_at_b(link)
    link.read("alaAla11")
    games = len(link.games())

    link.guest("b", "cydCyd33", "*Cyd")  # Bob has begun as many
    link.join("alaAla11")
    link.timers.advance(1)
    link.join("cydCyd33")

    assert len(link.games()) == games
    lines = link.read("alaAla11")
    [refusal] = [decode_client_text(line) for line in told(lines)]
    assert refusal.startswith(f"*Ala has begun {GAMES_BEGUN_PER_HOUR} games in the last hour; the next can")
    assert [line for line in lines if line.startswith("w")] == []
    assert link.hubs["a"].pools.waiting == {}
    proposals = link.proposals()
    link.sweep(PROPOSAL_WAIT + 1)
    assert link.proposals() == proposals  # not proposed again
    assert [line for line in link.read("cydCyd33") if line.startswith("w")] != []  # Cyd waits on
