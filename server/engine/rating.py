"""Glicko-2 player ratings (Glickman, "Example of the Glicko-2 system", 2013).

Games are rated one at a time as they finish, so each game is its own rating period: a player's
deviation and volatility move after every game rather than in batches. The system constant and the
deviation clamps below are the knobs; the floor keeps very active players from freezing in place.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

TAU = 0.5  # system constant: how fast volatility may change (paper suggests 0.3..1.2)
MIN_DEVIATION = 30.0  # floor, so a very active player can still move
MAX_DEVIATION = 350.0  # cap: never less certain than a brand-new player
EPSILON = 1e-6  # convergence of the volatility iteration

_SCALE = 173.7178  # Glicko (1500) scale <-> Glicko-2 scale
_CENTRE = 1500.0
_MAX_ITERATIONS = 200  # Illinois converges in a handful of steps; this only guards against a hang


@dataclass(frozen=True)
class Rating:
    rating: float = 1500.0
    deviation: float = 350.0
    volatility: float = 0.06


INITIAL = Rating()


def _g(phi: float) -> float:
    return 1.0 / math.sqrt(1.0 + 3.0 * phi * phi / (math.pi * math.pi))


def _expected(mu: float, mu_j: float, g_j: float) -> float:
    return 1.0 / (1.0 + math.exp(-g_j * (mu - mu_j)))


def _clamp(deviation: float) -> float:
    return min(MAX_DEVIATION, max(MIN_DEVIATION, deviation))


def _new_volatility(sigma: float, phi: float, v: float, delta: float) -> float:
    """Step 5: solve for the new volatility with the Illinois algorithm (steps 5.1-5.4)."""
    a = math.log(sigma * sigma)
    phi2 = phi * phi

    def f(x: float) -> float:
        ex = math.exp(x)
        return ex * (delta * delta - phi2 - v - ex) / (2.0 * (phi2 + v + ex) ** 2) - (x - a) / (TAU * TAU)

    big_a = a
    if delta * delta > phi2 + v:
        big_b = math.log(delta * delta - phi2 - v)
    else:
        k = 1
        while f(a - k * TAU) < 0:
            k += 1
        big_b = a - k * TAU
    f_a, f_b = f(big_a), f(big_b)
    for _ in range(_MAX_ITERATIONS):
        if abs(big_b - big_a) <= EPSILON:
            break
        big_c = big_a + (big_a - big_b) * f_a / (f_b - f_a)
        f_c = f(big_c)
        # "<=" rather than "<": with f(C) == 0 a strict test would stall without narrowing.
        if f_c * f_b <= 0:
            big_a, f_a = big_b, f_b
        else:
            f_a /= 2.0
        big_b, f_b = big_c, f_c
    return math.exp(big_a / 2.0)


def update(player: Rating, results: list[tuple[Rating, float]]) -> Rating:
    """One full Glicko-2 rating period (steps 2-8) for `player` against (opponent, score) pairs."""
    mu = (player.rating - _CENTRE) / _SCALE
    phi = player.deviation / _SCALE
    sigma = player.volatility

    information = 0.0  # 1 / v
    improvement = 0.0  # delta / v
    for opponent, score in results:
        mu_j = (opponent.rating - _CENTRE) / _SCALE
        g_j = _g(opponent.deviation / _SCALE)
        e_j = _expected(mu, mu_j, g_j)
        information += g_j * g_j * e_j * (1.0 - e_j)
        improvement += g_j * (score - e_j)

    if information == 0.0:
        # No games (or none that tell anything): only the uncertainty grows.
        return replace(player, deviation=_clamp(_SCALE * math.sqrt(phi * phi + sigma * sigma)))

    v = 1.0 / information
    delta = v * improvement
    new_sigma = _new_volatility(sigma, phi, v, delta)
    phi_star = math.sqrt(phi * phi + new_sigma * new_sigma)
    new_phi = 1.0 / math.sqrt(1.0 / (phi_star * phi_star) + information)
    # Add the change rather than converting mu' back, so a zero change leaves the rating bit-exact.
    new_rating = player.rating + _SCALE * new_phi * new_phi * improvement
    return Rating(new_rating, _clamp(_SCALE * new_phi), new_sigma)


def rate_game(first: Rating, second: Rating, score: float) -> tuple[Rating, Rating]:
    """Both players' ratings after one game; `score` is first's result (1 win, 0.5 draw, 0 loss)."""
    if score not in (0.0, 0.5, 1.0):
        raise ValueError(f"score must be 0, 0.5 or 1, not {score!r}")
    return update(first, [(second, score)]), update(second, [(first, 1.0 - score)])


def shown(rating: Rating) -> int:
    """The rating as players see it."""
    return round(rating.rating)


RATED_MIN_DOTS = 24  # zagram: fewer dots placed (starting crosses not counted) leave ratings as they are


def unrated_reason(
    *, kind: str, teams: bool, finished: bool, cancelled: bool, registered: bool, dots: int | None
) -> str | None:
    """Why a game leaves ratings as they are (docs/ratings.md), the first reason that applies, or None
    when it is rated. `kind`: the game type's letter (R ranked, F free, A against the computer);
    `registered`: both players have an account; `dots`: placed by the players (None: not known, and
    then not a reason)."""
    if kind != "R":
        return "computer" if kind == "A" else "free"
    if teams:
        return "team"
    if not finished:
        return "unfinished"
    if cancelled:
        return "cancelled"
    if not registered:
        return "account"
    if dots is not None and dots < RATED_MIN_DOTS:
        return "short"
    return None
