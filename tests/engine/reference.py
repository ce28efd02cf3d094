"""A slow, deliberately simple reference for the automatic capture rules (rules.md 2.1-2.3).

Used only by tests, as an oracle for differential tests of the fast engine. Everything is recomputed
with plain floods over sets and dicts; nothing is cached between moves except the three maps below.

State
    _dots   point -> colour of the dot on it (1 = blue/B, 2 = red/W)
    _realm  point -> owner of the realm whose interior holds the point. Kept for every point that was
            inside a realm when it was made: empty points, enemy dots (captured) and own dots that were
            dead at that moment (liberated). Own dots that were live are walls, not interior, and are
            never stored. A later realm overwrites the label, so it always names the current owner.
    _pool   point -> owner of the pool covering a free point.

The rule, for player P putting a dot at p (the region formulation of rules.md 2.1/2.2):
    * a live dot of P is a dot of P that is not inside an opponent realm;
    * for each orthogonal neighbour q of p that is not a live P dot, flood (4-connectivity) through
      points that are not live P dots; if the flood reaches the board edge nothing is enclosed in that
      direction, otherwise the flooded set R is enclosed;
    * the interior of R is everything strictly inside R's tightest ring (see `_interior`): R itself plus
      the holes it surrounds (own islands and whatever they hold: pools, old realms, ...);
    * an interior with a live enemy dot becomes P's realm, otherwise its free points become P's pool;
    * directions are handled one by one, smallest interior first (an inner enclosure sharing the new dot
      with an outer one is decided first, as in oppai-rs, which sorts its rings by length);
    * a dot put into the enemy's pool: if its own enclosures make a realm, the pool points 4-connected to
      it are dissolved; otherwise the pool owner at once takes the region flooded from the new dot
      through points that are not live dots of the pool owner (as a realm);
    * a dot put into its owner's pool: no enclosure is evaluated, the point just stops being pool.

Scores are not kept: score(P) counts the enemy dots whose realm label is P, so dots already inside an
old realm are never counted twice, and liberated dots leave the enemy's score by themselves.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

Point = tuple[int, int]

BLUE = 1
RED = 2

# Sub-grid used by `_interior`: a point (x, y) is the pixel (4x, 4y). Four pixels per unit are enough
# for every piece of the drawing (a dot, a link, the free space between two links) to own a pixel.
_SCALE = 4


def _other(player: int) -> int:
    return 3 - player


def _neighbours4(point: Point) -> Iterator[Point]:
    x, y = point
    yield x, y - 1
    yield x + 1, y
    yield x, y + 1
    yield x - 1, y


def _flood(seeds: Iterable[Point], passable: Callable[[Point], bool]) -> set[Point]:
    """All points 4-connected to a passable seed through passable points."""
    seen = {s for s in seeds if passable(s)}
    todo = list(seen)
    while todo:
        for n in _neighbours4(todo.pop()):
            if n not in seen and passable(n):
                seen.add(n)
                todo.append(n)
    return seen


class ReferenceBoard:
    """Board with automatic minimal-area enclosures. Player 1 = blue (SGF B), player 2 = red (SGF W)."""

    def __init__(self, width: int, height: int) -> None:
        if width < 1 or height < 1:
            raise ValueError("board sides must be positive")
        self.width = width
        self.height = height
        self._dots: dict[Point, int] = {}
        self._realm: dict[Point, int] = {}
        self._pool: dict[Point, int] = {}

    # --- queries -------------------------------------------------------------------------------
    # Points off the board answer 0 / False.

    def on_board(self, x: int, y: int) -> bool:
        return 0 <= x < self.width and 0 <= y < self.height

    def dot(self, x: int, y: int) -> int:
        """0 for an empty point, else the colour of the dot there (dead or alive)."""
        return self._dots.get((x, y), 0)

    def realm(self, x: int, y: int) -> int:
        """Owner of the realm holding the point, with one exception: 0 for a dot of that owner.

        * empty point inside a realm -> the realm's owner (the point is unplayable);
        * captured dot (inside an enemy realm) -> the capturing player;
        * own dot inside (or on the border of) its owner's realm -> 0: it is alive, not "in a realm";
        * anything else -> 0.
        """
        owner = self._realm.get((x, y), 0)
        return 0 if owner == self.dot(x, y) else owner

    def pool(self, x: int, y: int) -> int:
        """Owner of the pool covering this point; only empty points outside realms can be pool."""
        return self._pool.get((x, y), 0)

    def is_live(self, x: int, y: int) -> bool:
        """True for a dot that is not inside an enemy realm; False for empty points."""
        colour = self.dot(x, y)
        return colour != 0 and self._realm.get((x, y), 0) != _other(colour)

    def playable(self, x: int, y: int) -> bool:
        """On the board, empty and not inside a realm (pools are playable)."""
        return self.on_board(x, y) and (x, y) not in self._dots and (x, y) not in self._realm

    def score(self, player: int) -> int:
        """Number of enemy dots inside the player's realms."""
        enemy = _other(player)
        return sum(1 for p, c in self._dots.items() if c == enemy and self._realm.get(p) == player)

    # --- the move ------------------------------------------------------------------------------

    def play(self, x: int, y: int, player: int) -> bool:
        """Put a dot and apply every automatic enclosure; False (and no change) if the point is illegal."""
        if player not in (BLUE, RED):
            raise ValueError(f"player must be 1 or 2, not {player!r}")
        if not self.playable(x, y):
            return False
        p = (x, y)
        self._dots[p] = player
        pool_owner = self._pool.pop(p, 0)
        if pool_owner == player:
            return True
        made_realm = self._enclose(p, player)
        if pool_owner:
            if made_realm:
                self._dissolve_pool(p, pool_owner)
            else:
                self._capture_invader(p, pool_owner)
        return True

    # --- rules ---------------------------------------------------------------------------------

    def _live_of(self, point: Point, player: int) -> bool:
        """Is there a live dot of `player` on this point?"""
        return self._dots.get(point) == player and self._realm.get(point, 0) != _other(player)

    def _enclose(self, p: Point, player: int) -> bool:
        """Evaluate the enclosures of `player`'s new dot at p; True if at least one realm was made."""
        escaped: set[Point] = set()  # points known to reach the edge during this move
        regions: list[set[Point]] = []
        for q in _neighbours4(p):
            if not self.on_board(*q) or self._live_of(q, player) or any(q in r for r in regions):
                continue
            region = self._region(q, player, escaped)
            if region is not None:
                regions.append(region)
        made_realm = False
        for interior in sorted((self._interior(r, player) for r in regions), key=len):
            if any(self._live_of(z, _other(player)) for z in interior):
                self._make_realm(interior, player)
                made_realm = True
            else:
                self._make_pool(interior, player)
        return made_realm

    def _region(self, start: Point, player: int, escaped: set[Point]) -> set[Point] | None:
        """Flood from `start` through points that are not live dots of `player`.

        None when the flood reaches the edge of the board (then every point it saw also reaches it and
        is added to `escaped`, so other directions touching them stop at once).
        """
        seen = {start}
        todo = [start]
        while todo:
            point = todo.pop()
            x, y = point
            if point in escaped or x in (0, self.width - 1) or y in (0, self.height - 1):
                escaped |= seen
                return None
            for n in _neighbours4(point):
                if n not in seen and not self._live_of(n, player):
                    seen.add(n)
                    todo.append(n)
        return seen

    def _interior(self, region: set[Point], player: int) -> set[Point]:
        """Points strictly inside the tightest ring of `player` around `region`, own live dots left out.

        The method is plane geometry done on a finer grid (each unit split in `_SCALE` pixels):

        1. Draw the player's possible ring material as walls: every live dot and every straight link
           between two live dots that are neighbours (orthogonally or diagonally; crossing diagonals
           are both drawn).
        2. `face`: the pixels 4-connected to the region without crossing a wall. This is the open area
           around the region bounded by those links; its lattice points are exactly `region` (checked).
        3. `closed`: the face plus the wall pixels touching it (4-adjacent), i.e. its closure: the
           dots and links that bound it.
        4. `outside`: the pixels reachable from beyond the region's bounding box without entering
           `closed`. Walls that do not touch the face are crossable here, so a pocket that only
           touches the region at a corner, or reaches the outside between two links, is outside.
        5. The interior is every lattice point that is not outside: the region and every hole in it
           (islands of own dots and whatever they enclose). The border dots touch `outside` and own
           dots are left out anyway: their realm label does not matter.

        This is "strictly inside the simple ring of minimal area that goes round the region": the
        boundary of `outside` is that ring. A small pixel grid is exact here because every link is a
        horizontal, vertical or diagonal unit segment between lattice points. Two shapes where simpler
        rules go wrong are in test_reference.py: an island joined to the ring by one dot is inside,
        pockets that touch the region only at a corner are not.
        """
        s = _SCALE
        x0 = min(x for x, _ in region) - 1  # the ring lies inside this lattice box
        x1 = max(x for x, _ in region) + 1
        y0 = min(y for _, y in region) - 1
        y1 = max(y for _, y in region) + 1
        lo_x, hi_x, lo_y, hi_y = s * x0 - 1, s * x1 + 1, s * y0 - 1, s * y1 + 1  # one pixel beyond

        def in_box(c: Point) -> bool:
            return lo_x <= c[0] <= hi_x and lo_y <= c[1] <= hi_y

        def wall(c: Point) -> bool:
            return self._is_wall(c, player)

        sx, sy = next(iter(region))
        face = _flood([(s * sx, s * sy)], lambda c: in_box(c) and not wall(c))
        lattice = {(X // s, Y // s) for X, Y in face if X % s == 0 and Y % s == 0}
        assert lattice == region, "the face round a region holds exactly the region's points"
        assert all(lo_x < X < hi_x and lo_y < Y < hi_y for X, Y in face), "the face is bounded"
        closed = face | {n for c in face for n in _neighbours4(c) if wall(n)}
        border = [(X, Y) for X in range(lo_x, hi_x + 1) for Y in (lo_y, hi_y)]
        border += [(X, Y) for X in (lo_x, hi_x) for Y in range(lo_y, hi_y + 1)]
        outside = _flood(border, lambda c: in_box(c) and c not in closed)
        return {
            (x, y)
            for x in range(x0, x1 + 1)
            for y in range(y0, y1 + 1)
            if (s * x, s * y) not in outside and not self._live_of((x, y), player)
        }

    def _is_wall(self, pixel: Point, player: int) -> bool:
        """Is this pixel on a live dot of `player` or on a link between two of them?"""
        x, i = divmod(pixel[0], _SCALE)
        y, j = divmod(pixel[1], _SCALE)
        live = self._live_of
        if i == 0 and j == 0:
            return live((x, y), player)
        if j == 0:  # on the horizontal unit segment (x, y) - (x + 1, y)
            return live((x, y), player) and live((x + 1, y), player)
        if i == 0:  # on the vertical unit segment (x, y) - (x, y + 1)
            return live((x, y), player) and live((x, y + 1), player)
        # inside the unit square with corner (x, y): on one of its diagonals?
        return (i == j and live((x, y), player) and live((x + 1, y + 1), player)) or (
            i + j == _SCALE and live((x + 1, y), player) and live((x, y + 1), player)
        )

    def _make_realm(self, interior: set[Point], player: int) -> None:
        """Everything inside becomes the player's: enemy dots captured, own dead dots liberated."""
        for z in interior:
            self._realm[z] = player
            self._pool.pop(z, None)

    def _make_pool(self, interior: set[Point], player: int) -> None:
        """The free points inside (not in any realm) become the player's pool."""
        for z in interior:
            if z not in self._dots and z not in self._realm:
                self._pool[z] = player

    def _dissolve_pool(self, p: Point, owner: int) -> None:
        """The owner's pool points 4-connected to p stop being pool."""
        for z in _flood(_neighbours4(p), lambda c: self._pool.get(c) == owner):
            del self._pool[z]

    def _capture_invader(self, p: Point, owner: int) -> None:
        """The pool owner takes the minimal region round the enemy dot just put into the pool."""
        region = self._region(p, owner, set())
        assert region is not None, "a pool is always enclosed by live dots of its owner"
        self._make_realm(self._interior(region, owner), owner)


def scores_after_grounding(board: ReferenceBoard, stopper: int) -> tuple[int, int]:
    """(blue, red) scores once `stopper` grounds, read plainly from rules.md 1.6 and the two engines it
    cites (oppai-rs `update_grounded`, KvanTTT dots-game `ground()`):

    * the stopper's own points are its live dots and the points of its realms (empty realm points and
      the enemy dots captured there); pools are not own points;
    * a group is a set of own points joined by orthogonal steps; a group with a point on the board's
      edge is grounded;
    * every other group goes to the opponent: each stopper dot in it counts as captured by the
      opponent, and each opponent dot in it (one the stopper had captured) is freed, leaving the
      stopper's score.
    """

    def own(point: Point) -> bool:
        x, y = point
        if not board.on_board(x, y):
            return False
        if board.dot(x, y) == stopper and board.is_live(x, y):
            return True
        return board.realm(x, y) == stopper

    every = [(x, y) for x in range(board.width) for y in range(board.height)]
    edge = [(x, y) for x, y in every if x in (0, board.width - 1) or y in (0, board.height - 1)]
    grounded = _flood(edge, own)
    cut_off = [p for p in every if own(p) and p not in grounded]
    lost_dots = sum(1 for x, y in cut_off if board.dot(x, y) == stopper)
    freed_dots = sum(1 for x, y in cut_off if board.dot(x, y) == _other(stopper))
    scores = {BLUE: board.score(BLUE), RED: board.score(RED)}
    scores[_other(stopper)] += lost_dots
    scores[stopper] -= freed_dots
    return scores[BLUE], scores[RED]
