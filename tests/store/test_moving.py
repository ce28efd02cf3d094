"""A session taken by another member of a cluster (server/store/moving.py), on a real PostgreSQL: never
from a member that holds its own lock unless it handed the session over, once only, and with the k its
dead member's journal noted after the row was written (issue 44)."""

from __future__ import annotations

from server.config import Settings
from server.hub.saved import SESSION_JOURNAL
from server.store.idhash import MIN_COST
from server.store.moving import HELD, SessionTaker, TakenSession
from server.store.serverlock import Holder
from server.store.store import Store
from tests.cluster.conftest import postgres  # noqa: F401 (the fixture)
from tests.store.test_sessions import session

SERVING = Holder.this_process(8080)  # a serving member holds its lock


async def test_a_session_is_taken_from_a_member_only_once_its_lock_is_free(postgres: Settings) -> None:  # noqa: F811
    a = await Store.open(postgres.db_url, member="kropki-a", serving=SERVING, id_hash_cost=MIN_COST)
    await a.writer.load_sessions()
    ala = a.writer.id_hmac("alaAla11")
    a.writer.session_saved(session(ala, "*Ala", tables=(7,), last_command=3))
    for seq, k in enumerate((4, 5), start=1):  # the k its client was shown since the row was written
        a.writer.journal(SESSION_JOURNAL, seq, "k", {"s": ala, "k": k})
    a.writer.journal(SESSION_JOURNAL, 3, "k", {"s": a.writer.id_hmac("other"), "k": 99})
    await a.writer.flush()

    b = await Store.open(postgres.db_url, member="kropki-b", serving=SERVING, id_hash_cost=MIN_COST)
    c = await Store.open(postgres.db_url, member="kropki-c", serving=SERVING, id_hash_cost=MIN_COST)
    to_b = SessionTaker(b.writer.sessions, b.writer.member)
    to_c = SessionTaker(c.writer.sessions, c.writer.member)
    # member a is alive (or starting, reading its sessions back): its lock is held, nothing is taken
    assert await to_b.take(ala, "kropki-a", handed=False, k_journal=SESSION_JOURNAL) == HELD
    assert (await b.writer.session_of(ala))[0] == "kropki-a"

    assert a.server_lock is not None
    await a.server_lock.release()  # member a dies: its connection, and its lock, go
    taken = await to_b.take(ala, "kropki-a", handed=False, k_journal=SESSION_JOURNAL)
    assert isinstance(taken, TakenSession)
    assert (taken.saved.nick, taken.saved.tables, taken.saved.last_command) == ("*Ala", (7,), 5)
    assert (await b.writer.session_of(ala))[0] == "kropki-b"
    # a member that looked at the same moment finds it taken: it asks member b for it instead
    assert await to_c.take(ala, "kropki-a", handed=False, k_journal=SESSION_JOURNAL) is None
    assert await to_c.take(ala, "kropki-b", handed=False, k_journal=SESSION_JOURNAL) == HELD

    # member b hands it over (its row written as it stands): taken although b's lock is held, the row's k
    b.writer.session_saved(session(ala, "*Ala", tables=(7,), last_command=6))
    await b.writer.flush()
    handed = await to_c.take(ala, "kropki-b", handed=True, k_journal=SESSION_JOURNAL)
    assert isinstance(handed, TakenSession) and handed.saved.last_command == 6
    assert (await c.writer.session_of(ala))[0] == "kropki-c"
    for store in (b, c):
        await store.close()
    await a.engine.dispose()


async def test_a_login_again_noted_after_a_larger_k_gives_the_logins_k(postgres: Settings) -> None:  # noqa: F811
    """The newest k noted, not the largest: a client that logged in again numbers from 1."""
    a = await Store.open(postgres.db_url, member="kropki-a", serving=SERVING, id_hash_cost=MIN_COST)
    await a.writer.load_sessions()
    ala = a.writer.id_hmac("alaAla11")
    a.writer.journal(SESSION_JOURNAL, 1, "k", {"s": ala, "k": 17})
    a.writer.session_saved(session(ala, "*Ala", last_command=0))  # the login again
    a.writer.journal(SESSION_JOURNAL, 2, "k", {"s": ala, "k": 0})
    a.writer.journal(SESSION_JOURNAL, 3, "k", {"s": ala, "k": 1})
    await a.writer.flush()
    assert a.server_lock is not None
    await a.server_lock.release()  # member a dies
    b = await Store.open(postgres.db_url, member="kropki-b", serving=SERVING, id_hash_cost=MIN_COST)
    taken = await SessionTaker(b.writer.sessions, b.writer.member).take(
        ala, "kropki-a", handed=False, k_journal=SESSION_JOURNAL
    )
    assert isinstance(taken, TakenSession) and taken.saved.last_command == 1
    await b.close()
    await a.engine.dispose()
