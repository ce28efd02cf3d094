"""The check at the end of benchmarks/chaos.py: every move sent against the tables' records in PostgreSQL,
every board against its table's record, the members' logs, and the figures of each scheduled event."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from chaos_players import POLL_EVERY, Command, Pair, Recorder
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool

from server.engine.moves import ALPHABET

K_HELD_AT_MOST = 30.0  # docs/cluster.md, "Tables across members": a `done` lost holds k at most 30 s
# a client sees k at its next poll: a k given at the bound shows up to one poll period later
K_SEEN_AT_MOST = K_HELD_AT_MOST + POLL_EVERY
MOVING_AGAIN_WITHIN = 20.0  # issue 44's target after a member's death or Redis's return
SHOWN = 5  # examples printed of each kind
REPEATED = re.compile(r" \(repeated (\d+) times in the last \d+ s\)")
LOG_LINE = re.compile(r"^(\S+ \S+) level=(WARNING|ERROR|CRITICAL) logger=(\S+) (.*)$")


@dataclass
class Mark:
    """A moment the figures are measured from: a member's death (with the tables it owned, None when
    PostgreSQL could not say), Redis back, PostgreSQL back."""

    at: float
    what: str
    member: str = ""
    tables: list[str] | None = None


def _died_again(deaths: list[Mark], mark: Mark, uid: str, wait: float) -> bool:
    """Whether table `uid`, before it moved again, was owned by a member that then died too (one dying
    while it took the table over): the table is judged from that later death, its member's."""
    return any(
        later.at > mark.at and later.at < mark.at + wait and later.tables and uid in later.tables
        for later in deaths
    )


class Moving(Protocol):
    """A pair at its tables, as the figures of each event read it: MultiPoints players or bots."""

    tables: list[str]
    move_times: list[float]

    @property
    def uid(self) -> str | None: ...

    def table_at(self, moment: float) -> str | None:
        """The table it played at `moment`, which a death is judged by."""
        ...


@dataclass
class Event:
    label: str
    started: float
    ended: float = 0.0
    marks: list[Mark] = field(default_factory=list)


@dataclass
class Record:
    """The tables' games as PostgreSQL holds them: table -> [(point, red)] of its current game."""

    moves: dict[str, list[tuple[tuple[int, int], bool]]] = field(default_factory=dict)
    two_writers: list[str] = field(default_factory=list)  # one (table, seq) written by two members
    set_aside: list[str] = field(default_factory=list)


async def read_record(db_url: str) -> Record:
    """Each table's journal in order, as a restart replays it (server/hub/restore.py): `open` and
    `games` begin a game, `move` entries are its moves (`w` the point, `p` the side: odd is blue)."""
    record = Record()
    engine = create_async_engine(db_url, poolclass=NullPool)
    try:
        async with engine.connect() as connection:
            rows = await connection.execute(
                text(
                    "SELECT member, uid, seq, kind, data FROM journal WHERE uid > 0 ORDER BY uid, seq, member"
                )
            )
            last: tuple[int, int, int] | None = None
            for member, uid, seq, kind, data in rows:
                table = str(uid)
                if last is not None and last[:2] == (uid, seq):
                    record.two_writers.append(f"table {uid} entry {seq}: members {last[2]} and {member}")
                last = (uid, seq, member)
                if kind in ("open", "games"):
                    record.moves[table] = []
                elif kind == "move":
                    entry = json.loads(data)
                    point = (ALPHABET.index(entry["w"][0]) + 1, ALPHABET.index(entry["w"][1]) + 1)
                    record.moves.setdefault(table, []).append((point, entry["p"] % 2 == 0))
            aside = await connection.execute(
                text("SELECT uid, seq, kind, reason FROM journal_set_aside WHERE uid > 0 ORDER BY id")
            )
            record.set_aside = [
                f"table {uid} entry {seq} ({kind}): {reason}" for uid, seq, kind, reason in aside
            ]
    finally:
        await engine.dispose()
    return record


# --- the members' logs -----------------------------------------------------------------------------------


def _times(line: str) -> int:
    """How many records a line stands for: the log folds repeats of a warning (server/logs.py)."""
    repeated = REPEATED.search(line)
    return int(repeated.group(1)) if repeated else 1


def _trace_summary(line: str) -> str:
    """The last frame and the exception of a line's `trace=` field."""
    found = re.search(r' trace=("(?:[^"\\]|\\.)*")', line)
    if not found:
        return line[:200]
    lines = [part for part in json.loads(found.group(1)).splitlines() if part.strip()]
    frames = [i for i, part in enumerate(lines) if part.lstrip().startswith("File ")]
    last = " / ".join(part.strip() for part in lines[frames[-1] : frames[-1] + 2]) if frames else ""
    return f"{last} -> {lines[-1].strip()}"


@dataclass
class Logs:
    tracebacks: int = 0
    traces: list[str] = field(default_factory=list)
    messages: Counter[str] = field(default_factory=Counter)
    examples: dict[str, str] = field(default_factory=dict)


def read_logs(paths: dict[str, Path]) -> Logs:
    logs = Logs()
    for name, path in paths.items():
        for line in path.read_text(errors="replace").splitlines() if path.exists() else []:
            if "Traceback" in line:
                logs.tracebacks += _times(line)
                logs.traces.append(f"{name} {line[:23]} {_trace_summary(line)}")
            found = LOG_LINE.match(line)
            if found:
                message = REPEATED.sub("", found.group(4)).split(" trace=")[0]
                message = re.sub(r" \w+=.*$", "", message)  # the fields: nicks, tables, errors
                key = f"{found.group(2)} {found.group(3)}: " + re.sub(r"\d+", "N", message)
                logs.messages[key] += _times(line)
                logs.examples.setdefault(key, f"{name} {line[:300]}")
    return logs


# --- figures ---------------------------------------------------------------------------------------------


def longest_gap(times: list[float], start: float, end: float, stopped: float) -> float:
    """The longest interval between two of `times` (or the last and `stopped`) that overlaps [start, end)."""
    longest = 0.0
    for before, after in zip(times, [*times[1:], stopped], strict=True):
        if after > start and before < end:
            longest = max(longest, after - before)
    return longest


def again_after(times: list[float], moment: float, stopped: float) -> float:
    return next((t for t in times if t > moment), stopped) - moment


@dataclass
class Check:
    """Everything judged, and the lines that say so."""

    passed: dict[str, bool] = field(default_factory=dict)

    def target(self, name: str, ok: bool, detail: str) -> None:
        self.passed[name] = ok
        print(f"{'PASS' if ok else 'FAIL'} {name}: {detail}")


def show(title: str, items: list[str], count: int | None = None) -> None:
    print(f"{title}: {len(items) if count is None else count}" + "".join(f"\n    {i}" for i in items[:SHOWN]))


def report(
    pairs: list[Pair],
    recorder: Recorder,
    record: Record,
    logs: Logs,
    events: list[Event],
    stopped: float,
    bots: Sequence[Moving] = (),
    bot_targets: dict[str, tuple[bool, str]] | None = None,
) -> Check:
    """`bots`: the bot pairs, judged with the players' pairs in each event's figures; `bot_targets`:
    chaos_bots.bot_report's."""
    at = recorder.at
    players = [player for pair in pairs for player in pair.players]
    commands: list[Command] = [c for player in players for c in player.commands]
    moves = [c for c in commands if c.kind == "s" and c.sent is not None]
    played = {(table, point, red) for table, entries in record.moves.items() for point, red in entries}
    sent_keys = {(c.table, c.point, c.red) for c in moves}
    ours = {table for pair in pairs for table in pair.tables}

    print("\n== moves: every move sent against the tables' records in PostgreSQL ==")
    acked = [c for c in moves if c.acked is not None]
    refused = [c for c in moves if c.refused is not None]
    found = [c for c in moves if (c.table, c.point, c.red) in played]
    lost = [c for c in acked if c.refused is None and (c.table, c.point, c.red) not in played]
    print(
        f"sent {len(moves)}, acknowledged (covered by k) {len(acked)}, refused {len(refused)}, "
        f"found {len(found)}, abandoned by a login that ended {sum(c.abandoned is not None for c in moves)}, "
        f"acknowledged before any poll carried them {sum(c.skipped for c in moves)}"
    )
    for reason, count in Counter(c.refused for c in refused).most_common():
        print(f"    refused {count}: {reason}")
    if recorder.unattributed:
        print("refusals no unacknowledged command was waiting for: " + str(dict(recorder.unattributed)))
    settled = {(c.table, c.point, c.red) for c in moves if c.refused is None and c.acked is not None}
    played_anyway = [
        c for c in refused if (c.table, c.point, c.red) in played and (c.table, c.point, c.red) not in settled
    ]
    show(
        "refused but in the record (no other command of the point acknowledged)",
        [f"{c.player} table {c.table} {c.point}: {c.refused}" for c in played_anyway],
    )
    for reason, count in Counter(c.refused for c in played_anyway).most_common():
        print(f"    by the refusal it was given: {count} {reason}")

    def described(c: Command) -> str:
        sent = "never sent (k covered it first)" if c.skipped else f"sent {at(c.sent or 0)}"
        return (
            f"{c.player} login {c.login} command {c.number} table {c.table} point {c.point}: "
            f"{sent}, acknowledged {at(c.acked or 0)}"
        )

    show("LOST (acknowledged, not refused, not in the record)", [described(c) for c in lost])
    show("`unsaved` lines (play taken back) players read", recorder.unsaved)
    counts = Counter((table, point) for table, entries in record.moves.items() for point, _ in entries)
    duplicated = [f"table {t} {p}: {n} times" for (t, p), n in counts.items() if n > 1]
    phantom = [
        f"table {t} {p} {'red' if r else 'blue'}"
        for t, p, r in played
        if t in ours and (t, p, r) not in sent_keys
    ]
    show("duplicated in the record", duplicated)
    show("phantom (in the record, never sent)", phantom)
    show("journal entries written by two members under one number", record.two_writers)
    show("journal entries set aside", record.set_aside)

    print("\n== boards: each player's MultiPoints board against its table's record ==")
    differ = []
    for pair in pairs:
        expected = {point: red for point, red in record.moves.get(pair.uid or "", [])}
        for player in pair.players:
            tab = player.mp.tabs.get(pair.uid or "") if player.mp is not None else None
            if tab is None:
                differ.append(f"{player.nick} table {pair.uid}: no board (not seated at its game)")
            elif tab.dots != expected:
                missing = sorted(expected.keys() - tab.dots.keys())
                extra = sorted(tab.dots.keys() - expected.keys())
                differ.append(
                    f"{player.nick} table {pair.uid}: {len(tab.dots)} dots, the record {len(expected)}; "
                    f"missing {missing[:4]}, extra {extra[:4]}"
                )
    print(f"boards equal to their table's record: {len(players) - len(differ)} of {len(players)}")
    show("boards different", differ)

    print("\n== sessions ==")
    show("`sd` answers to live sessions", [f"{at(t)} {nick}" for t, nick in recorder.sd])
    for nick in list(recorder.nick_refused):  # still refused when the players stopped
        recorder.nick_free(nick, stopped)
    longest_refused, refused_nick = recorder.nick_in_use_longest
    print(
        f"err.nickInUse answers to logins: {recorder.nick_in_use}, the longest a player kept getting them "
        f"{longest_refused:.1f} s ({refused_nick or '-'})"
    )
    print(f"answers to guestLogin: {dict(recorder.logins)}")
    print(
        f"polls answered neither ok nor sd: {dict(recorder.answers)}; "
        f"without an answer: {dict(recorder.no_answer)}"
    )
    show("replies whose k is above what their login sent", recorder.bad_k)
    show("replies whose k went back (the client sends again what k had covered)", recorder.k_back)
    print(
        "players who chose their own game's table again (not seated back after a login): "
        f"{recorder.chosen_again}"
    )
    show("lines MultiPoints could not parse", recorder.failures)
    show("dots the engine would not place on a player's board", recorder.tracking)

    print("\n== the members' logs ==")
    show("tracebacks", logs.traces, logs.tracebacks)
    print("WARNING and ERROR lines by message (repeats the log folded counted):")
    for key, count in logs.messages.most_common():
        print(f"    {count:5d} {key[:150]}\n          e.g. {logs.examples[key][:260]}")

    print("\n== each scheduled event ==")
    ok_times = list(recorder.ok_times.values())
    tables: list[Moving] = [*pairs, *bots]
    deaths = [mark for event in events for mark in event.marks if mark.what == "death"]
    late: list[str] = []
    for index, event in enumerate(events):
        end = events[index + 1].started if index + 1 < len(events) else stopped
        no_answer = max((longest_gap(t, event.started, end, stopped) for t in ok_times), default=0.0)
        no_move = max((longest_gap(p.move_times, event.started, end, stopped) for p in tables), default=0.0)
        print(
            f"{at(event.started)} {event.label}: until {at(end)} the longest without an ok answer "
            f"{no_answer:.1f} s, the longest a table made no move {no_move:.1f} s"
        )
        for mark in event.marks:
            judged = [p for p in tables if mark.tables is None or set(p.tables) & set(mark.tables)]
            waits = sorted(
                ((again_after(p.move_times, mark.at, stopped), p.table_at(mark.at)) for p in judged),
                reverse=True,
            )
            worst = f"{waits[0][0]:.1f} s (table {waits[0][1]})" if waits else "- (it owned none)"
            whose = (
                "all tables" if mark.tables is None or mark.what != "death" else f"its {len(judged)} tables"
            )
            every = [(again_after(p.move_times, mark.at, stopped), p.table_at(mark.at)) for p in tables]
            everyone = max((wait for wait, _ in every), default=0.0)
            print(
                f"    {at(mark.at)} {mark.what} {mark.member}: every table moved again within {worst} "
                f"({whose}); all tables {everyone:.1f} s"
            )
            if mark.what in ("death", "redis back"):  # every table: a player's member dying stops it too
                late += [
                    f"{mark.what} {mark.member} {at(mark.at)}: table {uid} {wait:.1f} s"
                    for wait, uid in every
                    if wait > MOVING_AGAIN_WITHIN and not _died_again(deaths, mark, uid, wait)
                ]

    print("\n== k: a command sent until a reply's k covers it ==")
    redis_back = next((m.at for e in events for m in e.marks if m.what == "redis back"), None)
    waits = [
        ((c.acked or stopped) - c.sent, c) for c in commands if c.sent is not None and c.abandoned is None
    ]
    longest = max(waits, key=lambda wait: wait[0], default=(0.0, None))
    after_redis = [w for w in waits if redis_back is not None and w[1].sent >= redis_back]
    longest_redis = max(after_redis, key=lambda wait: wait[0], default=(0.0, None))
    for title, (wait, c) in (("overall", longest), ("sent after Redis returned", longest_redis)):
        print(f"the longest k wait {title}: {wait:.1f} s" + (f" ({described(c)})" if c else ""))
    held = [
        f"{wait:.1f} s: {described(c)}"
        for wait, c in sorted(waits, key=lambda w: -w[0])
        if wait > K_SEEN_AT_MOST
    ]
    show(f"commands whose k was held past {K_HELD_AT_MOST:.0f} s (seen past {K_SEEN_AT_MOST:.0f} s)", held)

    print("\n== targets (issue 44, point 2) ==")
    check = Check()
    check.target("no acknowledged move lost", not lost, f"{len(lost)} lost")
    check.target(
        "none duplicated or phantom",
        not duplicated and not phantom,
        f"{len(duplicated)} duplicated, {len(phantom)} phantom",
    )
    check.target(
        "every board equals its table's record", not differ, f"{len(differ)} of {len(players)} differ"
    )
    check.target("no `sd` to a live session", not recorder.sd, f"{len(recorder.sd)} `sd`")
    check.target("no traceback in the members' logs", not logs.tracebacks, f"{logs.tracebacks} tracebacks")
    check.target(f"k never held past {K_HELD_AT_MOST:.0f} s", not held, f"the longest {longest[0]:.1f} s")
    check.target(
        f"every table moving again within {MOVING_AGAIN_WITHIN:.0f} s of a member's death or Redis's return",
        not late,
        f"{len(late)} late" + "".join(f"\n    {line}" for line in late[:SHOWN]),
    )
    check.target(
        "a login never inherits k",
        not recorder.bad_k,
        f"{len(recorder.bad_k)} replies with a k the login never sent",
    )
    for name, (ok, detail) in (bot_targets or {}).items():
        check.target(name, ok, detail)
    return check
