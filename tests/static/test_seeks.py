"""Finding a game without knowing anyone, in Debian's Chromium (docs/client.md, "Quick game"): two
strangers, one at 1280x900 and one on a 390x844 phone, paired by a pool, and by a seek one of them posts
from "New game" and the other accepts in one click."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import expect

from server.hub.pools import POOLS
from tests.static.test_client import Player


def blue_and_red(ala: Player, bob: Player) -> tuple[Player, Player]:
    """Who plays blue, as their screens say (a pool's game draws it)."""
    expect(ala.page.locator("#red-name")).not_to_have_text("")
    return (ala, bob) if ala.page.locator("#blue-name").inner_text() == "*Ala" else (bob, ala)


def test_two_strangers_are_paired_by_a_pool(players: tuple[Player, Player], tmp_path: Path) -> None:
    ala, bob = players
    ala.log_in("Ala")
    bob.log_in("Bob")
    pool = '#pools li[data-pool="20x20_3_2"]'
    ala.page.click(f"{pool} .join-pool")
    expect(ala.page.locator(pool)).to_contain_text("waiting")
    expect(ala.page.locator(f"{pool} .leave-pool")).to_have_count(1)
    expect(bob.page.locator(f"{pool} .join-pool")).to_have_count(1)  # nothing of it for the others

    bob.page.click(f"{pool} .join-pool")

    for player in (ala, bob):
        expect(player.page.locator("#game")).to_be_visible()
        expect(player.page.locator("#game-head")).to_contain_text("*Ala")
        expect(player.page.locator("#game-head")).to_contain_text("*Bob")
        expect(player.page.locator("#pools li.waiting")).to_have_count(0)
    blue, red = blue_and_red(ala, bob)
    blue.play("cc")
    red.sees_dot("cc")
    red.play("dd")
    blue.sees_dot("dd")
    blue.screenshot(tmp_path, "blue")


def test_a_seek_is_posted_from_new_game_and_accepted_in_one_click(players: tuple[Player, Player]) -> None:
    ala, bob = players
    ala.log_in("Ala")
    bob.log_in("Bob")
    expect(bob.page.locator("#no-seeks")).to_have_text('Nobody seeks a game now: post one from "New game".')
    ala.set_new_game(size="10x10")  # she is blue
    ala.page.fill("#min-rating", "1400")
    ala.page.click("#post-seek")
    expect(bob.page.locator("#seeks li")).to_have_count(1)
    expect(bob.page.locator("#seeks li")).to_contain_text("*Ala")
    expect(bob.page.locator("#seeks li")).to_contain_text("ratings 1400–")
    expect(bob.page.locator("#no-seeks")).to_be_hidden()

    bob.page.click("#seeks li .accept-seek")  # a guest has no rating: refused in words, nothing else
    expect(bob.page.locator("#notice")).to_have_text(
        "You cannot accept this seek: it is yours, or for other ratings."
    )
    ala.page.click("#seeks li .cancel-seek")
    expect(bob.page.locator("#seeks li")).to_have_count(0)

    ala.page.fill("#min-rating", "")
    ala.page.click("#post-seek")
    expect(ala.page.locator("#seeks li .cancel-seek")).to_have_count(1)  # her own: no accept
    expect(bob.page.locator("#seeks li .accept-seek")).to_have_count(1)
    # this client says it reads seeks (`seeks=1`): the server offers it none as an invitation too
    expect(bob.page.locator("#invitation p")).to_have_count(0)
    bob.page.click("#seeks li .accept-seek")

    for player in (ala, bob):
        expect(player.page.locator("#blue-name")).to_have_text("*Ala")
        expect(player.page.locator("#red-name")).to_have_text("*Bob")
        expect(player.page.locator("#seeks li")).to_have_count(0)
    ala.play("bc")
    bob.sees_dot("bc")


def test_the_clients_pools_are_the_servers(players: tuple[Player, Player]) -> None:
    ala, _ = players
    pools = ala.page.evaluate(
        """async () => {
          const base = document.querySelector("script[type=module]").src;
          return (await import(new URL("seeks.js", base))).POOLS;
        }"""
    )
    assert pools == POOLS
