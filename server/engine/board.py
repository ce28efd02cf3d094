"""The board: dots, realms, pools and the capture rules of zagram.

Over 500 lines because the capture rules (input points, traced chains, flooding, realms and pools,
rings drawn by hand and territory) all read and change the one flat grid and its realm bookkeeping;
split, each part would reach into the others' arrays.

Points live in flat lists with one padding column and a padding row above and below
(stride = width + 1), so neighbours are fixed offsets and the edge is a marked cell.
Automatic enclosures follow docs/rules.md: after a dot is put, the usual case leaves in O(1)
because fewer than two "input points" around it means no ring can close; otherwise the
contours through the new dot are traced along the player's live dots and only the traced
rings that go round their input point are flooded.
"""

from __future__ import annotations

import itertools
from array import array
from typing import NamedTuple

from server.engine.moves import Point

EMPTY = 0
BLACK = 1
WHITE = 2
EDGE = 3  # the padding around the board

# Directions clockwise with y growing downwards: N, NE, E, SE, S, SW, W, NW.
N, NE, E, SE, S, SW, W, NW = range(8)


class IllegalMove(ValueError):
    """A move the rules forbid; the message is the reason shown to the player."""


class Enclosure(NamedTuple):
    """A realm made by one move: its owner, its border ring and what it changed (a named tuple: a
    game's record keeps it as a plain one, server/engine/game.py MoveList)."""

    owner: int
    ring: tuple[int, ...]  # border dots in path order, not closed (the first is not repeated)
    captured: int  # enemy dots newly counted for the owner
    freed: int  # own dots liberated from enemy realms


class Board:
    """Live state of one board. Player 1 is black/blue (SGF B), player 2 white/red (SGF W)."""

    def __init__(self, width: int, height: int) -> None:
        if not (1 <= width <= 52 and 1 <= height <= 52):
            raise ValueError("board sides must be 1..52")
        self.width = width
        self.height = height
        s = self.stride = width + 1
        size = self.size = (height + 2) * s + 1
        self.offsets = (-s, -s + 1, 1, s + 1, s, s - 1, -1, -s - 1)
        # Byte arrays, not lists: a server holds hundreds of boards, and the garbage collector walks
        # every slot of every list on each full collection, but never looks inside a bytearray.
        # colour of the dot on a point (EMPTY, BLACK, WHITE) or EDGE for padding
        self.color = bytearray([EDGE]) * size
        # owner of the realm whose interior holds the point (0 when none)
        self.realm = bytearray(size)
        # colour of a live dot (a dot not inside an enemy realm), else 0; EDGE on padding
        self.live = bytearray([EDGE]) * size
        # 1 for a live dot on the border of its owner's realm
        self.bound = bytearray(size)
        # owner of the pool (empty enclosure) covering a free point
        self.pool = bytearray(size)
        self._tag = array("q", bytes(8 * size))
        self._stamp = 0
        self.score = [0, 0, 0]  # score[player] = enemy dots inside player's realms
        self.free_points = width * height
        for y in range(height):
            row = (y + 1) * s + 1
            for i in range(row, row + width):
                self.color[i] = EMPTY
                self.live[i] = EMPTY

    # --- coordinates ---------------------------------------------------------------------------

    def index(self, point: Point) -> int:
        x, y = point
        if not (0 <= x < self.width and 0 <= y < self.height):
            raise IllegalMove(f"point {point} is outside the board")
        return (y + 1) * self.stride + x + 1

    def point(self, index: int) -> Point:
        return index % self.stride - 1, index // self.stride - 1

    def indices(self) -> range:
        """Every index, padding included (padding has colour EDGE)."""
        return range(self.size)

    def board_indices(self) -> list[int]:
        s = self.stride
        return [(y + 1) * s + x + 1 for y in range(self.height) for x in range(self.width)]

    # --- queries -------------------------------------------------------------------------------

    def playable(self, index: int) -> bool:
        """Free and not inside a realm (pools are playable)."""
        return self.color[index] == EMPTY and self.realm[index] == 0

    def is_full(self) -> bool:
        return self.free_points == 0

    def copy(self) -> Board:
        twin = Board.__new__(Board)
        twin.__dict__.update(self.__dict__)
        for name in ("color", "realm", "live", "bound", "pool", "_tag"):
            setattr(twin, name, getattr(self, name)[:])
        twin.score = list(self.score)
        return twin

    def state(self) -> tuple:
        """Everything that defines the position, for comparisons in tests and undo checks."""
        return (
            bytes(self.color),
            bytes(self.realm),
            bytes(self.live),
            bytes(self.bound),
            bytes(self.pool),
            tuple(self.score),
            self.free_points,
        )

    # --- putting dots --------------------------------------------------------------------------

    def place(self, index: int, player: int) -> None:
        """Put a dot without any automatic enclosure (territory rules)."""
        if not self.playable(index):
            raise IllegalMove(self._why_unplayable(index))
        self.color[index] = player
        self.live[index] = player
        self.pool[index] = 0
        self.free_points -= 1

    def play(self, index: int, player: int) -> list[Enclosure]:
        """Put a dot with automatic minimal-area enclosures (standard and no-territory rules)."""
        color = self.color
        if color[index] != EMPTY or self.realm[index]:
            raise IllegalMove(self._why_unplayable(index))
        color[index] = player
        self.live[index] = player
        self.free_points -= 1
        pool_owner = self.pool[index]
        if not pool_owner:
            return self._find_captures(index, player)
        self.pool[index] = 0
        if pool_owner == player:
            return []  # no live enemy dot can be inside one's own pool
        made = self._find_captures(index, player)
        if made:
            self._dissolve_pool(index)
            return made
        enclosure = self._enclose_point(index, pool_owner)
        if enclosure is None:
            self._dissolve_pool(index)
            return []
        return [enclosure]

    def _why_unplayable(self, index: int) -> str:
        c = self.color[index]
        if c == EDGE:
            return "point is outside the board"
        if c != EMPTY:
            return "point is occupied" if self.live[index] else "point holds a captured dot"
        return "point is inside a realm"

    # --- automatic enclosures ------------------------------------------------------------------

    def _input_points(self, pos: int, player: int) -> list[tuple[int, int]]:
        """(direction of the first chain dot, the enclosed-side point) for each gap round `pos`."""
        live = self.live
        s = self.stride
        has_w = live[pos - 1] == player
        has_e = live[pos + 1] == player
        has_n = live[pos - s] == player
        has_s = live[pos + s] == player
        found = []
        if not has_w:
            if live[pos - s - 1] == player:
                found.append((NW, pos - 1))
            elif has_n:
                found.append((N, pos - 1))
        if not has_s:
            if live[pos + s - 1] == player:
                found.append((SW, pos + s))
            elif has_w:
                found.append((W, pos + s))
        if not has_e:
            if live[pos + s + 1] == player:
                found.append((SE, pos + 1))
            elif has_s:
                found.append((S, pos + 1))
        if not has_n:
            if live[pos - s + 1] == player:
                found.append((NE, pos - s))
            elif has_e:
                found.append((E, pos - s))
        return found

    def _find_captures(self, pos: int, player: int) -> list[Enclosure]:
        live = self.live
        s = self.stride
        # O(1) exit: count the gaps between runs of own live dots round `pos`.
        gaps = 0
        if live[pos - 1] != player and (live[pos - s - 1] == player or live[pos - s] == player):
            gaps += 1
        if live[pos + s] != player and (live[pos + s - 1] == player or live[pos - 1] == player):
            gaps += 1
        if live[pos + 1] != player and (live[pos + s + 1] == player or live[pos + s] == player):
            gaps += 1
        if live[pos - s] != player and (live[pos - s + 1] == player or live[pos + 1] == player):
            gaps += 1
        if gaps < 2:
            return []
        inputs = self._input_points(pos, player)
        wanted = len(inputs) - 1  # at most k - 1 rings can close through k gaps
        chains: list[tuple[list[int], int]] = []
        for direction, inside in inputs:
            chain = self._build_chain(pos, player, direction)
            if chain is None:
                continue
            if chain[1]:
                chains.append((chain[0], inside))
                if len(chains) == wanted:
                    break
            elif 0 < len(chain[0]) < 4:
                # a short contour that does not go round its gap cannot close one the other way
                wanted -= 1
                if len(chains) == wanted:
                    break
        if not chains:
            return []
        chains.sort(key=lambda c: len(c[0]))
        made = []
        for chain, inside in chains:
            enclosure = self._capture(chain, inside, player)
            if enclosure is not None:
                made.append(enclosure)
        return made

    def _build_chain(self, start: int, player: int, direction: int) -> tuple[list[int], bool] | None:
        """Trace the contour of own live dots from `start` round one gap.

        Returns (chain, goes_round_the_gap), or None when the walk touched the edge, which means
        the gap is open to the outside.
        """
        live = self.live
        offsets = self.offsets
        self._stamp += 1
        stamp = self._stamp
        tag = self._tag
        center = start + offsets[direction]
        chain = [start, center]
        tag[center] = stamp
        while True:
            direction = ((direction + 6) | 1) & 7
            pos = center + offsets[direction]
            while live[pos] != player:
                if live[pos] == EDGE:
                    return None
                direction = (direction + 1) & 7
                pos = center + offsets[direction]
            if pos == start:
                break
            if tag[pos] == stamp:
                while chain[-1] != pos:
                    tag[chain.pop()] = 0
            else:
                tag[pos] = stamp
                chain.append(pos)
            center = pos
        s = self.stride
        area = 0
        px, py = start % s, start // s
        for pos in chain[1:]:
            x, y = pos % s, pos // s
            area += px * y - py * x
            px, py = x, y
        x, y = start % s, start // s
        area += px * y - py * x
        return chain, area < 0

    def _interior(self, chain: list[int] | tuple[int, ...], inside: int) -> list[int]:
        """Everything inside a traced ring: a flood from `inside` walled by the ring alone.

        Own dots, pools and older realms inside are part of it (rules.md 2.1: holes are swallowed).
        """
        self._stamp += 1
        stamp = self._stamp
        tag = self._tag
        for pos in chain:
            tag[pos] = stamp
        if tag[inside] == stamp:
            return []
        s = self.stride
        color = self.color
        tag[inside] = stamp
        found = [inside]
        i = 0
        while i < len(found):
            pos = found[i]
            i += 1
            for nxt in (pos - s, pos + 1, pos + s, pos - 1):
                if tag[nxt] != stamp:
                    if color[nxt] == EDGE:  # not enclosed after all; never expected for a traced ring
                        return []
                    tag[nxt] = stamp
                    found.append(nxt)
        return found

    def _capture(self, chain: list[int] | tuple[int, ...], inside: int, player: int) -> Enclosure | None:
        """Make a realm of the interior if it holds a live enemy dot, else a pool."""
        interior = self._interior(chain, inside)
        enemy = 3 - player
        color = self.color
        realm = self.realm
        captured = 0
        for pos in interior:
            if color[pos] == enemy and realm[pos] != player:
                captured += 1
        if captured == 0:
            pool = self.pool
            for pos in interior:
                if color[pos] == EMPTY and not realm[pos]:
                    pool[pos] = player
            return None
        return self._make_realm(tuple(chain), interior, player, captured)

    def _make_realm(
        self, ring: tuple[int, ...], interior: list[int], player: int, captured: int
    ) -> Enclosure:
        enemy = 3 - player
        color = self.color
        realm = self.realm
        live = self.live
        bound = self.bound
        pool = self.pool
        freed = 0
        for pos in interior:
            c = color[pos]
            if c == EMPTY:
                if not realm[pos]:
                    self.free_points -= 1
                pool[pos] = 0
            elif c == enemy:
                live[pos] = 0
                bound[pos] = 0
            elif realm[pos] == enemy:
                freed += 1
                live[pos] = player
            realm[pos] = player
        for pos in ring:
            bound[pos] = 1
        self.score[player] += captured
        self.score[enemy] -= freed
        return Enclosure(player, ring, captured, freed)

    def _dissolve_pool(self, start: int) -> None:
        pool = self.pool
        s = self.stride
        pool[start] = 0
        todo = [start]
        while todo:
            pos = todo.pop()
            for nxt in (pos - s, pos + 1, pos + s, pos - 1):
                if pool[nxt]:
                    pool[nxt] = 0
                    todo.append(nxt)

    def _ring_around(self, target: int, player: int) -> tuple[list[int], int] | None:
        """The minimal ring of the player's live dots round `target`, with a point of its inside.

        Walks west from the target to the first live dot of the player; every ring through it
        that goes round the target is tried, so dots of islands inside the region are passed.
        """
        live = self.live
        pos = target - 1
        while True:
            while live[pos] != player:
                if live[pos] == EDGE:
                    return None
                pos -= 1
            for direction, inside in self._input_points(pos, player):
                chain = self._build_chain(pos, player, direction)
                if chain is not None and chain[1] and self._inside_ring(target, chain[0]):
                    return chain[0], inside
            pos -= 1

    def _inside_ring(self, pos: int, ring: list[int] | tuple[int, ...]) -> bool:
        s = self.stride
        x, y = pos % s, pos // s
        inside = False
        prev = ring[-1]
        px, py = prev % s, prev // s
        for cur in ring:
            cx, cy = cur % s, cur // s
            if (cy > y) != (py > y) and x < px + (y - py) * (cx - px) / (cy - py):
                inside = not inside
            px, py = cx, cy
        return inside

    def _enclose_point(self, target: int, player: int) -> Enclosure | None:
        found = self._ring_around(target, player)
        if found is None:
            return None
        ring, _ = found
        interior = self._interior(ring, target)
        enemy = 3 - player
        captured = sum(1 for pos in interior if self.color[pos] == enemy and self.realm[pos] != player)
        if not interior or not captured:
            return None
        return self._make_realm(tuple(ring), interior, player, captured)

    # --- manual enclosures (territory rules) ---------------------------------------------------

    def enclose_target(self, target: int, player: int) -> Enclosure | None:
        """`!target`: the minimal-area realm round an enemy dot, or None when none exists."""
        if self.live[target] != 3 - player:
            raise IllegalMove("the enclosure target must be a live enemy dot")
        return self._enclose_point(target, player)

    def enclose_ring(self, ring: list[int], player: int, *, territory: bool = False) -> Enclosure:
        """A manual ring: a closed path of the player's live dots, each step to one of the 8 neighbours.

        An ordinary ring must hold at least one live enemy dot; a final territory ring
        (`territory=True`) may hold none.
        """
        self._check_ring(ring, player)
        interior = self.polygon_interior(ring)
        enemy = 3 - player
        color = self.color
        realm = self.realm
        captured = sum(1 for pos in interior if color[pos] == enemy and realm[pos] != player)
        if not territory and not any(self.live[pos] == enemy for pos in interior):
            raise IllegalMove("the ring encloses no live enemy dot")
        return self._make_realm(tuple(ring[:-1]), interior, player, captured)

    def _check_ring(self, ring: list[int], player: int) -> None:
        if len(ring) < 5 or ring[0] != ring[-1]:
            raise IllegalMove("a ring must be closed and pass through at least 4 dots")
        dots = ring[:-1]
        if len(set(dots)) != len(dots):
            raise IllegalMove("a ring may pass through each dot only once")
        s = self.stride
        neighbours = {-s - 1, -s, -s + 1, -1, 1, s - 1, s, s + 1}
        for a, b in itertools.pairwise(ring):
            if b - a not in neighbours:
                raise IllegalMove(f"ring step {self.point(a)} -> {self.point(b)} is not to a neighbour")
        for pos in dots:
            if self.color[pos] != player or self.realm[pos]:
                raise IllegalMove(f"ring point {self.point(pos)} is not a live dot of the player")

    def polygon_interior(self, ring: list[int]) -> list[int]:
        """Points strictly inside a closed lattice path, by a crossing count per row.

        Steps go to 8-neighbours, so every crossing of a row lies on a ring dot of that row;
        the half-open rule counts a dot where the path only touches the row zero or two times.
        """
        s = self.stride
        xy = [(pos % s, pos // s) for pos in ring]
        on_ring = set(ring)
        rows = [y for _, y in xy]
        interior = []
        for row in range(min(rows) + 1, max(rows)):
            crossings = sorted(
                ax + (row - ay) * (bx - ax) * (by - ay)
                for (ax, ay), (bx, by) in itertools.pairwise(xy)
                if (ay > row) != (by > row)
            )
            for left, right in zip(crossings[::2], crossings[1::2], strict=True):
                for pos in range(row * s + left + 1, row * s + right):
                    if pos not in on_ring:
                        interior.append(pos)
        return interior

    # --- final territory ------------------------------------------------------------------------

    def territory_regions(self, player: int) -> list[tuple[int, tuple[int, ...]]]:
        """(size, ring) of every region of non-own-live points the player's live dots cut off from
        the edge, when it holds a free point or a live enemy dot."""
        live = self.live
        s = self.stride
        seen = [False] * self.size
        found = []
        for start in self.board_indices():
            if seen[start] or live[start] == player:
                continue
            seen[start] = True
            region = [start]
            bounded = True
            i = 0
            while i < len(region):
                pos = region[i]
                i += 1
                for nxt in (pos - s, pos + 1, pos + s, pos - 1):
                    if live[nxt] == EDGE:
                        bounded = False
                    elif not seen[nxt] and live[nxt] != player:
                        seen[nxt] = True
                        region.append(nxt)
            worth = any(self.playable(pos) or live[pos] == 3 - player for pos in region)
            if bounded and worth:
                ring = self._ring_around(start, player)
                if ring is not None:
                    found.append((len(region), tuple(ring[0])))
        return found

    # --- grounding (STOP) ----------------------------------------------------------------------

    def ungrounded(self, player: int) -> list[int]:
        """The player's own points not joined to the edge through the player's own points.

        Own points are own live dots and own realm points (empty ones and the enemy dots captured
        there); pools are not. Steps are orthogonal only, because the opponent can cut a diagonal
        link. What a STOP gives away (rules.md 1.6).
        """
        color = self.color
        live = self.live
        realm = self.realm
        s = self.stride

        def owned(pos: int) -> bool:
            return live[pos] == player or (realm[pos] == player and color[pos] != EDGE)

        seen = [False] * self.size
        todo = []
        for pos in self.board_indices():
            x, y = self.point(pos)
            if (x in (0, self.width - 1) or y in (0, self.height - 1)) and owned(pos):
                seen[pos] = True
                todo.append(pos)
        while todo:
            pos = todo.pop()
            for nxt in (pos - s, pos + 1, pos + s, pos - 1):
                if not seen[nxt] and owned(nxt):
                    seen[nxt] = True
                    todo.append(nxt)
        return [pos for pos in self.board_indices() if owned(pos) and not seen[pos]]
