"""Floods of the AI players (docs/ai.md), a section of benchmarks/abuse.py.

Section "ai": the real server with --ai-workers (1) worker process. A normal player, from an address of
its own, plays `AI easy` on 20x20 with 60 s + 2 s a move and answers every move of the computer at once;
measured is how long each of the computer's moves takes to reach it (its move sent, the poll that shows
the computer's answer), and whether the computer lost on time. First alone, then while an attacker
with --ai-networks /24 networks (127.N.0.x, 10 addresses each, 4 guests an address: the most guests and
guest tables a network may hold) does one of:

- `games`: every guest plays `AI hard` on 52x52 without a clock, answering each of its moves at once,
  so that every one of those tables always wants a search;
- `reopen`: every guest opens a 52x52 game in which the computer moves first and leaves it at once, as
  often as its invitations a minute allow; a guest whose allowance is spent logs out and a new guest (a
  new id, as MultiPoints draws at every start) logs in from its address, as often as the guest logins
  an address allow. Before the computer forgot the search of a game that closed (docs/ai.md), every
  such search still ran, after the games that were being played.

Printed for each: the player's waits (p50, p99, worst), its moves answered, losses on time, and what the
attacker did. Target: under the attack the player's worst wait below 10 s and no loss on time.

    .venv/bin/python benchmarks/abuse.py --only ai --ai-seconds 60
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from stream import HttpConnection, Server, ms

from server.engine.moves import point_to_sgf

PLAYER_TYPE = "2020s0..a.A.a.60.2.."  # 20x20, standard rules, the player blue, type A, 60 s + 2 s a move
ATTACK_GAME = "5252s0..a.A.n...."  # 52x52, the attacker blue, no clock
FIRST_MOVE_BY_AI = "5252s0..p.A.n...."  # the computer blue: it thinks as soon as the table opens
ADDRESSES = 10  # per network
GUESTS = 4  # per address: 40 a network, the network's most players and guest tables
TARGET_WORST = 10.0  # seconds the player may wait for one move of the computer
TAKEN = re.compile(rb"sa;[BW]\[([a-zA-Z]{2})")  # a move's point
STATE = re.compile(rb"/x(\d+)\.(\d)\.([^./]*)\.")  # a table's x line: uid, side on move, result


@dataclass
class Figures:
    waits: list[float] = field(default_factory=list)
    lost_on_time: int = 0
    games: int = 0
    attack: Counter[str] = field(default_factory=Counter)


class Guest:
    """A guest on one keep-alive connection from `address` (127.0.0.0/8 is all this machine's)."""

    def __init__(self, conn: HttpConnection, secret: str, nick: str) -> None:
        self.conn, self.secret, self.nick = conn, secret, nick
        self.seen = 0

    async def call(self, query: str) -> bytes:
        """The answer; a request past the per-id limit (20 a second) is sent again a moment later."""
        while True:
            _, body = await self.conn.get(f"/a.kropki?idGracza={self.secret}&{query}")
            if body != b"err.tooFast":
                return body
            await asyncio.sleep(0.2)

    async def login(self) -> bytes:
        return await self.call(f"co=guestLogin&opis={quote(self.nick)}")

    async def invite(self, whom: str, game_type: str) -> bytes:
        return await self.call(f"co=zapraszam&whom={quote(whom)}&gameType={game_type}")

    async def move(self, uid: int, where: str) -> bytes:
        return await self.call(f"co=graczStawiaKropke&table={uid}&where={where}")

    async def poll(self, wait: float) -> bytes:
        body = await self.call(f"co=getMsg&msgNo={self.seen}&msgFromClient=x&wait={wait:g}")
        head = re.match(rb"(?:ok|sd)/m\d+\.(\d+)\.", body)
        if head is not None:
            self.seen = int(head.group(1))
        return body


async def guest_from(port: int, address: str, secret: str, nick: str, timeout: float) -> Guest:
    loop = asyncio.get_running_loop()
    _, conn = await asyncio.wait_for(
        loop.create_connection(
            lambda: HttpConnection(port, timeout), "127.0.0.1", port, local_addr=(address, 0)
        ),
        timeout,
    )
    return Guest(conn, secret, nick)


def points(width: int, height: int, seed: int) -> list[str]:
    every = [point_to_sgf((x, y)) for x in range(width) for y in range(height)]
    random.Random(seed).shuffle(every)
    return every


async def play_on(
    guest: Guest, opponent: str, game_type: str, size: int, stop_at: float, figures: Figures
) -> None:
    """Open a game against `opponent` and answer each of its moves at once (a new game when one ends);
    `figures.waits`: from each move sent to the poll that shows the answer."""
    while time.monotonic() < stop_at:
        if await guest.invite(opponent, game_type) != b"":
            await asyncio.sleep(1)
            continue
        figures.games += 1
        free, sent_at, uid, side = points(size, size, figures.games), None, None, b""
        taken: set[bytes] = set()
        while time.monotonic() < stop_at:
            body = await guest.poll(0 if side == b"1" else 1)
            states = [s for s in STATE.findall(body) if uid is None or int(s[0]) == uid]
            taken.update(TAKEN.findall(body))
            if states:
                table, side, result = states[-1]
                uid = int(table)
                if result not in (b"", b"-"):
                    figures.lost_on_time += (
                        result == b"B+T"
                    )  # blue (the guest) won: the computer's time ran out
                    await guest.call("co=zmienStol&newTable=0")
                    break
            if side != b"1" or uid is None:
                continue
            if sent_at is not None:
                figures.waits.append(time.monotonic() - sent_at)
                sent_at = None
            free = [point for point in free if point.encode() not in taken]
            if free and await guest.move(uid, free.pop()) == b"":  # refused (inside a ring): another one
                sent_at, side = time.monotonic(), b"2"


async def attack_games(port: int, network: int, stop_at: float, timeout: float, figures: Figures) -> None:
    """Every guest of the network plays `AI hard` on 52x52, answering at once."""

    async def one(address: str, secret: str) -> None:
        guest = await guest_from(port, address, secret, f"*{secret}", timeout)
        if await guest.login() != b"":
            figures.attack["login refused"] += 1
            return
        await play_on(guest, "AI hard", ATTACK_GAME, 52, stop_at, figures)

    await asyncio.gather(
        *(
            one(f"127.{network}.0.{a + 1}", f"g{network}x{a}x{g}")
            for a in range(ADDRESSES)
            for g in range(GUESTS)
        )
    )


async def attack_reopen(port: int, network: int, stop_at: float, timeout: float, figures: Figures) -> None:
    """Every guest opens games in which the computer moves first and leaves each at once; new guests
    when the invitations a minute are spent."""

    async def one(address: str, name: str) -> None:
        guest: Guest | None = None
        made = 0
        while time.monotonic() < stop_at:
            if guest is None:
                made += 1
                guest = await guest_from(port, address, f"{name}y{made}", f"*{name}y{made}", timeout)
                if await guest.login() != b"":
                    figures.attack["login refused"] += 1
                    guest.conn.close()
                    guest = None
                    await asyncio.sleep(1)
                    continue
            answer = await guest.invite("AI hard", FIRST_MOVE_BY_AI)
            figures.attack[answer.decode(errors="replace")[:30] or "opened"] += 1
            if answer == b"":
                await guest.call("co=zmienStol&newTable=0")  # leaving closes it
            else:  # its invitations a minute are spent (or the address is full): a new guest
                await guest.call("co=usunGracza")
                guest.conn.close()
                guest = None

    await asyncio.gather(
        *(
            one(f"127.{network}.0.{a + 1}", f"r{network}x{a}x{g}")
            for a in range(ADDRESSES)
            for g in range(GUESTS)
        )
    )


ATTACKS = {"games": attack_games, "reopen": attack_reopen}


async def measured(port: int, attack: str | None, networks: int, seconds: float, timeout: float) -> Figures:
    player_figures, attack_figures = Figures(), Figures()
    stop_at = time.monotonic() + seconds
    player = await guest_from(port, "127.200.0.1", "normal1", "*Normal", timeout)
    if await player.login() != b"":
        raise RuntimeError("the normal player could not log in")
    work = [play_on(player, "AI easy", PLAYER_TYPE, 20, stop_at, player_figures)]
    if attack is not None:
        work += [ATTACKS[attack](port, 10 + n, stop_at, timeout, attack_figures) for n in range(networks)]
    await asyncio.gather(*work)
    player_figures.attack = attack_figures.attack
    player_figures.attack["games played"] = attack_figures.games
    player_figures.attack["moves answered"] = len(attack_figures.waits)
    await player.call("co=usunGracza")
    return player_figures


def report(name: str, figures: Figures) -> bool:
    waits = sorted(figures.waits)
    worst = waits[-1] if waits else float("inf")
    met = worst < TARGET_WORST and not figures.lost_on_time
    print(
        f"{name}: the player's waits for the computer {ms(waits, 50, 99)}, worst {worst * 1000:.0f} ms, "
        f"{len(waits)} moves answered, {figures.games} games, {figures.lost_on_time} lost on time by the "
        f"computer{'' if met else '  MISSED'}"
    )
    if figures.attack:
        print("    attack: " + ", ".join(f"{what} {n}" for what, n in figures.attack.most_common()))
    return met


def ai_section(args: argparse.Namespace, workdir: Path) -> bool:
    extra = ("--ai-workers", str(args.ai_workers))
    results = []
    for attack in (None, *(args.ai_attack or sorted(ATTACKS))):
        server = Server(args.python, args.log_level, workdir / (attack or "alone"), None, extra)
        server.workdir.mkdir()
        server.start()
        try:
            figures = asyncio.run(
                measured(server.port, attack, args.ai_networks, args.ai_seconds, args.timeout)
            )
            cpu = server.cpu_seconds()
        finally:
            server.stop()
        name = "alone" if attack is None else f"{attack} from {args.ai_networks} networks"
        results.append(report(name, figures) or attack is None)
        print(f"    server process CPU {cpu:.1f} s; log: {server.log_summary()}")
    return all(results)


def ai_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("section ai")
    add = group.add_argument
    add("--ai-seconds", type=float, default=60.0, help="length of each run")
    add("--ai-workers", type=int, default=1, help="the server's --ai-workers")
    add("--ai-networks", type=int, default=1, help="/24 networks the attacker has, 40 guests each")
    add("--ai-attack", action="append", choices=sorted(ATTACKS), help="attacks to run (default both)")


# --- section "undo" ---------------------------------------------------------------------------------


async def archive_a_long_game(port: int, size: int, timeout: float) -> int:
    """Two guests of the unlimited 127.0.0.1 fill nine tenths of a board and one resigns: the
    archive's game 1, which an attacker's analysis tables load whole (`SGFz1`)."""
    blue = await guest_from(port, "127.0.0.1", "long1", "*Long1", timeout)
    red = await guest_from(port, "127.0.0.1", "long2", "*Long2", timeout)
    for guest in (blue, red):
        await guest.login()
    await blue.invite("*Long2", f"{size:02}{size:02}s0..a.F.n....")
    await red.call("co=zaproszenieTak")
    moves = 0
    for where in points(size, size, 7)[: size * size * 9 // 10]:  # a tenth left free for the take-backs
        mover = (blue, red)[moves % 2]
        moves += await mover.move(1, where) == b""
    await red.call("co=propose&table=1&proposal=resign")
    for _ in range(100):
        status, _ = await blue.conn.get("/sgf/1")
        if status == 200:
            return moves
        await asyncio.sleep(0.1)
    raise RuntimeError("the long game was not archived")


async def storm(
    port: int, size: int, attackers: int, stop_at: float, timeout: float, answers: Counter[str]
) -> None:
    """Guests of one address (127.0.0.2, limited), each at its most analysis tables of game 1, each
    sending a dot and its take-back, table after table, as fast as the server answers."""

    async def one(n: int) -> None:
        guest = await guest_from(port, "127.0.0.2", f"atk{n}", f"*Atk{n}", timeout)
        await guest.login()
        analysis = f"{size:02}{size:02}s0.SGFz1.a.a.n...c___SUsuen{guest.nick}."
        for _ in range(3):
            opened = await guest.invite(guest.nick, analysis)
            answers["analysis " + (opened.decode(errors="replace")[:30] or "opened")] += 1
        body = await guest.poll(0)
        uids = sorted({int(uid) for uid in re.findall(rb"/q(\d+)/", body)} - {0})
        free = {uid: points(size, size, uid) for uid in uids}
        answers["tables"] += len(uids)
        turn = 0
        while time.monotonic() < stop_at and uids:
            uid = uids[turn % len(uids)]
            turn += 1
            if not free[uid]:
                break
            answer = await guest.move(uid, free[uid][-1])
            if answer in (b"err.illegalMove", b"err.badMove"):
                free[uid].pop()  # taken in the archived game: another point
                continue
            answers[answer.decode(errors="replace")[:30] or "dot"] += 1
            if answer == b"":
                undo = await guest.call(f"co=propose&table={uid}&proposal=undo")
                answers["undo " + (undo.decode(errors="replace")[:30] or "done")] += 1
            else:
                await asyncio.sleep(0.05)

    await asyncio.gather(*(one(n) for n in range(attackers)))


def undo_section(args: argparse.Namespace, workdir: Path) -> bool:
    import abuse  # the normal player of abuse.py's sections (abuse imports this module)

    server = Server(args.python, args.log_level, workdir, None, ("--ai-workers", "0"))
    server.start()
    try:
        moves = asyncio.run(archive_a_long_game(server.port, args.undo_board, args.timeout))
        answers: Counter[str] = Counter()
        start_at = time.monotonic() + 1
        stop_at = start_at + args.undo_seconds
        process, receiving = abuse.measure_player(server.port, start_at, stop_at, args.timeout)
        cpu = server.cpu_seconds()
        asyncio.run(storm(server.port, args.undo_board, args.undo_attackers, stop_at, args.timeout, answers))
        cpu = server.cpu_seconds() - cpu
        seconds, failures = abuse.player_report(process, receiving, args.timeout)
    finally:
        server.stop()
    print(f"archived game 1: {moves} moves on {args.undo_board}x{args.undo_board}")
    print(
        f"flood: {args.undo_attackers} guests of one address, 3 analysis tables of game 1 each, a dot and "
        f"its take-back in turn for {args.undo_seconds:g} s"
    )
    print("    answers: " + ", ".join(f"{what} {n}" for what, n in answers.most_common()))
    print(f"    server CPU {cpu:.1f} s in {args.undo_seconds + 1:g} s; log: {server.log_summary()}")
    return abuse.print_player(seconds, failures)


def undo_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("section undo")
    group.add_argument("--undo-seconds", type=float, default=30.0, help="length of the take-back flood")
    group.add_argument("--undo-attackers", type=int, default=4, help="guests of the attacker's address")
    group.add_argument("--undo-board", type=int, default=52, help="the long game's board (square)")
