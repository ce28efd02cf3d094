"""Maximum-weight matching in a general graph that stays optimal while edge weights change.

Over 500 lines because the matching is one structure: the stages, the blossoms made and taken apart
and the dual updates all read and change the same arrays of labels, blossoms and duals, as in the
mwmatching.py it follows; split, each part would reach into the others' state.

The swiss pairing (swiss.py) asks for a hundred or more matchings per round, each after changing the
weights around one or two players. Solving each from scratch is O(n^3) and would take seconds for 100
players in Python, so this keeps the optimum's dual variables and blossoms between solves and repairs
only what a change touched: a vertex whose weights changed is unmatched, taken out of its blossoms
and given a feasible dual; then the primal-dual stages (Edmonds' blossom algorithm with the dual
bookkeeping of Galil, Micali and Gabow, 1986) resume from the free vertices whose dual is still
positive. A stage grows alternating trees from several of them at once; a tree whose vertex reaches
dual 0 gives up that vertex instead of augmenting, which is what lets the stages start from any
feasible state rather than only from the empty matching.

Weights are non-negative Python ints of any size (exact: the swiss weights are a few hundred bits);
a weight of 0 is no edge and never matched. Internally every dual is doubled so that all arithmetic
stays integral: the slack of an edge between different top-level blossoms is
`dual[u] + dual[v] - 2 * weight`, and a blossom's own dual counts twice for the edges inside it. The
trees of one stage all start from roots whose duals have the same parity, so that the slack of an
edge between two of them is even and halving it (the step that closes a blossom) stays exact.

The tree-growing stage follows the structure of Joris van Rantwijk's well-known mwmatching.py
(labels, blossom bookkeeping, least-slack edges), which networkx's max_weight_matching also uses;
networkx itself is not used because it can only solve from scratch.
"""

from __future__ import annotations

FREE = -1
_NOT_LABELLED, _OUTER, _INNER = 0, 1, 2  # the S and T labels of the textbook
_Edge = tuple[int, int]  # (u, v), oriented where the orientation matters (see each use)


class Matching:
    """Maximum-weight matching of a fixed number of vertices under changing weights."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.weight = [[0] * size for _ in range(size)]
        self.mate = [FREE] * size
        blossoms = 2 * size  # ids below `size` are the vertices themselves
        self.dual = [0] * blossoms
        self.in_blossom = list(range(size))  # the top-level blossom of each vertex
        self.parent = [FREE] * blossoms
        self.children: list[list[int] | None] = [None] * blossoms
        # ends[b][i] joins children[b][i] and children[b][i + 1] (cyclically), as (u in the first, v)
        self.ends: list[list[_Edge] | None] = [None] * blossoms
        self.base = list(range(size)) + [FREE] * size
        self.leaves: list[list[int]] = [[vertex] for vertex in range(size)] + [[] for _ in range(size)]
        self.unused = list(range(size, blossoms))
        self.dirty: set[int] = set()
        self._reset_stage()

    # -- the public side --------------------------------------------------------------------------

    def set_weight(self, u: int, v: int, weight: int) -> None:
        """Change one edge; the next `solve` repairs the matching around `u` if the change spoilt it."""
        old = self.weight[u][v]
        if old == weight:
            return
        self.weight[u][v] = self.weight[v][u] = weight
        if u in self.dirty or v in self.dirty:
            return  # the dirty end's dual is recomputed from all its edges
        if self.mate[u] == v:
            if weight > old and self.in_blossom[u] == u:
                self.dual[u] += 2 * (weight - old)  # still tight; u's other edges only gain slack
            else:
                self.dirty.add(u)
        elif self.in_blossom[u] == self.in_blossom[v]:
            self.dirty.add(u)  # inside one blossom: its cycle may rely on this edge being tight
        elif self.dual[u] + self.dual[v] < 2 * weight:
            self.dirty.add(u)  # the duals no longer cover it
        # Otherwise the matching and the duals still prove each other optimal: nothing to repair.

    def solve(self) -> list[int]:
        """The matching (each vertex's mate, or the vertex itself when unmatched) of maximum weight."""
        for vertex in self.dirty:
            self._detach(vertex)
        for vertex in self.dirty:
            row = self.weight[vertex]
            dual = self.dual
            self.dual[vertex] = max(
                (2 * row[other] - dual[other] for other in range(self.size) if row[other]), default=0
            )
            self.dual[vertex] = max(self.dual[vertex], 0)
        self.dirty.clear()
        while self._stage():
            pass
        return [vertex if mate == FREE else mate for vertex, mate in enumerate(self.mate)]

    # -- repairing after a change -----------------------------------------------------------------

    def _detach(self, vertex: int) -> None:
        """Unmatch `vertex` and dissolve the blossoms around it, keeping every dual feasible."""
        top = self.in_blossom[vertex]
        base = self.base[top]
        if self.mate[base] != FREE:
            self.mate[self.mate[base]] = FREE
            self.mate[base] = FREE
        if top < self.size:
            return
        self._rotate(top, vertex)  # now `vertex` is the (free) base of every blossom around it
        self.mate[vertex] = FREE
        blossom = top
        while blossom >= self.size:
            # Removing a blossom's dual lowers the slack of the edges inside it by twice that much;
            # raising each vertex inside by it gives that back, and only raises the slack of edges that
            # leave the blossom, none of them matched (the blossom's base, `vertex`, is free).
            lift = self.dual[blossom]
            for leaf in self._leaves(blossom):
                self.dual[leaf] += lift
            children = self.children[blossom]
            assert children is not None
            for child in children:
                self.parent[child] = FREE
                for leaf in self._leaves(child):
                    self.in_blossom[leaf] = child
            self._forget(blossom)
            blossom = children[0]

    # -- blossom structure ------------------------------------------------------------------------

    def _leaves(self, blossom: int) -> list[int]:
        return self.leaves[blossom]

    def _forget(self, blossom: int) -> None:
        self.children[blossom] = None
        self.ends[blossom] = None
        self.base[blossom] = FREE
        self.leaves[blossom] = []
        self.dual[blossom] = 0
        self.label[blossom] = _NOT_LABELLED
        self.label_end[blossom] = None
        self.best_edge[blossom] = None
        self.best_edges[blossom] = None
        self.unused.append(blossom)

    def _step(self, blossom: int, index: int, step: int) -> _Edge:
        """The edge from child `index` to child `index + step` of `blossom`, as (u in the first, v)."""
        ends = self.ends[blossom]
        assert ends is not None
        if step > 0:
            return ends[index]
        u, v = ends[index - 1]
        return v, u

    def _rotate(self, blossom: int, vertex: int) -> None:
        """Swap the matched and unmatched edges on the even path from `vertex` to the base of
        `blossom`, making `vertex` its base (the caller sets `vertex`'s own mate)."""
        child = vertex
        while self.parent[child] != blossom:
            child = self.parent[child]
        if child >= self.size:
            self._rotate(child, vertex)
        children = self.children[blossom]
        ends = self.ends[blossom]
        assert children is not None and ends is not None
        first = index = children.index(child)
        if index & 1:
            index -= len(children)
            step = 1
        else:
            step = -1
        while index != 0:
            index += step
            u, v = self._step(blossom, index, step)
            if children[index] >= self.size:
                self._rotate(children[index], u)
            index += step
            if children[index] >= self.size:
                self._rotate(children[index], v)
            self.mate[u] = v
            self.mate[v] = u
        self.children[blossom] = children[first:] + children[:first]
        self.ends[blossom] = ends[first:] + ends[:first]
        self.base[blossom] = self.base[children[first]]

    # -- one stage --------------------------------------------------------------------------------

    def _reset_stage(self) -> None:
        blossoms = 2 * self.size
        self.label = [_NOT_LABELLED] * blossoms
        # label_end[b]: the edge that labelled b, as (the labelling vertex outside b, the vertex inside b)
        self.label_end: list[_Edge | None] = [None] * blossoms
        # best_edge[b]: for an outer blossom the least-slack edge to another outer blossom, as
        # (u inside b, v); for a vertex not outer, the least-slack edge to an outer vertex, as (outer, it)
        self.best_edge: list[_Edge | None] = [None] * blossoms
        self.best_edges: list[list[_Edge] | None] = [None] * blossoms
        self.allowed: set[int] = set()  # u * size + v, both ways round
        self.queue: list[int] = []

    def _slack(self, edge: _Edge) -> int:
        u, v = edge
        return self.dual[u] + self.dual[v] - 2 * self.weight[u][v]

    def _allow(self, edge: _Edge) -> None:
        u, v = edge
        self.allowed.add(u * self.size + v)
        self.allowed.add(v * self.size + u)

    def _assign_label(self, vertex: int, label: int, end: _Edge | None) -> None:
        blossom = self.in_blossom[vertex]
        self.label[vertex] = self.label[blossom] = label
        self.label_end[vertex] = self.label_end[blossom] = end
        self.best_edge[vertex] = self.best_edge[blossom] = None
        if label == _OUTER:
            self.queue.extend(self._leaves(blossom))
        else:
            base = self.base[blossom]
            mate = self.mate[base]
            self._assign_label(mate, _OUTER, (base, mate))

    def _stage(self) -> bool:
        """Grow alternating trees from every free vertex with a positive dual until one of them
        augments or gives up a vertex whose dual reached 0. False when there is no such vertex: the
        matching is then optimal (every free vertex has dual 0)."""
        self._reset_stage()
        size = self.size
        parity = None
        for vertex in range(size):
            if self.mate[vertex] != FREE or self.dual[vertex] == 0:
                continue
            if parity is None:
                parity = self.dual[vertex] & 1
            if self.dual[vertex] & 1 == parity:
                self._assign_label(vertex, _OUTER, None)
        if not self.queue:
            return False
        while not self._grow():
            self._adjust_duals()
            if self._stage_over:
                break
        for blossom in range(size, 2 * size):
            if (
                self.parent[blossom] == FREE
                and self.base[blossom] != FREE
                and self.label[blossom] == _OUTER
                and self.dual[blossom] == 0
            ):
                self._expand(blossom, end_of_stage=True)
        return True

    def _grow(self) -> bool:
        """Scan the queued outer vertices along tight edges; True when the stage ended."""
        self._stage_over = False
        size, weight, in_blossom, label, dual = self.size, self.weight, self.in_blossom, self.label, self.dual
        allowed, best_edge = self.allowed, self.best_edge
        while self.queue:
            vertex = self.queue.pop()
            row = weight[vertex]
            key = vertex * size - 1
            for other in range(size):
                key += 1
                if not row[other] or in_blossom[vertex] == in_blossom[other]:
                    continue
                slack = 0
                tight = key in allowed
                if not tight:
                    slack = dual[vertex] + dual[other] - 2 * row[other]
                    if slack <= 0:
                        allowed.add(key)
                        allowed.add(other * size + vertex)
                        tight = True
                other_top = in_blossom[other]
                if tight:
                    if label[other_top] == _NOT_LABELLED:
                        if self.mate[self.base[other_top]] == FREE:
                            self._augment(vertex, other)  # a free blossom whose base's dual is 0
                            self._stage_over = True
                            return True
                        self._assign_label(other, _INNER, (vertex, other))
                    elif label[other_top] == _OUTER:
                        base = self._scan_blossom(vertex, other)
                        if base >= 0:
                            self._add_blossom(base, vertex, other)
                        else:
                            self._augment(vertex, other)
                            self._stage_over = True
                            return True
                    elif label[other] == _NOT_LABELLED:
                        label[other] = _INNER
                        self.label_end[other] = (vertex, other)
                else:
                    holder = in_blossom[vertex] if label[other_top] == _OUTER else other
                    if holder == other and label[other] != _NOT_LABELLED:
                        continue
                    best = best_edge[holder]
                    if best is None or slack < dual[best[0]] + dual[best[1]] - 2 * weight[best[0]][best[1]]:
                        best_edge[holder] = (vertex, other)
        return False

    def _adjust_duals(self) -> None:
        """Change the duals by the largest amount that keeps them feasible, and act on the bound hit."""
        size, label, in_blossom, dual = self.size, self.label, self.in_blossom, self.dual
        kind, delta, edge, blossom, zero_vertex = 0, 0, None, FREE, FREE
        for vertex in range(size):
            if label[in_blossom[vertex]] == _OUTER and (kind == 0 or dual[vertex] < delta):
                kind, delta, zero_vertex = 1, dual[vertex], vertex
        for vertex in range(size):
            best = self.best_edge[vertex]
            if label[in_blossom[vertex]] == _NOT_LABELLED and best is not None:
                slack = self._slack(best)
                if slack < delta:
                    kind, delta, edge = 2, slack, best
        for top in range(2 * size):
            best = self.best_edge[top]
            if self.parent[top] == FREE and label[top] == _OUTER and best is not None:
                slack = self._slack(best) // 2
                if slack < delta:
                    kind, delta, edge = 3, slack, best
        for top in range(size, 2 * size):
            if (
                self.base[top] != FREE
                and self.parent[top] == FREE
                and label[top] == _INNER
                and dual[top] < delta
            ):
                kind, delta, blossom = 4, dual[top], top
        for vertex in range(size):
            top_label = label[in_blossom[vertex]]
            if top_label == _OUTER:
                dual[vertex] -= delta
            elif top_label == _INNER:
                dual[vertex] += delta
        for top in range(size, 2 * size):
            if self.base[top] != FREE and self.parent[top] == FREE:
                if label[top] == _OUTER:
                    dual[top] += delta
                elif label[top] == _INNER:
                    dual[top] -= delta
        if kind == 1:
            self._release(zero_vertex)
            self._stage_over = True
        elif kind in (2, 3):
            assert edge is not None
            self._allow(edge)
            u, v = edge
            self.queue.append(u if label[in_blossom[u]] == _OUTER else v)
        else:
            self._expand(blossom, end_of_stage=False)

    def _scan_blossom(self, u: int, v: int) -> int:
        """The base of the blossom closed by the edge (u, v) between two outer vertices, or -1 when
        they lie in different trees (an augmenting path)."""
        path: list[int] = []
        base = FREE
        marked = 4
        while u != FREE or v != FREE:
            blossom = self.in_blossom[u]
            if self.label[blossom] & marked:
                base = self.base[blossom]
                break
            path.append(blossom)
            self.label[blossom] = _OUTER | marked
            end = self.label_end[blossom]
            if end is None:
                u = FREE
            else:
                inner = self.in_blossom[end[0]]
                inner_end = self.label_end[inner]
                assert inner_end is not None
                u = inner_end[0]
            if v != FREE:
                u, v = v, u
        for blossom in path:
            self.label[blossom] = _OUTER
        return base

    def _add_blossom(self, base: int, u: int, v: int) -> None:
        """Make the odd cycle closed by the edge (u, v) one outer blossom."""
        base_top = self.in_blossom[base]
        u_top, v_top = self.in_blossom[u], self.in_blossom[v]
        blossom = self.unused.pop()
        self.base[blossom] = base
        self.parent[blossom] = FREE
        self.parent[base_top] = blossom
        children: list[int] = []
        ends: list[_Edge] = []
        while u_top != base_top:
            self.parent[u_top] = blossom
            children.append(u_top)
            end = self.label_end[u_top]
            assert end is not None
            ends.append(end)
            u_top = self.in_blossom[end[0]]
        children.append(base_top)
        children.reverse()
        ends.reverse()
        ends.append((u, v))
        while v_top != base_top:
            self.parent[v_top] = blossom
            children.append(v_top)
            end = self.label_end[v_top]
            assert end is not None
            ends.append((end[1], end[0]))
            v_top = self.in_blossom[end[0]]
        self.children[blossom] = children
        self.ends[blossom] = ends
        self.leaves[blossom] = [leaf for child in children for leaf in self.leaves[child]]
        self.label[blossom] = _OUTER
        self.label_end[blossom] = self.label_end[base_top]
        self.dual[blossom] = 0
        for leaf in self._leaves(blossom):
            if self.label[self.in_blossom[leaf]] == _INNER:
                self.queue.append(leaf)  # inner vertices become outer: scan them
            self.in_blossom[leaf] = blossom
        # The least-slack edge to each other outer blossom, from the children's own lists (or all their
        # edges, for a child that has none).
        in_blossom, label, dual, weight = self.in_blossom, self.label, self.dual, self.weight
        best_to: dict[int, tuple[int, int, int]] = {}  # outer blossom -> (slack, inside, outside)
        for child in children:
            candidates: list[_Edge]
            known_edges = self.best_edges[child]
            if known_edges is None:
                candidates = [
                    (leaf, other)
                    for leaf in self.leaves[child]
                    for other, edge_weight in enumerate(weight[leaf])
                    if edge_weight and label[in_blossom[other]] == _OUTER
                ]
            else:
                candidates = known_edges
            for inside, outside in candidates:
                if in_blossom[outside] == blossom:
                    inside, outside = outside, inside
                outside_top = in_blossom[outside]
                if outside_top != blossom and label[outside_top] == _OUTER:
                    slack = dual[inside] + dual[outside] - 2 * weight[inside][outside]
                    known = best_to.get(outside_top)
                    if known is None or slack < known[0]:
                        best_to[outside_top] = (slack, inside, outside)
            self.best_edges[child] = None
            self.best_edge[child] = None
        self.best_edges[blossom] = [(inside, outside) for _, inside, outside in best_to.values()]
        least = min(best_to.values(), default=None)
        self.best_edge[blossom] = None if least is None else (least[1], least[2])

    def _expand(self, blossom: int, end_of_stage: bool) -> None:
        """Dissolve a top-level blossom into its children (relabelling them mid-stage)."""
        children = self.children[blossom]
        assert children is not None
        for child in children:
            self.parent[child] = FREE
            if child < self.size:
                self.in_blossom[child] = child
            elif end_of_stage and self.dual[child] == 0:
                self._expand(child, end_of_stage)
            else:
                for leaf in self._leaves(child):
                    self.in_blossom[leaf] = child
        if not end_of_stage and self.label[blossom] == _INNER:
            end = self.label_end[blossom]
            assert end is not None
            entry = self.in_blossom[end[1]]
            index = children.index(entry)
            if index & 1:
                index -= len(children)
                step = 1
            else:
                step = -1
            edge = end
            while index != 0:
                next_edge = self._step(blossom, index, step)
                self.label[edge[1]] = _NOT_LABELLED
                self.label[next_edge[1]] = _NOT_LABELLED
                self._assign_label(edge[1], _INNER, edge)
                self._allow(next_edge)
                index += step
                edge = self._step(blossom, index, step)
                self._allow(edge)
                index += step
            child = children[index]
            self.label[edge[1]] = self.label[child] = _INNER
            self.label_end[edge[1]] = self.label_end[child] = edge
            self.best_edge[child] = None
            index += step
            while children[index] != entry:
                child = children[index]
                if self.label[child] == _OUTER:
                    index += step
                    continue
                labelled = FREE
                for leaf in self._leaves(child):
                    if self.label[leaf] != _NOT_LABELLED:
                        labelled = leaf
                        break
                if labelled != FREE:
                    self.label[labelled] = _NOT_LABELLED
                    self.label[self.mate[self.base[child]]] = _NOT_LABELLED
                    self._assign_label(labelled, _INNER, self.label_end[labelled])
                index += step
        self._forget(blossom)

    def _augment(self, u: int, v: int) -> None:
        """Match the edge (u, v) and flip both tree paths back to their roots; a side that is an
        unlabelled free blossom (dual 0) just takes the edge."""
        for side, mate in ((u, v), (v, u)):
            top = self.in_blossom[side]
            if self.label[top] == _NOT_LABELLED:
                if top >= self.size:
                    self._rotate(top, side)
                self.mate[side] = mate
                continue
            self._flip_to_root(side, mate)

    def _release(self, vertex: int) -> None:
        """`vertex`'s dual reached 0: leave it free and match its tree's root instead."""
        self._flip_to_root(vertex, FREE)

    def _flip_to_root(self, vertex: int, mate: int) -> None:
        while True:
            top = self.in_blossom[vertex]
            if top >= self.size:
                self._rotate(top, vertex)
            self.mate[vertex] = mate
            end = self.label_end[top]
            if end is None:
                return
            inner = self.in_blossom[end[0]]
            inner_end = self.label_end[inner]
            assert inner_end is not None
            vertex, inside = inner_end
            if inner >= self.size:
                self._rotate(inner, inside)
            self.mate[inside] = vertex
            mate = inside
