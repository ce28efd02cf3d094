"""Seeks and pools over HTTP with the real app (docs/protocol.md, "Seeks and quick pairing"): the
endpoints the built-in client uses (co=seek, acceptSeek, cancelSeek, joinPool, leavePool) and the `k`
and `j` commands inside polls, read as MultiPoints reads a reply (tests/web/zagram.py)."""

from __future__ import annotations

import re

from aiohttp.test_utils import TestClient

from tests.store.test_accounts import registered_id
from tests.web.test_auth import auth
from tests.web.test_ignoring import guests
from tests.web.zagram import Reply, Zagram

FREE = "2020s0.4.a.F.a.180.2.."


async def test_a_seek_posted_by_request_is_accepted_by_a_command_and_its_game_starts(
    client: TestClient,
) -> None:
    ala, bob, cid = await guests(client, "*Ala", "*Bob", "*Cid")
    assert await ala.get(co="seek", idGracza=ala.secret, gameType=FREE, minRating="", maxRating="") == ""
    assert (await cid.poll()).lines(0, "ka") == [f"ka1.*Ala...{FREE}"]

    bob.send("k", 0, "a.1")
    reply = await bob.poll()

    assert reply.processed == 1 and reply.lines(0, "kd") == ["kd1"]
    uid = max(reply.sections)
    assert uid > 0 and reply.lines(uid, "d") == [f"d{uid}.{FREE}.*Ala.*Bob"]
    assert (await cid.poll()).lines(0, "kd") == ["kd1"]
    assert (await ala.poll()).sections.keys() == {0, uid}


async def test_every_bad_request_gets_its_code_and_changes_nothing(client: TestClient) -> None:
    ala, bob = await guests(client, "*Ala", "*Bob")
    assert await ala.get(
        co="seek", idGracza=ala.secret, gameType=FREE, minRating="1800", maxRating="1200"
    ) == ("err.badRange")
    assert await ala.get(co="seek", idGracza=ala.secret, gameType=FREE, minRating="x") == "err.badRange"
    assert await ala.get(co="seek", idGracza=ala.secret) == "err.missing.gameType"
    assert await ala.get(co="seek", idGracza=ala.secret, gameType="2020") == "err.badGameType"
    assert await ala.get(co="seek", idGracza="nobody1", gameType=FREE) == "err.notLoggedIn"
    assert await bob.get(co="acceptSeek", idGracza=bob.secret, seek="1") == "err.noSuchSeek"
    assert await bob.get(co="acceptSeek", idGracza=bob.secret, seek="one") == "err.noSuchSeek"
    assert await bob.get(co="cancelSeek", idGracza=bob.secret) == "err.missing.seek"
    assert await bob.get(co="joinPool", idGracza=bob.secret, pool="") == "err.noSuchPool"
    assert await bob.get(co="joinPool", idGracza=bob.secret, pool="9x9") == "err.noSuchPool"
    assert (await bob.poll()).lines(0, "k") == [] and (await bob.poll()).lines(0, "w") == []

    assert await ala.get(co="seek", idGracza=ala.secret, gameType=FREE, minRating="1400") == ""
    assert await bob.get(co="acceptSeek", idGracza=bob.secret, seek="1") == "err.notEligible"  # a guest
    assert await bob.get(co="cancelSeek", idGracza=bob.secret, seek="1") == "err.noSuchSeek"  # not his
    assert await ala.get(co="cancelSeek", idGracza=ala.secret, seek="1") == ""
    assert (await bob.poll()).lines(0, "k") == [f"ka1.*Ala.1400..{FREE}", "kd1"]


async def test_two_guests_paired_by_a_pool_one_by_request_one_by_command(client: TestClient) -> None:
    ala, bob = await guests(client, "*Ala", "*Bob")
    assert await ala.get(co="joinPool", idGracza=ala.secret, pool="20x20_3_2") == ""
    waiting = await ala.poll()
    [line] = waiting.lines(0, "w")  # the pool, seconds waited, the rating gap allowed, players waiting
    assert re.fullmatch(r"w20x20_3_2\.[01]\.1[0-9]{2}\.1", line)
    assert (await bob.poll()).lines(0, "w") == []

    bob.send("j", 0, "20x20_3_2")
    paired = await bob.poll()

    uid = max(paired.sections)
    assert uid > 0 and paired.lines(0, "w") == []
    assert (await ala.poll()).sections.keys() == {0, uid}
    assert await ala.get(co="leavePool", idGracza=ala.secret) == ""  # not waiting: nothing to do


def offered(reply: Reply) -> list[str]:
    return [line for line in reply.lines(0) if line.startswith("vg")]


async def test_a_login_that_says_seeks_1_is_offered_no_seek_as_an_invitation(client: TestClient) -> None:
    """The built-in client logs in with `seeks=1` (guestLogin, rejestruj, loguj, resumeSession); a login
    without it, in whatever client, is offered seeks as invitations again."""
    ala, bob = await guests(client, "*Ala", "*Bob")
    assert await ala.get(co="seek", idGracza=ala.secret, gameType=FREE) == ""
    assert offered(await bob.poll()) == [f"vg*Ala.{FREE}"]

    dan = Zagram(client, "id00009", "*Dan")
    assert await dan.get(co="guestLogin", idGracza=dan.secret, opis=dan.nick, lang="en", seeks="1") == ""
    first = await dan.poll()
    assert first.lines(0, "ka") == [f"ka1.*Ala...{FREE}"] and offered(first) == []

    eve = Zagram(client, registered_id("Eve", "pw"), "Eve")
    account = {"opisGracza": "Eve", "idGracza": eve.secret, "lang": "en"}
    assert (await auth(client, co="rejestruj", email="v", seeks="1", **account)).startswith("ok.")
    assert offered(await eve.poll()) == []
    assert (await auth(client, co="loguj", **account)).startswith("ok.zalogowanyNaSerwer")
    assert offered(await eve.poll()) == [f"vg*Ala.{FREE}"]  # the same session, now in another client
    assert (await auth(client, co="loguj", seeks="1", **account)).startswith("ok.zalogowanyNaSerwer")
    assert offered(await eve.poll()) == []

    assert await bob.get(co="resumeSession", idGracza=bob.secret, opis=bob.nick, seeks="1") == ""
    assert offered(await bob.poll()) == []


async def test_the_old_style_answers_take_and_decline_an_offered_seek(client: TestClient) -> None:
    ala, bob, cid = await guests(client, "*Ala", "*Bob", "*Cid")
    assert await ala.get(co="seek", idGracza=ala.secret, gameType=FREE) == ""
    assert await cid.get(co="seek", idGracza=cid.secret, gameType=FREE) == ""
    assert offered(await bob.poll()) == [f"vg*Ala.{FREE}"]
    assert await bob.get(co="zaproszenieNie", idGracza=bob.secret) == ""
    assert offered(await bob.poll()) == [f"vg*Cid.{FREE}"]
    assert await bob.get(co="zaproszenieTak", idGracza=bob.secret) == ""
    reply = await bob.poll()
    uid = max(reply.sections)
    assert uid > 0 and reply.lines(uid, "d") == [f"d{uid}.{FREE}.*Cid.*Bob"] and offered(reply) == []
    assert reply.lines(0, "kd") == ["kd2"] and (await ala.poll()).lines(0, "vr") == []
