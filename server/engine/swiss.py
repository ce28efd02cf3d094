"""FIDE Dutch swiss pairings (Handbook C.04.3 as in force since 2025, with C.04.1 and C.04.2).

Over 500 lines because the Dutch rules are one procedure: the quality criteria are packed,
in their order of priority, into the integer weight of every possible pair, and the pairing is a
sequence of maximum-weight matchings (blossom.py) over all players, one bracket after the other, each
fixing what the rules decide at that point (who floats down, which exchanges, which opponents). This
is the method of bbpPairings, the FIDE-endorsed engine this module is checked against
(tests/engine/test_swiss.py and the tournaments it generated in tests/fixtures/swiss/): every step
follows its Dutch engine closely, because the order in which ties are broken is where two correct-
looking implementations part. docs/tournaments.md ("Swiss pairing") says what organisers see.

Pure: no I/O; the caller (the tournament runner) hands in every player's past rounds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Literal

from server.engine.blossom import Matching

Colour = Literal["white", "black"]  # in dots, "white" is the player who moves first (pl1, blue)

WIN = Fraction(1)  # what a won game gives; the rules' thresholds (topscorers, bye eligibility) use it


class NoPairing(ValueError):
    """No pairing of these players satisfies the absolute criteria (no repeat, colours, byes)."""


@dataclass(frozen=True)
class Round:
    """One past round of one player."""

    opponent: str | None  # None: no opponent (a pairing-allocated bye, or absent / not paired)
    colour: Colour | None  # the colour played; None when no game was played over the board
    points: float  # what the round gave the player: 1, 0.5 or 0 (a bye: what the caller awards)
    played: bool  # False: not played over the board (bye, forfeit win/loss, void, absent)
    bye: bool = False  # a pairing-allocated bye


@dataclass(frozen=True)
class Entrant:
    key: str  # unique and stable
    rating: float  # informative only: the caller already sorted by it
    rounds: tuple[Round, ...]  # one per round so far, the same number for everyone (a late entrant
    # or an absent round: Round(None, None, 0, False))
    number: int = 0  # pairing number in the initial ranking (1 = top); 0: the place in the list given
    # (only needed when players who are not paired this round are passed as `others`)


@dataclass(frozen=True)
class Pairing:
    boards: tuple[tuple[str, str], ...]  # (white, black), in FIDE's board order
    bye: str | None  # who gets the pairing-allocated bye, if anyone


_DOWN, _UP, _NONE = "down", "up", None


def _other(colour: Colour) -> Colour:
    return "black" if colour == "white" else "white"


def _invert(colour: Colour | None) -> Colour | None:
    return None if colour is None else _other(colour)


@dataclass
class _Player:
    """What the rules read from one player's history."""

    key: str
    rank: int  # 0-based effective pairing number: ties in score are broken by it, and colours by its parity
    score: Fraction
    rounds: tuple[Round, ...]
    played_games: int = 0
    imbalance: int = 0  # |games as white - games as black|
    preference: Colour | None = None
    repeated: Colour | None = None  # the colour of the last two games, when they had the same one
    strong: bool = False
    bye_eligible: bool = True
    floats: tuple[str | None, str | None] = (_NONE, _NONE)  # last round, the round before it
    met: frozenset[str] = field(default_factory=frozenset)  # opponents of games played over the board

    @property
    def absolute_imbalance(self) -> bool:
        return self.imbalance > 1

    @property
    def absolute(self) -> bool:
        return self.absolute_imbalance or self.repeated is not None


def _fraction(points: float) -> Fraction:
    return Fraction(points).limit_denominator(1000)


def _colour_facts(player: _Player) -> None:
    """Colour difference and preference, from the games played over the board."""
    white = black = consecutive = 0
    last: Colour | None = None
    for round_ in player.rounds:
        if not round_.played:
            continue
        player.played_games += 1
        if round_.colour == "white":
            white += 1
        else:
            black += 1
        consecutive = consecutive + 1 if consecutive and round_.colour == last else 1
        last = round_.colour
    lower: Colour = "black" if white > black else "white"
    player.imbalance = abs(white - black)
    if player.imbalance > 1:
        player.preference = lower
    elif consecutive > 1:
        player.preference = _invert(last)
    elif player.imbalance > 0:
        player.preference = lower
    elif consecutive:
        player.preference = _invert(last)
    player.repeated = last if consecutive > 1 else None
    player.strong = not player.absolute and player.imbalance > 0


def _score_before(rounds: Sequence[Round], index: int) -> Fraction:
    return sum((_fraction(round_.points) for round_ in rounds[:index]), Fraction(0))


def _float(rounds: Sequence[Round], index: int, history: dict[str, tuple[Round, ...]]) -> str | None:
    """The float a round gave (C.04.3 1.4): down to the higher-scored player of a game between
    different scores and to a player who scored more than a loss without playing, up to the other."""
    round_ = rounds[index]
    if not round_.played:
        return _DOWN if round_.points > 0 else _NONE
    opponent = history.get(round_.opponent or "")
    if opponent is None:
        return _NONE
    mine, theirs = _score_before(rounds, index), _score_before(opponent, index)
    return _DOWN if mine > theirs else _UP if mine < theirs else _NONE


def _players(entrants: Sequence[Entrant], others: Sequence[Entrant]) -> list[_Player]:
    keys = [entrant.key for entrant in (*entrants, *others)]
    if len(set(keys)) != len(keys):
        raise ValueError("two players have the same key")
    history = {entrant.key: entrant.rounds for entrant in (*entrants, *others)}
    played = {len(entrant.rounds) for entrant in (*entrants, *others)}
    if len(played) > 1:
        raise ValueError("every player needs one Round per round played so far")
    if others and any(entrant.number <= 0 for entrant in (*entrants, *others)):
        raise ValueError("with others, every player needs its pairing number")
    for entrant in (*entrants, *others):
        for round_ in entrant.rounds:
            if round_.played and (round_.colour not in ("white", "black") or round_.opponent is None):
                raise ValueError(f"a played round of {entrant.key} lacks its opponent or colour")
    # The effective pairing numbers count the players paired now and those who took part in an
    # earlier pairing (withdrawn or absent now), in the initial ranking's order (bbpPairings' reading).
    ranked = [(entrant.number or place, entrant.key) for place, entrant in enumerate(entrants, start=1)] + [
        (entrant.number, entrant.key)
        for entrant in others
        if any(round_.opponent is not None or round_.bye for round_ in entrant.rounds)
    ]
    rank_of = {key: rank for rank, (_, key) in enumerate(sorted(ranked))}
    players = []
    for entrant in entrants:
        rounds = entrant.rounds
        player = _Player(
            key=entrant.key,
            rank=rank_of[entrant.key],
            score=_score_before(rounds, len(rounds)),
            rounds=rounds,
            met=frozenset(r.opponent for r in rounds if r.played and r.opponent is not None),
            # C.04.1: no second pairing-allocated bye, and none after scoring a win without playing.
            bye_eligible=not any(not r.played and (r.bye or _fraction(r.points) >= WIN) for r in rounds),
            floats=(
                _float(rounds, len(rounds) - 1, history) if rounds else _NONE,
                _float(rounds, len(rounds) - 2, history) if len(rounds) > 1 else _NONE,
            ),
        )
        _colour_facts(player)
        players.append(player)
    return players


def _higher_first(player: _Player) -> tuple[Fraction, int]:
    return (-player.score, player.rank)


def _colours_compatible(first: Colour | None, second: Colour | None) -> bool:
    return first != second or first is None or second is None


def _last_different_colours(player: _Player, opponent: _Player) -> tuple[Colour | None, Colour | None]:
    """The colours the two had in the latest round (counting each one's own played games back from
    the last) in which they differed."""
    mine = [r.colour for r in reversed(player.rounds) if r.played]
    theirs = [r.colour for r in reversed(opponent.rounds) if r.played]
    for own, other in zip(mine, theirs, strict=False):
        if own != other:
            return own, other
    return None, None


def _neutral_colour(player: _Player, opponent: _Player) -> Colour | None:
    """The colour for `player` from the colour allocation rules, None when they leave it open."""
    if _colours_compatible(player.preference, opponent.preference):
        if player.preference is not None:
            return player.preference
        return _invert(opponent.preference)
    if player.absolute and (player.imbalance > opponent.imbalance or not opponent.absolute):
        return player.preference
    if opponent.absolute and (opponent.imbalance > player.imbalance or not player.absolute):
        return _invert(opponent.preference)
    if player.strong and not opponent.strong:
        return player.preference
    if opponent.strong and not player.strong:
        return _invert(opponent.preference)
    own, other = _last_different_colours(player, opponent)
    return other if own is not None and other is not None else None


def _colour(player: _Player, opponent: _Player, initial: Colour) -> Colour:
    """`player`'s colour against `opponent`. What the colour rules leave open goes the way of the
    higher-ranked player: its preference (both have the same one then), or with none, the initial
    colour when its pairing number is odd (0-based rank even)."""
    colour = _neutral_colour(player, opponent)
    if colour is not None:
        return colour
    higher = opponent if _higher_first(player) > _higher_first(opponent) else player
    if higher.preference is not None:
        higher_colour = higher.preference
    else:
        higher_colour = initial if higher.rank % 2 == 0 else _other(initial)
    return higher_colour if higher is player else _other(higher_colour)


def pair_round(
    entrants: Sequence[Entrant],
    total_rounds: int,
    *,
    top_seed_white: bool = True,
    others: Sequence[Entrant] = (),
) -> Pairing:
    """entrants: the players to pair this round, in the order of the initial ranking (pairing
    number 1 first); withdrawn players are left out by the caller.

    others: optional, the players not paired this round who were paired before (withdrawn or
    absent), each with its `number`: they keep their pairing numbers (colour allocation reads their
    parity) and their games tell their past opponents' floats. Without them, the entrants' places
    are their pairing numbers and a game against a missing player counts as no float.
    """
    if total_rounds < 1:
        raise ValueError("total_rounds must be at least 1")
    players = _players(entrants, others)
    if not players:
        return Pairing(boards=(), bye=None)
    initial: Colour = "white" if top_seed_white else "black"
    played_rounds = len(players[0].rounds)
    pairs, bye = _Dutch(players, played_rounds, total_rounds).pair()
    boards = []
    for first, second in pairs:
        white, black = (first, second) if _colour(first, second, initial) == "white" else (second, first)
        boards.append((white, black))
    boards.sort(key=_board_order)
    return Pairing(
        boards=tuple((white.key, black.key) for white, black in boards),
        bye=None if bye is None else bye.key,
    )


def _board_order(board: tuple[_Player, _Player]) -> tuple[Fraction, Fraction, int]:
    """C.04.2: boards by the higher score of the pair, then the lower score, then the higher-ranked
    player's pairing number."""
    higher, lower = sorted(board, key=_higher_first)
    return (-higher.score, -lower.score, higher.rank)


class _Dutch:
    """One round's Dutch pairing, bracket by bracket, as bbpPairings' Dutch engine does it.

    Vertices of the matching are the players in pairing order (score, then rank). A pair's weight
    packs the criteria from most to least important into bit fields; each field is wide enough that
    no sum of lower fields over a whole matching can reach it, so the maximum-weight matching is the
    lexicographically best one. Fields of players outside the bracket being paired are 0, so each
    bracket is optimised while the weights of the absolute criteria and of "pair as many and as high
    scores as possible" keep the rest of the round pairable (the completion criterion).
    """

    def __init__(self, players: list[_Player], played_rounds: int, total_rounds: int) -> None:
        self.sorted = sorted(players, key=_higher_first)
        self.played_rounds = played_rounds
        self.last_round = played_rounds >= total_rounds - 1
        self.top_threshold = Fraction(played_rounds) * WIN / 2  # topscorers: over half the points
        # Each score group gets a field wide enough to count its players; higher groups sit higher.
        self.group_shift: dict[Fraction, int] = {}
        shift = largest = 0
        for score in sorted({player.score for player in self.sorted}):
            size = sum(1 for player in self.sorted if player.score == score)
            self.group_shift[score] = shift
            shift += size.bit_length()
            largest = max(largest, size)
        self.groups_bits = shift
        self.size_bits = largest.bit_length()
        self.max_weight = (1 << (self._weight_bits() + 2)) - 1
        self.matching = Matching(len(self.sorted))
        self.bye_score = Fraction(0)
        self.single_downfloater_is_bye = False
        self.unplayed_ranks: dict[int, int] = {}

    # -- the weight of a pair ---------------------------------------------------------------------

    def _weight_bits(self) -> int:
        """How far the top field (completion) sits above bit 0."""
        size, groups = self.size_bits, self.groups_bits
        bits = 2 * size + 2 * groups + 2 * size + 4 * size + 3 * size + 1
        if self.played_rounds:
            bits += 2 * size + 2 * groups
        if self.played_rounds > 1:
            bits += 2 * size + 2 * groups
        return bits

    def compatible(self, first: _Player, second: _Player) -> bool:
        """The absolute criteria of C.04.1: no repeat of a game played over the board, and two
        players with the same absolute colour preference never meet, except topscorers in the last
        round."""
        if second.key in first.met:
            return False
        return (
            not first.absolute
            or not second.absolute
            or first.preference != second.preference
            or (self.last_round and (first.score > self.top_threshold or second.score > self.top_threshold))
        )

    def _bye_candidate(self, player: _Player) -> bool:
        return player.bye_eligible and player.score <= self.bye_score

    def weight(self, higher: _Player, lower: _Player, in_bracket: bool, in_next: bool) -> int:
        """The pair's weight while the bracket holding `higher` is paired; `lower` comes later in the
        pairing order and is in that bracket, in the next one, or further down (both flags False)."""
        if not self.compatible(higher, lower):
            return 0
        size, groups, shift = self.size_bits, self.groups_bits, self.group_shift
        weight = 1 + (not self._bye_candidate(higher)) + (not self._bye_candidate(lower))
        # Pair as many players of the bracket as possible, then as high scores as possible ...
        weight = (weight << size) | in_bracket
        weight <<= groups
        if in_bracket:
            weight |= 1 << shift[higher.score]
        # ... and likewise in the next bracket.
        weight = (weight << size) | in_next
        weight <<= groups
        if in_next:
            weight |= 1 << shift[higher.score]
        # The bye goes to the player with the fewest unplayed games among the lowest eligible.
        weight <<= 2 * size
        if self.single_downfloater_is_bye:
            if higher.score == self.bye_score:
                weight |= self.unplayed_ranks[higher.played_games]
            if lower.score == self.bye_score:
                weight += self.unplayed_ranks[lower.played_games]
        # Colours: as few topscorers as possible beyond a difference of two, then with a colour three
        # times in a row (only topscorers may meet with the same absolute need), then as many players as
        # possible with the colour they prefer, then with their strong preference.
        first, second = lower, higher
        weight = (weight << size) | (
            in_bracket
            and (
                not first.absolute_imbalance
                or not second.absolute_imbalance
                or first.preference != second.preference
            )
        )
        weight = (weight << size) | (in_bracket and self._no_absolute_clash(first, second))
        weight = (weight << size) | (in_bracket and _colours_compatible(first.preference, second.preference))
        weight = (weight << size) | (
            in_bracket
            and (
                (not first.strong and not first.absolute)
                or (not second.strong and not second.absolute)
                or (first.absolute and second.absolute)
                or first.preference != second.preference
            )
        )
        # Floats repeated from a round back and two rounds back: first their number ...
        for back in (0, 1)[: min(self.played_rounds, 2)]:
            weight <<= size
            if in_bracket:
                weight += lower.floats[back] == _DOWN
                weight += higher.score <= lower.score and higher.floats[back] == _DOWN
            weight <<= size
            if in_bracket:
                weight += not (higher.score > lower.score and lower.floats[back] == _UP)
        # ... then their scores.
        for back in (0, 1)[: min(self.played_rounds, 2)]:
            weight <<= groups
            if in_bracket:
                weight += (lower.floats[back] == _DOWN) << shift[lower.score]
                weight += (higher.floats[back] == _DOWN) << shift[higher.score]
            weight <<= groups
            if in_bracket and not (lower.floats[back] == _UP and higher.score > lower.score):
                weight |= 1 << shift[higher.score]
        # Room below for the exchanges and transpositions that pair the bracket.
        return weight << (3 * size + 1)

    @staticmethod
    def _no_absolute_clash(first: _Player, second: _Player) -> bool:
        """False when both need the same colour (topscorers in the last round) and the one who does not
        get it (the smaller colour difference; either one, when equal) then has a colour three times in
        a row."""
        if not first.absolute or not second.absolute or first.preference != second.preference:
            return True
        if first.imbalance == second.imbalance:
            return first.repeated is None or first.repeated != second.repeated
        loser = second if first.imbalance > second.imbalance else first
        return loser.repeated != _invert(first.preference)

    # -- the round --------------------------------------------------------------------------------

    def solve(self) -> list[int]:
        return self.matching.solve()

    def set(self, u: int, v: int, weight: int) -> None:
        self.matching.set_weight(u, v, weight)

    def finalize(self, u: int, v: int) -> None:
        """Fix the pair (u, v): its weight beats anything, every other edge of both goes."""
        for other in range(len(self.sorted)):
            if other != u:
                self.set(u, other, self.max_weight if other == v else 0)
            if other != v:
                self.set(v, other, self.max_weight if other == u else 0)

    def pair(self) -> tuple[list[tuple[_Player, _Player]], _Player | None]:
        players = self.sorted
        count = len(players)
        top = players[0].score
        odd = count & 1
        # First: can everyone be paired (but one, who may get the bye), and who scores lowest among
        # those who can take the bye?
        for index, player in enumerate(players):
            for other_index in range(index):
                other = players[other_index]
                if odd:
                    weight = 0
                    if self.compatible(player, other):
                        weight = 1 + (not player.bye_eligible) + (not other.bye_eligible)
                        weight = (weight << self.groups_bits) | (
                            self.group_shift[player.score] + self.group_shift[other.score]
                        )
                        weight = (weight << self.size_bits) | (player.score >= top)
                else:
                    weight = self.weight(other, player, False, False)
                self.set(index, other_index, weight)
        matching = self.solve()
        unmatched = [index for index in range(count) if matching[index] == index]
        if len(unmatched) > 1 or any(not players[index].bye_eligible for index in unmatched):
            raise NoPairing("no pairing avoids repeated games, colour clashes and a second bye")
        if odd:
            self.bye_score = players[unmatched[0]].score
            if self.bye_score >= top:
                self.single_downfloater_is_bye = all(
                    players[matching[index]].score >= top
                    for index, player in enumerate(players)
                    if player.score >= top
                )
            played = sorted(
                (player.played_games for player in players if player.score == self.bye_score), reverse=True
            )
            self.unplayed_ranks = {games: rank for rank, games in enumerate(played)}
            for index, player in enumerate(players):
                for other_index in range(index):
                    self.set(index, other_index, self.weight(players[other_index], player, False, False))
        return self._brackets()

    def _brackets(self) -> tuple[list[tuple[_Player, _Player]], _Player | None]:
        players = self.sorted
        count = len(players)
        partner: dict[int, int] = {}
        matched = [False] * count
        # The bracket being paired: its moved-down players, then its residents, then the next
        # score group (positions in `players`).
        bracket: list[int] = []
        next_group = 0
        while next_group < count and players[next_group].score >= players[0].score:
            bracket.append(next_group)
            next_group += 1
        moved_down = 0  # how many of `bracket` came down from above
        first_resident = 0  # position of the bracket's first resident
        while len(bracket) > 1 or next_group != count:
            residents_end = len(bracket)  # index in `bracket` where the next score group starts
            next_first = first_resident + (residents_end - moved_down)
            group_start = next_group
            while next_group < count and players[next_group].score >= players[group_start].score:
                bracket.append(next_group)
                next_group += 1
            step = _Bracket(self, bracket, moved_down, residents_end, first_resident, next_first, matched)
            stable = step.pair()
            # The next bracket: whoever of this one is still unpaired, then the next score group.
            carried: list[int] = []
            moved_down = 0
            self.single_downfloater_is_bye = bool(
                count & 1 and group_start != count and self.bye_score >= players[group_start].score
            )
            for index, vertex in enumerate(bracket):
                if index < residents_end and matched[vertex]:
                    partner[vertex] = stable[vertex]
                    partner[stable[vertex]] = vertex
                    continue
                carried.append(vertex)
                if index < residents_end:
                    moved_down += 1
                if (
                    self.single_downfloater_is_bye
                    and players[stable[vertex]].score < players[group_start].score
                ):
                    self.single_downfloater_is_bye = False
            bracket = carried
            first_resident = next_first
        pairs = [(players[u], players[v]) for u, v in partner.items() if u < v]
        unpaired = [players[index] for index in range(count) if index not in partner]
        return pairs, unpaired[0] if unpaired else None


class _Bracket:
    """The pairing of one bracket: which moved-down players are paired and with whom, then which
    residents form S1 (fewest exchanges, the smallest differences), then S1's opponents in order."""

    def __init__(
        self,
        dutch: _Dutch,
        bracket: list[int],
        moved_down: int,
        residents_end: int,
        first_resident: int,
        next_first: int,
        matched: list[bool],
    ) -> None:
        self.dutch = dutch
        self.vertex = bracket  # index in the bracket -> vertex (position in the pairing order)
        self.moved_down = moved_down
        self.residents_end = residents_end
        self.first_resident = first_resident
        self.next_first = next_first
        self.matched = matched
        players = dutch.sorted
        # base[larger][smaller]: the weight of the pair of those two bracket indices.
        self.base: list[list[int]] = [[] for _ in bracket]
        for larger in range(moved_down, len(bracket)):
            lower = players[bracket[larger]]
            in_bracket = larger < residents_end
            self.base[larger] = [
                dutch.weight(players[bracket[smaller]], lower, in_bracket, not in_bracket)
                for smaller in range(larger)
            ]

    def resident(self, vertex: int) -> bool:
        return self.first_resident <= vertex < self.next_first

    def forward(self, vertex: int, stable: list[int]) -> bool:
        """Paired with a later player of this bracket: in S1."""
        return vertex < stable[vertex] < self.next_first

    def exchange_weight(self, smaller: int, larger: int, smaller_place: int, pairs: int) -> int:
        """The base weight plus the preferences among homogeneous pairings: fewest exchanges, then
        the smallest difference of the exchanged players' sequence numbers."""
        weight = self.base[larger][smaller]
        if weight:
            addend = ((smaller_place < pairs) << (2 * self.dutch.size_bits)) - smaller_place
            weight += addend << 1
        return weight

    def pair(self) -> list[int]:
        dutch, vertex, base = self.dutch, self.vertex, self.base
        for larger in range(self.moved_down, len(vertex)):
            for smaller in range(larger):
                dutch.set(vertex[larger], vertex[smaller], base[larger][smaller])
        stable = dutch.solve()
        stable = self._moved_down_players(stable)
        stable = self._moved_down_opponents(stable)
        return self._remainder(stable)

    def _moved_down_players(self, stable: list[int]) -> list[int]:
        """Pair as many moved-down players as possible, the higher ones first."""
        dutch, vertex, base, players = self.dutch, self.vertex, self.base, self.dutch.sorted
        score = Fraction(0)
        remaining = remaining_matched = 0
        for index in range(self.moved_down):
            if index == 0 or players[vertex[index]].score < score:
                score = players[vertex[index]].score
                remaining = remaining_matched = 0
                other = index
                while other < len(vertex) and players[vertex[other]].score >= score:
                    remaining += 1
                    if self.resident(stable[vertex[other]]):
                        remaining_matched += 1
                    other += 1
            if not remaining_matched:
                continue
            me = vertex[index]
            if remaining <= remaining_matched:
                self.matched[me] = True
                continue
            remaining -= 1
            if not self.resident(stable[me]):
                for opponent in range(self.moved_down, self.residents_end):
                    weight = base[opponent][index]
                    if weight:
                        dutch.set(me, vertex[opponent], weight | 1)
                stable = dutch.solve()
            if self.resident(stable[me]):
                self.matched[me] = True
                remaining_matched -= 1
                for opponent in range(self.moved_down, self.residents_end):
                    weight = base[opponent][index]
                    if weight:
                        dutch.set(me, vertex[opponent], (weight | (self.residents_end - self.moved_down)) + 1)
        return stable

    def _moved_down_opponents(self, stable: list[int]) -> list[int]:
        """Each paired moved-down player, highest first, gets the best resident it can."""
        dutch, vertex, base = self.dutch, self.vertex, self.base
        for index in range(self.moved_down):
            me = vertex[index]
            if not self.matched[me]:
                continue
            addend = len(vertex)
            for opponent in range(self.residents_end - 1, self.moved_down - 1, -1):
                if self.matched[vertex[opponent]]:
                    continue
                weight = base[opponent][index]
                if weight:
                    dutch.set(me, vertex[opponent], weight + addend)
                    addend += 1
            stable = dutch.solve()
            mate = stable[me]
            self.matched[mate] = True
            dutch.finalize(me, mate)
        return stable

    def _remainder(self, stable: list[int]) -> list[int]:
        """Pair the residents left: choose S1 with the fewest exchanges, then pair S1 in order."""
        dutch, vertex, base = self.dutch, self.vertex, self.base
        remainder: list[int] = []
        pairs = 0
        for index in range(self.moved_down, self.residents_end):
            me = vertex[index]
            if stable[me] < self.first_resident:
                continue
            remainder.append(index)
            if stable[me] < me:
                pairs += 1
        size = len(remainder)
        for place_of_larger, larger in enumerate(remainder):
            for place, smaller in enumerate(remainder[:place_of_larger]):
                dutch.set(
                    vertex[smaller], vertex[larger], self.exchange_weight(smaller, larger, place, pairs)
                )
        stable = dutch.solve()
        exchanges = sum(1 for index in remainder[:pairs] if not self.forward(vertex[index], stable))
        # Exchange the lowest players of S1 that can be exchanged ...
        left = exchanges
        place = pairs
        while place and left:
            place -= 1
            index = remainder[place]
            me = vertex[index]
            if self.forward(me, stable):
                for other in remainder[place + 1 :]:
                    weight = self.exchange_weight(index, other, place, pairs)
                    if weight:
                        dutch.set(me, vertex[other], weight - 1)
                stable = dutch.solve()
            exchanged = not self.forward(me, stable)
            left -= exchanged
            for other in remainder[place + 1 :]:
                if exchanged:
                    base[other][index] = 0
                dutch.set(me, vertex[other], self.exchange_weight(index, other, place, pairs))
        # ... for the highest players of S2 that can be.
        left = exchanges
        for place in range(pairs, size):
            if left <= 1:
                break
            index = remainder[place]
            me = vertex[index]
            already = self.forward(me, stable)
            if not already:
                for other in remainder[place + 1 :]:
                    weight = self.exchange_weight(index, other, place, pairs)
                    if weight:
                        dutch.set(me, vertex[other], weight + 1)
                stable = dutch.solve()
            if self.forward(me, stable):
                left -= 1
                for other in remainder[:place]:
                    base[index][other] = 0
                    dutch.set(me, vertex[other], 0)
                for other in range(self.residents_end, len(vertex)):
                    base[other][index] = 0
                    dutch.set(me, vertex[other], 0)
            if not already:
                for other in remainder[place + 1 :]:
                    dutch.set(me, vertex[other], self.exchange_weight(index, other, place, pairs))
        # S1 is now fixed: keep only the edges from S1 to the rest.
        for place, index in enumerate(remainder):
            me = vertex[index]
            for other in remainder[place + 1 :]:
                them = vertex[other]
                if not self.forward(me, stable) or self.forward(them, stable):
                    base[other][index] = 0
                dutch.set(me, them, base[other][index])
        # Each S1 player in order gets the highest opponent it can.
        for index in remainder:
            me = vertex[index]
            if not self.forward(me, stable):
                continue
            addend = 0
            for other in reversed(remainder):
                them = vertex[other]
                if other <= index or self.matched[them]:
                    continue
                weight = base[other][index]
                if weight:
                    dutch.set(me, them, weight + addend)
                addend += 1
            stable = dutch.solve()
            mate = stable[me]
            self.matched[me] = self.matched[mate] = True
            dutch.finalize(me, mate)
        return stable
