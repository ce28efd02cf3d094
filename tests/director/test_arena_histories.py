"""An arena's waves count the games settled since the last wave into what they kept (arenawave.ArenaMemory,
ledger.ArenaLedger): over random sequences of games set up, ended, stored, gone and cancelled, accounts
renamed and deleted, players joining, withdrawn and back, ratings changed, waves that fail half-way and
restarts, every wave's no-shows, field and rests are those of the whole computation each wave made
until 2026-12-02, kept here as the reference (`WholeMemory`, `whole_field`), which counted every game
again. Also: arena_histories' one pass against the per-player scans it replaced on 2026-12-02, and
what a wave hands the pairing of each player."""

from __future__ import annotations

import pickle
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from server.director.arenawave import ARENA_REST, ArenaMemory
from server.director.entrants import Entrants
from server.director.history import Board, arena_histories, no_shows_still_in
from server.director.ledger import ArenaLedger, PlayerGames
from server.director.times import joined
from server.engine import arena
from server.engine.board import BLACK
from server.engine.game import Result
from server.protocol.codec import nick_key
from server.store.hosted import Entry
from server.store.tournaments import TableRecord

NICKS = ["*a", "*b", "*c", "*d", "*e"]
RESULTS = [None, "B+R", "W+R", "B+3", "W+0.5", "0", "B+T", "W+F", "B+F", "Void"]
ENDED = ["B+R", "W+R", "B+3", "W+0.5", "0", "B+T", "W+F", "B+F", "Void"]
MOVES = [0, 19, 20, 59, 60, 120]
RATINGS = [1200.0, 1500.0, 1500.5, 1800.0]


def scanned_arena_games(nick: str, boards: Sequence[Board]) -> tuple[arena.ArenaGame, ...]:
    """history.arena_games until 2026-12-02: one player's games, every board scanned for each player."""
    games = []
    for board in sorted(boards, key=lambda b: b.table):
        result = Result.parse(board.result) if board.result is not None else None
        if (
            nick not in (board.blue, board.red)
            or result is None
            or result.reason == "Void"
            or board.cancelled
        ):
            continue
        blue = nick == board.blue
        if result.winner == 0:
            outcome: arena.Outcome = "draw"
        else:
            outcome = "win" if (result.winner == BLACK) == blue else "loss"
        opponent = board.red if blue else board.blue
        games.append(arena.ArenaGame(opponent, outcome, blue, board.moves, forfeit=result.reason == "F"))
    return tuple(games)


@st.composite
def arena_boards(draw: st.DrawFn) -> list[Board]:
    tables = draw(st.lists(st.integers(1, 10_000), unique=True, max_size=40))
    boards = []
    for table in tables:  # in no particular order: the oldest game is the lowest table
        blue, red = draw(st.sampled_from(NICKS)), draw(st.sampled_from(NICKS))
        result = draw(st.sampled_from(RESULTS))
        ended = draw(st.one_of(st.none(), st.floats(0, 1e9))) if result is not None else None
        moves = draw(st.sampled_from(MOVES))
        boards.append(Board(table, 0, blue, red, result, draw(st.booleans()), moves, ended))
    return boards


@given(arena_boards())
def test_the_one_pass_histories_are_the_scanned_ones(boards: list[Board]) -> None:
    histories = arena_histories(boards)
    for nick in NICKS:
        assert histories.get(nick, ()) == scanned_arena_games(nick, boards)


# --- the whole computation of a wave, as it was until 2026-12-02 ------------------------------------


def whole_field(
    entries: Sequence[Entry], boards: Sequence[Board]
) -> tuple[dict[str, arena.ArenaPlayer], dict[str, int], set[str], dict[str, float]]:
    """arenawave.arena_field: everyone's games, ranks, who is busy and since when each is free."""
    busy = {nick for board in boards if board.result is None for nick in (board.blue, board.red)}
    games = arena_histories(boards)
    everyone = {e.nick: arena.ArenaPlayer(e.nick, e.rating, games.get(e.nick, ())) for e in entries}
    ranks = {standing.key: standing.rank for standing in arena.standings(list(everyone.values()))}
    latest: dict[str, float] = {}
    for board in boards:
        for nick in (board.blue, board.red):
            latest[nick] = max(latest.get(nick, 0.0), board.ended or 0.0)
    return everyone, ranks, busy, {nick: latest.get(nick, 0.0) for nick in everyone}


@dataclass
class WholeMemory:
    """arenawave.ArenaMemory as it was: every board of the tournament looked at by every wave."""

    ended: set[int] | None = None
    rest_ends: dict[int, float] = field(default_factory=dict)
    settled: dict[int, Board] = field(default_factory=dict)
    unsettled: dict[int, TableRecord] = field(default_factory=dict)
    read_up_to: int | None = None

    def tables_read(
        self, changed: Sequence[TableRecord], board: Callable[[TableRecord], Board]
    ) -> list[Board]:
        for row in changed:
            if row.result is not None and row.moves is not None:
                self.settled[row.uid] = board(row)
                self.unsettled.pop(row.uid, None)
            else:
                self.unsettled[row.uid] = row
                self.settled.pop(row.uid, None)
        self.read_up_to = max((row.changed for row in changed), default=self.read_up_to or 0)
        return [*self.settled.values(), *map(board, self.unsettled.values())]

    def no_shows(self, entries: Sequence[Entry], boards: Sequence[Board]) -> set[str]:
        ended = {board.table for board in boards if board.result is not None}
        new = ended - (self.ended or set())
        unseen = [board for board in boards if board.table in new]
        self.ended = ended
        return no_shows_still_in(joined(list(entries)), unseen)

    def resting(self, boards: Sequence[Board], now: float, moment: float) -> set[str]:
        for board in boards:
            if board.result is not None and board.table not in self.rest_ends:
                passed = min(max(0.0, now - (board.ended or 0.0)), ARENA_REST)
                self.rest_ends[board.table] = moment + ARENA_REST - passed
        return {
            nick
            for board in boards
            if board.result is not None and self.rest_ends[board.table] > moment
            for nick in (board.blue, board.red)
        }


# --- a tournament's store and live tables, changed at random -------------------------------------

BEGUN = datetime(2026, 12, 3, tzinfo=UTC)


@dataclass
class Live:
    """A table the hub still has: its game's moves and, once over, its result (stored a moment later)."""

    moves: int
    result: str | None = None


@dataclass
class World:
    rows: dict[int, TableRecord] = field(default_factory=dict)
    live: dict[int, Live] = field(default_factory=dict)
    entries: list[Entry] = field(default_factory=list)
    count: int = 0  # the tournament's count of changes (server/store/changes.py)
    now: float = BEGUN.timestamp()  # the wall clock
    moment: float = 1000.0  # the timers
    names: int = 0  # new nicks made

    def write(self, row: TableRecord) -> None:
        self.count += 1
        self.rows[row.uid] = replace(row, changed=self.count)

    def changed(self, since: int | None) -> list[TableRecord]:
        return [row for row in self.rows.values() if since is None or row.changed > since]

    def board(self, row: TableRecord) -> Board:
        """Director._board: the live table completes a game whose result is not stored yet; a table gone
        without one is void."""
        live = self.live.get(row.uid)
        result = row.result
        ended = row.finished_at.timestamp() if row.finished_at is not None else None
        if result is None and live is not None and live.result is not None:
            result, ended = live.result, self.now
        elif result is None and live is None:
            result, ended = "Void", self.now
        moves = row.moves if row.moves is not None else live.moves if live is not None else 0
        return Board(row.uid, 0, row.blue, row.red, result, row.cancelled, moves, ended)

    def new_nick(self) -> str:
        self.names += 1
        return f"*n{self.names}"

    def withdraw(self, nicks: set[str]) -> None:
        self.entries = [replace(e, withdrawn=True) if e.nick in nicks else e for e in self.entries]


def step(world: World, data: st.DataObject) -> None:
    """One change to the tournament between two waves."""
    unsettled = sorted(uid for uid, row in world.rows.items() if row.result is None or row.moves is None)
    settled = sorted(uid for uid in world.rows if uid not in unsettled)
    kind = data.draw(
        st.sampled_from(
            ["set up", "set up", "set up", "over", "store", "store", "store", "gone", "cancel", "same"]
            + ["rename", "delete", "join", "withdraw", "back", "rating", "clock", "clock"]
        )
    )
    entry = data.draw(st.sampled_from(world.entries))
    at = world.entries.index(entry)
    if kind == "set up":  # under an entrant's nick now or before a rename, or a stranger's
        nicks = sorted({n for e in world.entries for n in (e.nick, *e.former)} | {"*z"})
        blue, red = data.draw(st.sampled_from(nicks)), data.draw(st.sampled_from(nicks))
        uid = max(world.rows, default=0) + data.draw(st.integers(1, 3))
        created = datetime.fromtimestamp(world.now, UTC)
        world.write(TableRecord(uid, "arena", None, created, blue, red, "20x20", None, None, False))
        world.live[uid] = Live(data.draw(st.sampled_from(MOVES)))
    elif kind == "over" and [uid for uid in unsettled if uid in world.live]:
        uid = data.draw(st.sampled_from([uid for uid in unsettled if uid in world.live]))
        world.live[uid].result = data.draw(st.sampled_from(ENDED))
    elif kind == "store" and unsettled:  # archived, rarely without its moves (an older row)
        uid = data.draw(st.sampled_from(unsettled))
        live = world.live.pop(uid, None)
        result = live.result if live is not None and live.result else data.draw(st.sampled_from(ENDED))
        moves = data.draw(st.one_of(st.sampled_from(MOVES), st.just(None)))
        finished = datetime.fromtimestamp(world.now - data.draw(st.sampled_from([0.0, 3.0, 30.0])), UTC)
        world.write(
            replace(world.rows[uid], result=result, moves=moves, finished_at=finished, game_number=uid)
        )
    elif kind == "gone" and [uid for uid in unsettled if uid in world.live]:
        del world.live[data.draw(st.sampled_from([uid for uid in unsettled if uid in world.live]))]
    elif kind == "cancel" and unsettled:
        uid = data.draw(st.sampled_from(unsettled))
        world.write(replace(world.rows[uid], cancelled=True))
    elif kind == "same" and settled:  # a settled row written again as it was
        world.write(world.rows[data.draw(st.sampled_from(settled))])
    elif kind == "rename":  # an admin renames the account: its entry follows, its tables keep the nick
        new = data.draw(st.sampled_from([world.new_nick(), entry.nick.swapcase()]))
        if new != entry.nick and all(nick_key(new) != e.nick_key for e in world.entries if e is not entry):
            world.entries[at] = replace(
                entry, nick=new, nick_key=nick_key(new), former=(*entry.former, entry.nick)
            )
    elif kind == "delete":  # the account's entry and its finished games' sides get a new nick
        world.names += 1
        new, old = f"deleted{world.names}", {nick_key(n) for n in (entry.nick, *entry.former)}
        world.entries[at] = replace(entry, nick=new, nick_key=nick_key(new), seat="", former=())
        for row in list(world.rows.values()):
            if nick_key(row.blue) in old or nick_key(row.red) in old:
                blue = new if nick_key(row.blue) in old else row.blue
                world.write(replace(row, blue=blue, red=new if nick_key(row.red) in old else row.red))
    elif kind == "join":
        nick, registered = world.new_nick(), datetime.fromtimestamp(world.now, UTC)
        rating = data.draw(st.sampled_from(RATINGS))
        world.entries.append(Entry(nick, nick_key(nick), f"@{nick}", rating, registered, False))
    elif kind == "withdraw":
        world.withdraw({entry.nick})
    elif kind == "back" and entry.withdrawn:
        registered = datetime.fromtimestamp(world.now, UTC)
        world.entries[at] = replace(entry, withdrawn=False, registered_at=registered)
    elif kind == "rating":
        world.entries[at] = replace(entry, rating=data.draw(st.sampled_from(RATINGS)))
    elif kind == "clock":  # the timers go on; the wall clock too, or steps (NTP, an operator)
        seconds = data.draw(st.sampled_from([1.0, 3.0, 5.0, 9.0]))
        world.moment += seconds
        world.now += data.draw(st.sampled_from([seconds, seconds, -3600.0, 3600.0]))


def wave(world: World, memory: ArenaMemory, whole: WholeMemory, until: str) -> None:
    """Director._arena's steps on both memories, compared; `until`: the step a failing wave stops after."""
    entrants = Entrants(world.entries)
    memory.tables_read(world.changed(memory.read_up_to), world.board, entrants)
    boards = entrants.boards(whole.tables_read(world.changed(whole.read_up_to), world.board))
    if until == "read":
        return
    missing = memory.no_shows(world.entries)
    assert missing == whole.no_shows(world.entries, boards)
    world.withdraw(missing)
    if until == "no-shows":
        return
    ready = memory.field(world.entries)
    everyone, ranks, busy, free_since = whole_field(world.entries, boards)
    assert ready.ranks == ranks
    assert ready.busy == busy
    assert ready.free_since == free_since
    assert {nick: ready.waiting(nick) for nick in everyone} == {
        nick: arena.WaitingPlayer.of(player) for nick, player in everyone.items()
    }
    for row in arena.standings(list(everyone.values())):  # the scores and performances, not only the ranks
        played = ready.kept.get(row.key, PlayerGames())
        merit = played.merit(ready.ratings[row.key], ready.later.get(row.key, []), ready.ratings)
        assert merit == arena.merit(row.score, row.performance, ready.ratings[row.key])
    assert memory.resting(world.now, world.moment) == whole.resting(boards, world.now, world.moment)


@settings(max_examples=200)  # the sequences are long: the default 100 missed some of the cases
@given(st.data())
def test_every_wave_counts_what_the_whole_computation_counts(data: st.DataObject) -> None:
    world = World()
    for nick in NICKS:
        rating = data.draw(st.sampled_from(RATINGS))
        world.entries.append(Entry(nick, nick_key(nick), f"@{nick}", rating, BEGUN, False))
    memory, whole = ArenaMemory(), WholeMemory()
    for _ in range(data.draw(st.integers(1, 12))):
        for _ in range(data.draw(st.integers(0, 8))):
            step(world, data)
        if data.draw(st.integers(0, 9)) == 0:  # a restart: the director's memory starts empty
            memory, whole = ArenaMemory(), WholeMemory()
        wave(world, memory, whole, data.draw(st.sampled_from(["all", "all", "all", "read", "no-shows"])))


def test_a_wave_counts_only_the_games_settled_since_the_last_unless_a_settled_one_changed() -> None:
    world = World()
    world.entries = [Entry(nick, nick_key(nick), f"@{nick}", 1500.0, BEGUN, False) for nick in NICKS]

    def settled(uid: int, blue: str, red: str, result: str) -> None:
        created = datetime.fromtimestamp(world.now, UTC)
        world.write(
            TableRecord(uid, "arena", None, created, blue, red, "20x20", result, uid, False, created, 30)
        )

    for uid, (blue, red) in enumerate([("*a", "*b"), ("*c", "*d"), ("*a", "*c")], start=1):
        settled(uid, blue, red, "B+R")
    memory, whole = ArenaMemory(), WholeMemory()
    wave(world, memory, whole, "all")
    ledger = memory.ledger
    assert ledger is not None
    a = ledger.players["*a"]
    settled(5, "*b", "*a", "W+R")
    wave(world, memory, whole, "all")
    assert memory.ledger is ledger and ledger.players["*a"] is a, "kept, the new game added"
    assert a.tables == [1, 3, 5] and a.score == 2 + 2 + 4

    settled(4, "*a", "*e", "0")  # a game stored after a later one of its player's: counted in its place
    wave(world, memory, whole, "all")
    assert memory.ledger is ledger and a.tables == [1, 3, 4, 5] and a.score == 2 + 2 + 2 + 2

    created = datetime.fromtimestamp(world.now, UTC)  # a draw over, not stored yet, before a win stored
    world.write(TableRecord(6, "arena", None, created, "*a", "*e", "20x20", None, None, False))
    world.live[6] = Live(30, "0")
    settled(7, "*a", "*b", "B+R")
    wave(world, memory, whole, "all")
    waiting = memory.field(world.entries).waiting("*a")  # white at 1, 3, 4, 6 and 7; black at 5
    assert (waiting.last_opponent, waiting.colours) == ("*b", arena.ColourHistory(strike=2, balance=4))

    world.write(replace(world.rows[2], red="deleted1"))  # an account's deletion renames a settled game
    wave(world, memory, whole, "all")
    assert memory.ledger is not ledger, "counted again"
    assert memory.ledger is not None and "*d" not in memory.ledger.players

    ledger, c = memory.ledger, world.entries[2]  # an admin renames *c: the tables keep the nick
    world.entries[2] = replace(c, nick="*C2", nick_key=nick_key("*C2"), former=("*c",))
    wave(world, memory, whole, "all")
    assert memory.ledger is not ledger and memory.ledger is not None, "counted again"
    assert memory.ledger.players["*C2"].tables == [2, 3] and "*c" not in memory.ledger.players


def test_a_wave_hands_the_pairing_a_few_fields_a_player_however_many_games_they_played() -> None:
    """Until 2026-12-03 each free player went to the worker process with every game they played: 5.6 MB
    pickled for 150 players at 108,000 games, 0.36 s of the event loop's CPU (benchmarks/arena.py)."""
    entries = [Entry(nick, nick_key(nick), f"@{nick}", 1500.0, BEGUN, False) for nick in ("*a", "*b")]

    def handed(games: int) -> int:
        ledger = ArenaLedger()
        boards = [
            Board(table, 0, "*a", "*b", "B+R", False, 30, float(table)) for table in range(1, games + 1)
        ]
        ledger.add(boards, Entrants(entries))
        return len(pickle.dumps(ledger.field(entries, []).waiting("*a")))

    assert handed(2000) - handed(2) < 8  # a larger score and strike, no more fields
