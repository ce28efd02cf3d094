"""The weighted matching that the swiss pairing repeats hundreds of times a round: after any sequence
of weight changes it is a matching of maximum weight (against brute force on small graphs), and its
duals prove it (the optimality conditions, on larger ones)."""

from __future__ import annotations

import functools
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.engine.blossom import FREE, Matching


def best_total(weights: list[list[int]]) -> int:
    """The largest total weight of any matching, by trying them all."""
    size = len(weights)

    @functools.cache
    def best(taken: int) -> int:
        first = next((vertex for vertex in range(size) if not taken >> vertex & 1), None)
        if first is None:
            return 0
        taken |= 1 << first
        result = best(taken)  # `first` stays unmatched
        for other in range(first + 1, size):
            if not taken >> other & 1 and weights[first][other]:
                result = max(result, weights[first][other] + best(taken | 1 << other))
        return result

    return best(0)


def total(weights: list[list[int]], mates: list[int]) -> int:
    for vertex, mate in enumerate(mates):
        assert mates[mate] == vertex
        assert mate == vertex or weights[vertex][mate] > 0
    return sum(weights[vertex][mate] for vertex, mate in enumerate(mates) if vertex < mate)


changes = st.lists(
    st.tuples(st.integers(0, 7), st.lists(st.integers(0, 12), min_size=8, max_size=8)), min_size=1, max_size=6
)


@settings(max_examples=300)
@given(size=st.integers(1, 8), scale=st.sampled_from([1, 1000, 2**90]), changes=changes)
def test_every_solve_is_a_maximum_weight_matching(size: int, scale: int, changes: list) -> None:
    """Each change rewrites one vertex's edges (0: no edge); the first one is every vertex's."""
    matching = Matching(size)
    weights = [[0] * size for _ in range(size)]
    for step, (vertex, row) in enumerate(changes):
        for u in range(size) if step == 0 else [vertex % size]:
            for v in range(size):
                if u != v:
                    weight = row[(u + v) % 8] * scale
                    weights[u][v] = weights[v][u] = weight
                    matching.set_weight(u, v, weight)
        assert total(weights, matching.solve()) == best_total(weights)


def optimality_violations(matching: Matching) -> list[str]:
    """The conditions that prove a matching of maximum weight, with its duals: every edge covered,
    matched edges exactly, free vertices and blossoms with a dual holding nothing back."""

    def ancestors(vertex: int) -> set[int]:
        found = set()
        blossom = matching.parent[vertex]
        while blossom != FREE:
            found.add(blossom)
            blossom = matching.parent[blossom]
        return found

    size, dual, mate = matching.size, matching.dual, matching.mate
    problems = []
    for u in range(size):
        if dual[u] < 0 or (mate[u] == FREE and dual[u] != 0):
            problems.append(f"dual of {u}")
        for v in range(u + 1, size):
            weight = matching.weight[u][v]
            if not weight:
                continue
            slack = dual[u] + dual[v] - 2 * weight + 2 * sum(dual[b] for b in ancestors(u) & ancestors(v))
            if slack < 0 or (mate[u] == v and slack != 0):
                problems.append(f"edge {u}-{v}")
    for blossom in range(size, 2 * size):
        if matching.base[blossom] != FREE and dual[blossom] > 0:
            leaves = set(matching.leaves[blossom])
            inside = sum(1 for v in leaves if mate[v] in leaves)
            if inside != len(leaves) - 1:
                problems.append(f"blossom {blossom} not full")
    return problems


@pytest.mark.parametrize("seed", range(4))
def test_the_duals_prove_optimality_after_many_changes(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(6):
        size = rng.randint(10, 40)
        scale = rng.choice([3, 10, 2**70])
        density = rng.random()
        matching = Matching(size)
        for step in range(25):
            changed = range(size) if step == 0 else [rng.randrange(size) for _ in range(rng.randint(1, 3))]
            for u in changed:
                for v in range(size):
                    if u != v:
                        matching.set_weight(u, v, rng.randint(1, scale) if rng.random() < density else 0)
            matching.solve()
            assert optimality_violations(matching) == []
