"""The bot API's event feed (docs/bots.md): the player's stream, as a poll reads it, turned into JSON
events, and the bot API's moves turned into the stream's move text.

A bot's feed is its session's stream (the lines a MultiPoints poll would get), read by the server for
the bot and translated here, so that a bot sees exactly what a person's client is shown, in the same
order, and the hub keeps one way of telling anyone anything. The translation keeps what a reply
repeats (invitations, a table's proposition and result) and says only what changed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from server.engine.gametype import GameTypeError, parse_game_type
from server.engine.moves import MAX_SIZE, MoveSyntaxError, point_to_sgf, sgf_to_point
from server.protocol.codec import LINE_SEPARATOR, ProtocolError, decode_server_text
from server.protocol.events import TEAM_SEPARATOR
from server.protocol.seeks import POOL, SEEK_ADDED, SEEK_GONE

Event = dict[str, Any]

_PROPERTY = re.compile(r"([A-Z]{1,2})((?:\[[^\]]*\])+)")
_VALUE = re.compile(r"\[([^\]]*)\]")
_COLOURS = {"B": "blue", "W": "red", "AB": "blue", "AW": "red", "UB": "blue", "UW": "red"}
KEEP_ALIVE = b"\n"  # an empty line of NDJSON: nothing happened, the connection is alive


def move_text(x: int, y: int) -> str:
    """The stream's move text for the point (x, y), counted from 0 at the top left (the room checks
    that it is on its board)."""
    if not (0 <= x < MAX_SIZE and 0 <= y < MAX_SIZE):
        raise ProtocolError("illegalMove", f"({x}, {y}) is on no board.")
    return point_to_sgf((x, y))


def _point(value: str) -> tuple[int, int] | None:
    try:
        return sgf_to_point(value[:2])
    except MoveSyntaxError:
        return None


def _nodes(text: str) -> list[list[tuple[str, list[str]]]]:
    """SGF nodes of an `sa` or `sr` line: each a list of (property, values)."""
    body = text[2:].strip("()")
    return [
        [(name, _VALUE.findall(values)) for name, values in _PROPERTY.findall(node)]
        for node in body.split(";")
        if node
    ]


def _moves(text: str) -> tuple[list[Event], list[Event]]:
    """(set-up dots, moves and take-backs) of an `sa`/`sr` line, each {colour, x, y[, seconds, undo]}."""
    setup: list[Event] = []
    moves: list[Event] = []
    for node in _nodes(text):
        seconds = {name[0]: value[0] for name, value in node if name in ("BL", "WL") and value}
        for name, values in node:
            colour = _COLOURS.get(name)
            if colour is None:
                continue
            for value in values:
                point = _point(value)
                if point is None:
                    continue
                dot: Event = {"colour": colour, "x": point[0], "y": point[1]}
                if name in ("AB", "AW"):
                    setup.append(dot)
                    continue
                if name[0] == "U":
                    dot["undo"] = True
                left = seconds.get(name[-1])
                if left is not None:
                    dot["seconds"] = _number(left)
                moves.append(dot)
    return setup, moves


def _number(text: str) -> float | int:
    value = float(text)
    return int(value) if value.is_integer() else value


def _side(key: str, side: str, teams: bool) -> Event:
    """`key`: the colour of a line's side (odd sides blue, even sides red); and at a team table `side`, the
    side itself: a colour is a whole team's there, so a bot compares the side with its own (docs/bots.md)."""
    if not side.isdigit():
        return {key: side}
    colour = "blue" if int(side) % 2 else "red"
    return {key: colour, "side": int(side)} if teams else {key: colour}


def _clocks(line: str, teams: bool) -> Event:
    """`f<side>_<t1>.<t2>[.g<s>]`: the colour (and at a team table the side) on move, each colour's
    seconds left (None: no clock), and the grace the side on move has before its clock runs (a
    tournament's sayHi, a restart's): an engine that did not know it timed its move as if its clock ran."""
    side, _, times = line[1:].partition("_")
    fields = times.split(".") if times else []
    event: Event = _side("toMove", side, teams)
    if len(fields) >= 2:
        event["blue"], event["red"] = (int(value.lstrip("p")) for value in fields[:2])
        pairs = zip(("blue", "red"), fields[:2], strict=True)
        event["paused"] = [colour for colour, value in pairs if value.startswith("p")]
        grace = [value[1:] for value in fields[2:] if value.startswith("g") and value[1:].isdigit()]
        event["grace"] = int(grace[0]) if grace else 0
    else:
        event["blue"] = event["red"] = None
    return event


Offer = tuple[str, tuple[tuple[str, ...], ...]]  # a game type, and the two teams of a team game


@dataclass
class TableView:
    """What the feed has told the bot about one game table, so that a repeated line says nothing."""

    game_type: str = ""
    blue: str = ""
    red: str = ""
    proposal: str | None = None
    result: str | None = None
    archive: str | None = None

    @property
    def teams(self) -> bool:
        return TEAM_SEPARATOR in self.blue or TEAM_SEPARATOR in self.red

    def side_of(self, nick: str) -> int | None:
        """The nick's side at a team table (docs/teams.md): team one's players 1, 3, ..., team two's 2,
        4, ... in their turn order; None when it plays no side."""
        for first, team in ((1, self.blue), (2, self.red)):
            members = team.split(TEAM_SEPARATOR)
            if nick in members:
                return first + 2 * members.index(nick)
        return None


@dataclass
class Feed:
    """One bot's feed: reads each reply of its session's stream and says what is new in it."""

    nick: str
    seen: int = 0  # the stream's msgNo: the newest event read
    tables: dict[int, TableView] = field(default_factory=dict)
    invitations: dict[str, Offer] = field(default_factory=dict)  # from -> what it offers, pending now
    sent: dict[str, str] = field(default_factory=dict)  # to -> game type, the bot's own, pending now
    seeks: set[int] = field(default_factory=set)  # the open seeks the feed has listed
    pool: str | None = None  # the pool the bot waits in, as the feed said

    def read(
        self, reply: str, seek_open: Callable[[int], bool] = lambda number: True
    ) -> tuple[list[Event], bool]:
        """The events a reply brings, and whether the session is still logged in (`ok`, not `sd`).
        `seek_open`: whether a seek is one to list (the bot may accept it, or it is the bot's)."""
        lines = reply.split(LINE_SEPARATOR)
        if not lines or lines[0] not in ("ok", "sd") or lines[-1] != "end":
            return [], False
        events: list[Event] = []
        invitations: dict[str, Offer] = {}
        sent: dict[str, str] = {}
        declined: list[str] = []
        listed: set[int] | None = None  # the seeks a whole lobby state lists: the others are gone
        pool = None
        table = 0
        sitting: set[int] = set()  # the tables this reply has a section of: every one the bot sits at
        for line in _whole_first(lines[1:-1]):
            kind = line[:2]
            if line.startswith(POOL):
                pool = line[len(POOL) :].split(".")[0]
            elif line.startswith("m"):
                numbers = line[1:].split(".")
                if len(numbers) >= 2 and numbers[1].isdigit():
                    self.seen = int(numbers[1])
            elif line.startswith("q"):
                table = int(line[1:]) if line[1:].isdigit() else 0
                sitting.add(table)
            elif kind == "vg":
                sender, _, offer = line[2:].partition(".")
                invitations[sender] = _offer(offer)
            elif kind == "vs":
                whom, _, game_type = line[2:].partition(".")
                sent[whom] = game_type
            elif kind == "vr":
                declined.append(line[2:])
            elif table:
                events.extend(self._table_line(table, line))
            elif kind == "pr":
                listed = set()
            elif kind in (SEEK_ADDED, SEEK_GONE):
                events.extend(self._seek_line(line, listed, seek_open))
        if lines[0] == "ok":
            events.extend(self._forget_tables_but(sitting))
        if listed is not None:
            events.extend(_seek_gone(number) for number in sorted(self.seeks - listed))
            self.seeks &= listed
        for sender, offer in invitations.items():
            if self.invitations.get(sender) != offer:
                events.append(_invitation(sender, offer))
        gone = [sender for sender in self.invitations if sender not in invitations]
        events.extend({"type": "invitationGone", "from": sender} for sender in gone)
        events.extend({"type": "invitationDeclined", "by": nick} for nick in declined)
        events.extend(
            {"type": "invitationEnded", "to": whom}
            for whom in self.sent
            if whom not in sent and whom not in declined
        )
        self.invitations, self.sent = invitations, sent
        if pool != self.pool:
            if self.pool is not None:
                events.append({"type": "poolLeft", "pool": self.pool})
            if pool is not None:
                events.append({"type": "poolWaiting", "pool": pool})
            self.pool = pool
        return _folded(events), lines[0] == "ok"

    def _forget_tables_but(self, sitting: set[int]) -> list[Event]:
        """Every reply names each table the session sits at: the views of the others go, or a feed open
        for weeks kept one for every table its bot ever played at (about 470 bytes each). A table left
        out of one reply for its new game or for play taken back (Stream.full_reply) comes whole in the
        next, `d` first; a proposition told at it is said gone now (its `u` tells it again if it stays)."""
        gone = [uid for uid in self.tables if uid not in sitting]
        told = [
            {"type": "proposalGone", "table": uid} for uid in gone if self.tables[uid].proposal is not None
        ]
        for uid in gone:
            del self.tables[uid]
        return told

    def _seek_line(self, line: str, listed: set[int] | None, seek_open: Callable[[int], bool]) -> list[Event]:
        """`ka<number>.<nick>.<lowest>.<highest>.<gameType>` or `kd<number>`."""
        number_text, _, rest = line[2:].partition(".")
        if not number_text.isdigit():
            return []
        number = int(number_text)
        if line.startswith(SEEK_GONE):
            if number not in self.seeks:
                return []
            self.seeks.discard(number)
            return [_seek_gone(number)]
        if listed is not None:
            listed.add(number)
        if number in self.seeks or not seek_open(number):
            return []
        self.seeks.add(number)
        nick, lowest, highest, game_type = (rest.split(".", 3) + ["", "", ""])[:4]
        event: Event = {
            "type": "seek",
            "id": number,
            **_game(nick, game_type),
            "minRating": int(lowest) if lowest.isdigit() else None,
            "maxRating": int(highest) if highest.isdigit() else None,
        }
        return [event]

    def _table_line(self, uid: int, line: str) -> list[Event]:
        view = self.tables.setdefault(uid, TableView())
        kind = line[:2]
        if line.startswith("d"):  # a whole state begins: what the bot was told of the table is told again
            game_type, blue, red = _description(line.partition(".")[2])
            view.game_type, view.blue, view.red = game_type, blue, red
            told, view.proposal = view.proposal, None
            view.result = view.archive = None
            # its `u` tells a proposition still pending again; one gone (taken back with play storage
            # lost, or went while the feed lagged) is said gone, or an engine answered it late
            return [] if told is None else [{"type": "proposalGone", "table": uid}]
        if kind == "sr":
            setup, moves = _moves(line)
            return [self._full(uid, view, setup, moves)]
        if kind == "sa":
            return [{"type": "move", "table": uid, **move} for move in _moves(line)[1]]
        if line.startswith("f"):
            return [{"type": "clock", "table": uid, **_clocks(line, view.teams)}]
        if line.startswith("x"):
            return self._state(uid, view, line)
        if line.startswith("u"):
            # `u<side><what>[.<sides that agreed>]`: the same proposition while agreements come in, at a
            # team table (told again, a bot agreed again at each, docs/teams.md)
            proposal = line[1:].split(".")[0] or None
            if proposal == view.proposal:
                return []
            view.proposal = proposal
            if proposal is None:
                return [{"type": "proposalGone", "table": uid}]
            by = _side("by", proposal[0], view.teams)
            return [{"type": "proposal", "table": uid, **by, "what": proposal[1:]}]
        if kind == "ca":
            return [_chat(uid, line[2:])]
        return []

    def _full(self, uid: int, view: TableView, setup: list[Event], moves: list[Event]) -> Event:
        side = view.side_of(self.nick)
        colour = None if side is None else "blue" if side % 2 else "red"
        width = height = None
        try:
            game_type = parse_game_type(view.game_type)
            width, height = game_type.width, game_type.height
        except GameTypeError:
            pass
        full: Event = {
            "type": "gameFull",
            "table": uid,
            "gameType": view.game_type,
            "width": width,
            "height": height,
            "blue": view.blue,
            "red": view.red,
            "colour": colour,
            "setup": setup,
            "moves": moves,
        }
        if view.teams:
            full["side"] = side
        return full

    def _state(self, uid: int, view: TableView, line: str) -> list[Event]:
        fields = line[1:].split(".")
        if len(fields) < 3:
            return []
        result = None if fields[2] == "-" else fields[2].replace(",", ".")
        archive = fields[3] if len(fields) > 3 and fields[3] else None
        events: list[Event] = []
        if result != view.result and result is not None:
            events.append({"type": "gameEnd", "table": uid, "result": result})
        if archive != view.archive and archive is not None:
            events.append({"type": "archived", "table": uid, "number": int(archive)})
        view.result, view.archive = result, archive
        return events


def _folded(events: list[Event]) -> list[Event]:
    """A table's gameFull takes the moves that follow it in the same reply, and of the clocks after it
    only the last is kept: a follower of another member's table sends the owner's last whole state and
    the lines since, and a bot told the board without them, and a clock saying it was on move, moved
    although the next events of the same reply said it had already."""
    full: dict[int, Event] = {}  # table -> its gameFull in this reply
    last_clock: dict[int, int] = {}  # table -> where its last clock after the gameFull is in `kept`
    kept: list[Event | None] = []
    for event in events:
        table, kind = event.get("table"), event["type"]
        if kind == "gameFull":
            full[table] = event
            last_clock.pop(table, None)
            kept.append(event)
        elif table not in full:
            kept.append(event)
        elif kind == "move":
            moves = full[table]["moves"]
            if not event.get("undo"):
                moves.append({key: value for key, value in event.items() if key not in ("type", "table")})
            elif moves and all(moves[-1].get(key) == event[key] for key in ("colour", "x", "y")):
                moves.pop()  # the take-back of the last move
        elif kind == "clock":
            if table in last_clock:
                kept[last_clock[table]] = None
            last_clock[table] = len(kept)
            kept.append(event)
        else:
            kept.append(event)
    return [event for event in kept if event is not None]


def _whole_first(lines: list[str]) -> list[str]:
    """The lines with a table's `d` and `sr` first in its section: a whole state comes as `pr`, `d`, `x`,
    `f`, `sr`, `u`, and a bot must have the board (gameFull) before the clock that says who is on move."""
    ordered: list[str] = []
    first: list[str] = []  # the current section's `d` and `sr`, in their order
    rest: list[str] = []  # and its other lines (the lobby's section has a `d` for every table)
    for line in lines:
        if line.startswith("q"):
            ordered += first + rest
            ordered.append(line)
            first, rest = [], []
        else:
            (first if line.startswith(("d", "sr")) else rest).append(line)
    return ordered + first + rest


def _description(rest: str) -> tuple[str, str, str]:
    """A `d` line after its uid: (game type, blue, red); the game type may hold dots, the nicks not."""
    parts = rest.rsplit(".", 2)
    if len(parts) < 3:
        return rest, "", ""
    return decode_server_text(parts[0]), parts[1], parts[2]


def _offer(text: str) -> Offer:
    """A `vg` line after its nick: the game type, and a team invitation's two teams in turn order (after
    the game type come the inviter's team, the other team and who accepted so far, each nicks joined by
    `,`: docs/teams.md). Who accepted is left out: the same invitation is not said again at each."""
    parts = text.rsplit(".", 3)
    if len(parts) == 4 and TEAM_SEPARATOR in parts[1] and TEAM_SEPARATOR in parts[2]:
        return parts[0], (tuple(parts[1].split(TEAM_SEPARATOR)), tuple(parts[2].split(TEAM_SEPARATOR)))
    return text, ()


def _invitation(sender: str, offer: Offer) -> Event:
    game_type, teams = offer
    event: Event = {"type": "invitation", **_game(sender, game_type)}
    if teams:
        event["teams"] = [list(team) for team in teams]
        if "rated" in event:
            event["rated"] = False  # a team game is unrated, whatever its type (docs/teams.md)
    return event


def _game(sender: str, game_type: str) -> Event:
    """What an invitation or a seek offers: who, the game type, and what a bot decides by."""
    event: Event = {"from": sender, "gameType": decode_server_text(game_type)}
    try:
        parsed = parse_game_type(event["gameType"])
    except GameTypeError:
        return event
    event.update(width=parsed.width, height=parsed.height, rated=parsed.ranked)
    return event


def _seek_gone(number: int) -> Event:
    return {"type": "seekGone", "id": number}


def _chat(uid: int, line: str) -> Event:
    """`<time>_<n>.<nick>.<nickType>.<text>`: a server line has no nick and says what happened in its
    nickType (docs/protocol.md, "Server lines")."""
    parts = line.split(".", 3)
    if len(parts) < 4:
        return {"type": "chat", "table": uid, "from": "", "code": "", "text": decode_server_text(line)}
    return {
        "type": "chat",
        "table": uid,
        "from": parts[1],
        "code": parts[2],
        "text": decode_server_text(parts[3]),
    }
