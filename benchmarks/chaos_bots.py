"""The bots of benchmarks/chaos.py: pairs of examples/random_bot.py, each in a process of its own, playing
through nginx while members, Redis and PostgreSQL die; and what each sent, was answered and read.

Each bot is the example bot as published (its feed, which it opens again after `moved`, `stopping`, a
broken connection or a 503, and its `play` loop), with three things around it, none inside it:
- every action it posts and its answer, and every event its feed gives, is written to a log of its own
  (one JSON object a line, with the time: CLOCK_MONOTONIC, which every process of the machine shares);
- before posting a move it thinks 0.5-2 s (the example plays at once), so that its games last minutes
  and the schedule's events fall in them;
- the first bot of a pair invites the other whenever neither sits at a game being played (the example
  invites once, at its start), every few seconds until the invitation is taken.
After SIGUSR1 it posts no new moves (the run's quiet end); SIGTERM ends it.

The check (`bot_report`): a move answered 200 must be in its table's record, a move refused must not be
(unless another request of the same point was answered 200); each bot's board, as its feed left it,
must equal its table's record; and every bot table moves again after each member's death.

    python benchmarks/chaos_bots.py --server URL --log FILE --seed N [--invite NICK]   # KROPKI_BOT_TOKEN
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE.parent / "examples"
THINK = (0.5, 2.0)  # seconds before each move
INVITE_EVERY = 3.0  # seconds between the inviter's tries while no game is being played
MOVE = re.compile(r"^/api/bot/game/(\d+)/move/(\d+)/(\d+)$")
# answers that say nothing of whether the move was made: no JSON (nginx's 502, a broken connection), or
# the table's server of the cluster died before it said
UNKNOWN = ("unanswered", "unconfirmed")


# --- the bot's own process ----------------------------------------------------------------------------


def bot_main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, str(EXAMPLES))
    import random_bot  # the example as published: examples/random_bot.py

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--invite", metavar="NICK")
    args = parser.parse_args(argv)
    quiet = threading.Event()
    signal.signal(signal.SIGUSR1, lambda *_: quiet.set())
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    out = open(args.log, "a", buffering=1)  # noqa: SIM115 (open for the life of the process)
    lock = threading.Lock()
    playing: dict[int, bool] = {}  # table -> its game is being played, as the feed says
    rng = random.Random(args.seed)

    def note(entry: dict[str, Any]) -> None:
        entry["at"] = time.monotonic()
        with lock:
            out.write(json.dumps(entry) + "\n")

    class LoggedApi(random_bot.Api):
        def _request(self, path: str, fields: dict[str, str] | None = None) -> Any:
            if path == "/api/bot/stream":
                note({"feed": "open"})
            return super()._request(path, fields)

        def events(self) -> Any:
            for event in super().events():
                note({"event": event})
                kind = event["type"]
                with lock:  # read by the inviter's thread
                    if kind == "gameFull":
                        playing[event["table"]] = event["colour"] is not None
                    elif kind == "gameEnd":
                        playing[event["table"]] = False
                yield event

        def post(self, path: str, **fields: str) -> dict[str, Any]:
            if MOVE.match(path):
                if quiet.is_set():
                    return {"error": "quiet", "message": "the run's quiet end: no new moves"}
                time.sleep(rng.uniform(*THINK))
            sent = time.monotonic()
            answer = super().post(path, **fields)
            note({"post": path, "sent": sent, "answer": answer})
            return answer

    api = LoggedApi(args.server, os.environ["KROPKI_BOT_TOKEN"])
    if args.invite:
        partner = args.invite

        def invite() -> None:
            while True:
                time.sleep(INVITE_EVERY)
                with lock:
                    idle = not any(playing.values())
                if idle and not quiet.is_set():
                    api.post(f"/api/bot/invite/{partner}", gameType=random_bot.GAME_TYPE)

        threading.Thread(target=invite, daemon=True).start()
    random_bot.play(api, 0, None, rng)
    note({"ended": "the feed ended for good"})
    return 0


# --- in benchmarks/chaos.py -----------------------------------------------------------------------------


@dataclass
class BotMove:
    bot: str
    table: str
    point: tuple[int, int]  # from 1 at the top left, as the record's
    red: bool
    sent: float
    code: str  # "ok", a refusal's code, or one that says nothing of the move (UNKNOWN)


@dataclass
class BotPair:
    """Two bots and their games: the attributes chaos_report's figures of each event read of a pair."""

    index: int
    nicks: tuple[str, str]
    tables: list[str] = field(default_factory=list)  # in the order their games began
    move_times: list[float] = field(default_factory=list)  # each dot the first time either feed showed it
    moved_at: list[str] = field(default_factory=list)  # the table of each of those dots

    @property
    def uid(self) -> str | None:
        return self.tables[-1] if self.tables else None

    def table_at(self, moment: float) -> str | None:
        """The table the pair played at then: that of its first dot after `moment` (a pair plays one game
        after another, each at a table of its own)."""
        after = bisect.bisect_left(self.move_times, moment)
        return self.moved_at[after] if after < len(self.moved_at) else self.uid


@dataclass
class BotLog:
    """One bot's log, read back."""

    nick: str
    moves: list[BotMove] = field(default_factory=list)
    boards: dict[str, dict[tuple[int, int], bool]] = field(default_factory=dict)  # table -> dots (red?)
    feeds: int = 0  # times the feed was opened
    ends: Counter[str] = field(default_factory=Counter)  # `error` events' codes
    answers: Counter[str] = field(default_factory=Counter)  # every post's answer, by code
    colours: dict[str, bool] = field(default_factory=dict)  # table -> the bot plays red
    seen: list[tuple[float, str, tuple[int, int]]] = field(default_factory=list)  # (at, table, dot)
    archived: dict[str, int] = field(default_factory=dict)  # table -> its game's number in the archive


def read_bot_log(nick: str, path: Path) -> BotLog:
    log = BotLog(nick)
    lines = path.read_text(errors="replace").splitlines() if path.exists() else []
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # the last line of a process killed as it wrote
        if entry.get("feed"):
            log.feeds += 1
        elif "post" in entry:
            answer = entry["answer"]
            code = "ok" if answer.get("ok") else str(answer.get("error"))
            log.answers[code] += 1
            found = MOVE.match(entry["post"])
            if found and code != "quiet":
                table, x, y = found.groups()
                red = log.colours.get(table, False)
                log.moves.append(BotMove(nick, table, (int(x) + 1, int(y) + 1), red, entry["sent"], code))
        elif "event" in entry:
            _read_event(log, entry["event"], entry["at"])
    return log


def _read_event(log: BotLog, event: dict[str, Any], at: float) -> None:
    kind, table = event["type"], str(event.get("table"))
    if kind == "gameFull":
        log.colours[table] = event["colour"] == "red"
        board = log.boards[table] = {}
        for dot in event["setup"] + event["moves"]:
            _dot(log, board, table, dot, at)
    elif kind == "move" and table in log.boards:
        _dot(log, log.boards[table], table, event, at)
    elif kind == "archived":
        log.archived[table] = event["number"]
    elif kind == "error":
        log.ends[str(event.get("code"))] += 1


def _dot(log: BotLog, board: dict[tuple[int, int], bool], table: str, dot: dict[str, Any], at: float) -> None:
    point = (dot["x"] + 1, dot["y"] + 1)
    if dot.get("undo"):
        board.pop(point, None)
    else:
        board[point] = dot["colour"] == "red"
        log.seen.append((at, table, point))


Played = dict[str, list[tuple[tuple[int, int], bool]]]  # table -> its game's moves: (point, red)


async def with_archived(db_url: str, journals: Played, logs: list[BotLog]) -> Played:
    """The tables' games: their journals, and for a table whose journal is gone (closed once its game
    was archived and its players left) the archived game the bots' feeds named (`archived`)."""
    from sqlalchemy import text
    from sqlalchemy.ext.asyncio import create_async_engine
    from sqlalchemy.pool import NullPool

    from server.engine.moves import ALPHABET
    from server.engine.sgf import read_record

    wanted = {
        table: number for log in logs for table, number in log.archived.items() if table not in journals
    }
    games = dict(journals)
    if not wanted:
        return games
    engine = create_async_engine(db_url, poolclass=NullPool)
    try:
        async with engine.connect() as connection:
            rows = await connection.execute(
                text("SELECT number, sgf FROM games WHERE number = ANY(:numbers)"),
                {"numbers": sorted(set(wanted.values()))},
            )
            records = {number: read_record(sgf) for number, sgf in rows}
    finally:
        await engine.dispose()
    for table, number in wanted.items():
        record = records.get(number)
        if record is not None:
            games[table] = [
                ((ALPHABET.index(move.value[0]) + 1, ALPHABET.index(move.value[1]) + 1), move.colour == "W")
                for move in record.moves
            ]
    return games


class Bots:
    """The bot pairs' accounts and processes."""

    def __init__(self, pairs: int, port: int, folder: Path, seed: int, python: str) -> None:
        self.pairs = [BotPair(i, (f"ChaosBot{2 * i + 1}", f"ChaosBot{2 * i + 2}")) for i in range(pairs)]
        self.port, self.folder, self.seed, self.python = port, folder, seed, python
        self.tokens: dict[str, str] = {}
        self.processes: list[subprocess.Popen[bytes]] = []

    def log_path(self, nick: str) -> Path:
        return self.folder / f"{nick}.jsonl"

    async def make_accounts(self, db_url: str) -> None:
        """The bots' accounts, made as `kropki-server bot create` makes them."""
        from server.store.store import Store

        store = await Store.open(db_url)
        try:
            for pair in self.pairs:
                for nick in pair.nicks:
                    self.tokens[nick] = await store.bots.create(nick)
        finally:
            await store.close()

    def start(self) -> None:
        for pair in self.pairs:
            for side, nick in enumerate(pair.nicks):
                invite = ["--invite", pair.nicks[1]] if side == 0 else []
                command = [self.python, __file__, "--server", f"http://127.0.0.1:{self.port}"]
                command += ["--log", str(self.log_path(nick)), "--seed", f"{self.seed}{pair.index}{side}"]
                with open(self.folder / f"{nick}.err", "wb") as errors:
                    self.processes.append(
                        subprocess.Popen(
                            [*command, *invite],
                            env={**os.environ, "KROPKI_BOT_TOKEN": self.tokens[nick]},
                            stdout=subprocess.DEVNULL,
                            stderr=errors,
                        )
                    )

    def quiet(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.send_signal(signal.SIGUSR1)

    async def stop(self) -> list[str]:
        """Ends them; the bots that had stopped before, and any trace one of them printed (a crash)."""
        died = [  # a bot stops only when its feed ends for good: every one should still be playing
            f"ChaosBot{i + 1} exited {p.returncode}"
            for i, p in enumerate(self.processes)
            if p.poll() is not None
        ]
        for process in self.processes:
            if process.poll() is None:
                process.terminate()
        await asyncio.gather(*(asyncio.to_thread(p.wait) for p in self.processes))
        for index in range(len(self.processes)):
            trace = (self.folder / f"ChaosBot{index + 1}.err").read_text(errors="replace")
            if "Traceback" in trace:
                died.append(f"ChaosBot{index + 1}: " + " / ".join(trace.strip().splitlines()[-2:]))
        return died

    def read(self) -> list[BotLog]:
        logs = [read_bot_log(nick, self.log_path(nick)) for pair in self.pairs for nick in pair.nicks]
        by_nick = {log.nick: log for log in logs}
        for pair in self.pairs:
            seen = sorted(s for nick in pair.nicks for s in by_nick[nick].seen)
            first: dict[tuple[str, tuple[int, int]], float] = {}
            for at, table, point in seen:
                if table not in pair.tables:
                    pair.tables.append(table)
                first.setdefault((table, point), at)
            dots = sorted((at, table) for (table, _), at in first.items())
            pair.move_times = [at for at, _ in dots]
            pair.moved_at = [table for _, table in dots]
        return logs


def bot_report(
    pairs: list[BotPair], logs: list[BotLog], played: Played, died: list[str]
) -> dict[str, tuple[bool, str]]:
    """Prints what the bots sent, were answered and saw against the tables' records; the targets."""
    from chaos_report import show  # here: the bots' own processes import only this module's top

    print("\n== bots: every move posted against the tables' records in PostgreSQL ==")
    moves = [move for log in logs for move in log.moves]
    recorded = {(table, point, red) for table, entries in played.items() for point, red in entries}
    answered = Counter(move.code for move in moves)
    print(f"moves posted {len(moves)}: " + ", ".join(f"{code} {n}" for code, n in answered.most_common()))
    ok = {(m.table, m.point, m.red) for m in moves if m.code == "ok"}
    lost = [m for m in moves if m.code == "ok" and (m.table, m.point, m.red) not in recorded]
    # a refusal of a point played is wrong unless a request of it was answered 200, or its answer said
    # nothing (one taken as `unconfirmed` and done: sent again, it is refused as taken)
    maybe = ok | {(m.table, m.point, m.red) for m in moves if m.code in UNKNOWN}
    wrong = [
        m
        for m in moves
        if m.code != "ok"
        and m.code not in UNKNOWN
        and (m.table, m.point, m.red) in recorded
        and (m.table, m.point, m.red) not in maybe
    ]
    posted = {(m.table, m.point, m.red) for m in moves}
    again: list[BotMove] = []  # a point answered 200 twice: the first time, it was not made
    for log in logs:
        made: set[tuple[str, tuple[int, int]]] = set()
        for m in log.moves:
            if m.code == "ok" and (m.table, m.point) in made:
                again.append(m)
            if m.code == "ok":
                made.add((m.table, m.point))
    tables = {table for pair in pairs for table in pair.tables}
    phantom = [f"table {t} {p}" for t, p, r in sorted(recorded) if t in tables and (t, p, r) not in posted]

    def said(m: BotMove) -> str:
        return f"{m.bot} table {m.table} {m.point} {'red' if m.red else 'blue'}: {m.code}"

    show("LOST (answered 200, not in the record)", [said(m) for m in lost])
    show(
        "refused but in the record (no request of the point answered 200, or unknown)",
        [said(m) for m in wrong],
    )
    show("answered 200 twice for one point (the first was not made)", [said(m) for m in again])
    show("phantom (in a bot table's record, never posted)", phantom)
    unrecorded = [f"table {table}" for table in sorted(tables) if table not in played]
    show("bot tables with no record (no journal, no archived game a feed named)", unrecorded)
    differ = []
    by_nick = {log.nick: log for log in logs}
    for pair in pairs:
        expected = dict(played.get(pair.uid or "", []))
        for nick in pair.nicks:
            board = by_nick[nick].boards.get(pair.uid or "")
            if board is None:
                differ.append(f"{nick} table {pair.uid}: no board")
            elif board != expected:
                missing = sorted(expected.keys() - board.keys())[:4]
                extra = sorted(board.keys() - expected.keys())[:4]
                differ.append(
                    f"{nick} table {pair.uid}: {len(board)} dots, the record {len(expected)}; "
                    f"missing {missing}, extra {extra}"
                )
    print(f"bots' boards equal to their table's record: {2 * len(pairs) - len(differ)} of {2 * len(pairs)}")
    show("boards different", differ)
    print(
        "feeds opened: "
        + ", ".join(f"{log.nick} {log.feeds}" for log in logs)
        + "; feeds ended by: "
        + str(dict(sum((log.ends for log in logs), Counter())))
    )
    print("every action's answer: " + str(dict(sum((log.answers for log in logs), Counter()))))
    print(f"games: {sum(len(pair.tables) for pair in pairs)} tables played at by {len(pairs)} pairs")
    show("bots that crashed", died)
    return {
        "no move a bot was answered 200 for lost": (not lost, f"{len(lost)} lost"),
        "no move refused to a bot in the record": (not wrong, f"{len(wrong)} refused but played"),
        "no move answered 200 to a bot before it was made": (not again, f"{len(again)} answered 200 twice"),
        "no phantom at a bot's table": (not phantom, f"{len(phantom)} phantom"),
        "every bot's board equals its table's record": (not differ, f"{len(differ)} differ"),
        "no bot crashed": (not died, f"{len(died)} crashed"),
    }


if __name__ == "__main__":
    raise SystemExit(bot_main())
