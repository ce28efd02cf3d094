"""SGF (FF[4]) reading and writing for Kropki game records (GM[40]).

Two layers. The syntax layer turns any SGF collection into plain trees of nodes and back; it knows
nothing about games. The record layer maps the main line of a GM[40] record to a typed `GameRecord`
and writes one back in a fixed property order. Move texts (`"rk.qlrmslrkql"`) and territory rings
stay raw strings here: turning them into board moves is the rules engine's job.

Both layers refuse bad input with `SgfError`, never with another exception, because records come
from uploads and from the network. Parsing and serialization are iterative, so a deeply nested or
large input cannot exhaust the Python stack.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

MAX_SGF_BYTES = 2 * 1024 * 1024
"""Largest accepted input, in UTF-8 bytes: the longest real records are a few kB."""

MAX_DEPTH = 1000
"""Deepest accepted nesting of game trees (variations inside variations)."""

MIN_SIZE, MAX_SIZE = 4, 52
"""Board side limits: SGF point letters a..z, A..Z give at most 52 columns and rows."""

ROOT_ORDER = (
    "AB",
    "AW",
    "HA",
    "PB",
    "PW",
    "BR",
    "WR",
    "TM",
    "OT",
    "BL",
    "WL",
    "DT",
    "EV",
    "RO",
    "RE",
    "C",
)
"""Order of the root properties that `write_record` writes after FF, GM, CA, AP, SZ and RU."""

_SPACE = re.compile(r"[ \t\n\r\v\f]*")
_IDENT = re.compile(r"[A-Z]+")
# A bracketed value and the whitespace after it; possessive quantifiers keep a failed match linear.
_VALUE = re.compile(r"\[((?:[^\\\]]++|\\.)*+)\][ \t\n\r\v\f]*", re.DOTALL)
_ESCAPE = re.compile(r"\\(?:\r\n|\n\r|\r|\n|(.))", re.DOTALL)
_SIZE = re.compile(r"([0-9]{1,3})(?::([0-9]{1,3}))?")
_HANDICAP = re.compile(r"[0-9]{1,4}")
_SECONDS = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_POINT = re.compile(r"[a-zA-Z]{2}")


class SgfError(ValueError):
    """Malformed SGF text or a record that GM[40] cannot hold; the message says what and where."""


@dataclass
class Node:
    """One SGF node: property identifier -> its values (unescaped), in the order written."""

    props: dict[str, list[str]] = field(default_factory=dict)


@dataclass
class GameTree:
    """A sequence of nodes followed by zero or more alternative continuations."""

    nodes: list[Node] = field(default_factory=list)
    variations: list[GameTree] = field(default_factory=list)


# ---------------------------------------------------------------------------------------------
# Syntax layer


def parse_collection(text: str) -> list[GameTree]:
    """Parse an SGF collection (one or more game trees) into trees of unescaped values."""
    if len(text) > MAX_SGF_BYTES or len(text.encode("utf-8", "surrogatepass")) > MAX_SGF_BYTES:
        raise SgfError(f"input is larger than the {MAX_SGF_BYTES} byte limit")
    trees: list[GameTree] = []
    open_trees: list[GameTree] = []
    pos = 0
    end = len(text)
    while True:
        pos = _SPACE.match(text, pos).end()
        if pos == end:
            break
        char = text[pos]
        if char == "(":
            if len(open_trees) == MAX_DEPTH:
                raise SgfError(f"game trees nested deeper than {MAX_DEPTH} at offset {pos}")
            tree = GameTree()
            if open_trees:
                parent = open_trees[-1]
                if not parent.nodes:
                    raise SgfError(f"variation before the first node of a game tree at offset {pos}")
                parent.variations.append(tree)
            else:
                trees.append(tree)
            open_trees.append(tree)
            pos += 1
        elif char == ";":
            if not open_trees:
                raise SgfError(f"expected '(' at offset {pos}, found ';'")
            tree = open_trees[-1]
            if tree.variations:
                raise SgfError(f"node after a variation at offset {pos}")
            node, pos = _parse_node(text, _SPACE.match(text, pos + 1).end())
            tree.nodes.append(node)
        elif char == ")" and open_trees:
            if not open_trees.pop().nodes:
                raise SgfError(f"game tree without nodes closed at offset {pos}")
            pos += 1
        elif open_trees:
            raise SgfError(f"unexpected {char!r} at offset {pos}")
        elif trees:
            raise SgfError(f"unexpected {char!r} after the game tree at offset {pos}")
        else:
            raise SgfError(f"expected '(' at offset {pos}, found {char!r}")
    if open_trees:
        raise SgfError(f"unterminated game tree: {len(open_trees)} ')' missing at end of input")
    if not trees:
        raise SgfError("no game tree in input")
    return trees


def _parse_node(text: str, pos: int) -> tuple[Node, int]:
    """Parse the properties that start at `pos`; return the node and the offset after it."""
    node = Node()
    while match := _IDENT.match(text, pos):
        ident = match.group()
        if ident in node.props:
            raise SgfError(f"property {ident[:20]} repeated in one node at offset {pos}")
        values: list[str] = []
        pos = _SPACE.match(text, match.end()).end()
        while text.startswith("[", pos):
            value = _VALUE.match(text, pos)
            if value is None:
                raise SgfError(f"unterminated property value at offset {pos}")
            raw = value.group(1)
            values.append(_ESCAPE.sub(_unescape, raw) if "\\" in raw else raw)
            pos = value.end()
        if not values:
            raise SgfError(f"property {ident[:20]} without value at offset {match.start()}")
        node.props[ident] = values
    return node, pos


def _unescape(match: re.Match[str]) -> str:
    """Escaped character -> itself; soft line break (backslash-newline) -> nothing."""
    return match.group(1) or ""


def serialize_collection(trees: list[GameTree]) -> str:
    """Write trees as SGF text that `parse_collection` reads back to equal trees."""
    if not trees:
        raise SgfError("a collection needs at least one game tree")
    out: list[str] = []
    pending: list[GameTree | str] = list(reversed(trees))
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            out.append(item)
            continue
        if not item.nodes:
            raise SgfError("cannot write a game tree without nodes")
        out.append("(")
        out.extend(_node_text(node) for node in item.nodes)
        pending.append(")")
        pending.extend(reversed(item.variations))
    return "".join(out)


def _node_text(node: Node) -> str:
    parts = [";"]
    for ident, values in node.props.items():
        if not _IDENT.fullmatch(ident):
            raise SgfError(f"property identifier {ident!r} is not upper-case letters")
        if not values:
            raise SgfError(f"property {ident} has no value")
        parts.append(ident)
        parts.extend(f"[{_escape(value)}]" for value in values)
    return "".join(parts)


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("]", "\\]")


def main_line(tree: GameTree) -> list[Node]:
    """Nodes of the main line: the first variation at every branch."""
    nodes = list(tree.nodes)
    while tree.variations:
        tree = tree.variations[0]
        nodes.extend(tree.nodes)
    return nodes


# ---------------------------------------------------------------------------------------------
# Record layer


@dataclass
class SgfMove:
    """One B or W move value with the clock and comment of its node."""

    colour: str
    value: str
    time_left: float | None = None
    comment: str | None = None


@dataclass
class GameRecord:
    """The main line of a GM[40] record with its root properties as typed fields."""

    width: int
    height: int
    rules: dict[str, str] = field(default_factory=dict)
    rule_set: str | None = None  # an RU that names rules (`russian`) instead of zagram's key=value flags
    black_setup: list[str] = field(default_factory=list)
    white_setup: list[str] = field(default_factory=list)
    handicap: int | None = None
    black_name: str | None = None
    white_name: str | None = None
    black_rating: str | None = None
    white_rating: str | None = None
    date: str | None = None
    event: str | None = None
    round: str | None = None
    main_time: str | None = None
    overtime: str | None = None
    black_time_left: float | None = None
    white_time_left: float | None = None
    result: str | None = None
    comment: str | None = None
    application: str | None = None
    moves: list[SgfMove] = field(default_factory=list)
    black_territory: list[str] | None = None
    white_territory: list[str] | None = None


_TEXT_FIELDS = {
    "PB": "black_name",
    "PW": "white_name",
    "BR": "black_rating",
    "WR": "white_rating",
    "DT": "date",
    "EV": "event",
    "RO": "round",
    "TM": "main_time",
    "OT": "overtime",
    "RE": "result",
    "C": "comment",
    "AP": "application",
}
"""Root properties kept as text, and the `GameRecord` field of each."""


def read_record(text: str) -> GameRecord:
    """Read the main line of the first game tree of a GM[40] collection.

    Every B/W value after the root is one move; a node's BL/WL (of the mover's colour) and C go to its
    last move. Unknown properties, a clock of the other colour, and C/BL/WL in nodes without a move
    are ignored, as zagram and playdots records carry nothing else that the server needs.
    """
    nodes = main_line(parse_collection(text)[0])
    root = nodes[0].props
    game = _single(root, "GM", 0)
    if game is not None and game != "40":
        raise SgfError(f"node 0: GM[{game}] is not Kropki (GM[40])")
    size = _single(root, "SZ", 0)
    if size is None:
        raise SgfError("node 0: SZ is missing")
    width, height = _parse_size(size)
    record = GameRecord(width=width, height=height)
    rules = _single(root, "RU", 0)
    if rules and "=" not in rules:
        record.rule_set = rules  # other servers' RU; replay.rules_of says which are known
    elif rules:
        record.rules = _parse_rules(rules)
    record.black_setup = _setup_points(root, "AB", width, height)
    record.white_setup = _setup_points(root, "AW", width, height)
    handicap = _single(root, "HA", 0)
    if handicap is not None:
        if not _HANDICAP.fullmatch(handicap):
            raise SgfError(f"node 0: HA must be an integer 0..9999, got {handicap!r}")
        record.handicap = int(handicap)
    for ident, name in _TEXT_FIELDS.items():
        setattr(record, name, _single(root, ident, 0))
    record.black_time_left = _seconds(root, "BL", 0)
    record.white_time_left = _seconds(root, "WL", 0)
    for colour in ("B", "W"):
        if colour in root:
            raise SgfError(f"node 0: a {colour} move in the root is not supported")
    for index, node in enumerate(nodes):
        _read_territory(record, node.props, index)
        if index:
            record.moves.extend(_node_moves(node.props, index))
    return record


def _single(props: dict[str, list[str]], ident: str, index: int) -> str | None:
    values = props.get(ident)
    if values is None:
        return None
    if len(values) != 1:
        raise SgfError(f"node {index}: {ident} has {len(values)} values")
    return values[0]


def _parse_size(text: str) -> tuple[int, int]:
    match = _SIZE.fullmatch(text)
    if match is None:
        raise SgfError(f"node 0: SZ must be N or W:H with {MIN_SIZE}..{MAX_SIZE}, got {text!r}")
    width = int(match.group(1))
    height = int(match.group(2) or width)
    _check_size(width, height)
    return width, height


def _check_size(width: int, height: int) -> None:
    if not (MIN_SIZE <= width <= MAX_SIZE and MIN_SIZE <= height <= MAX_SIZE):
        raise SgfError(f"SZ must be N or W:H with {MIN_SIZE}..{MAX_SIZE}, got {width}x{height}")


def _parse_rules(text: str) -> dict[str, str]:
    """Split `RU[Punish=0,Holes=1,...]` into an ordered dict; keys must be unique."""
    rules: dict[str, str] = {}
    for item in text.split(","):
        key, sep, value = item.partition("=")
        if not key or not sep:
            raise SgfError(f"node 0: RU item {item!r} is not key=value")
        if key in rules:
            raise SgfError(f"node 0: RU repeats {key}")
        rules[key] = value
    return rules


def _setup_points(props: dict[str, list[str]], ident: str, width: int, height: int) -> list[str]:
    points = props.get(ident, [])
    for point in points:
        _check_point(point, width, height, f"node 0: {ident}")
    return points


def _check_point(point: str, width: int, height: int, where: str) -> None:
    if not _POINT.fullmatch(point) or _coordinate(point[0]) >= width or _coordinate(point[1]) >= height:
        raise SgfError(f"{where} point {point!r} is not on the {width}x{height} board")


def _coordinate(letter: str) -> int:
    """SGF letter to 0-based index: a..z = 0..25, A..Z = 26..51."""
    return ord(letter) - ord("a") if letter.islower() else ord(letter) - ord("A") + 26


def _seconds(props: dict[str, list[str]], ident: str, index: int) -> float | None:
    text = _single(props, ident, index)
    if text is None:
        return None
    seconds = float(text) if _SECONDS.fullmatch(text) else math.nan
    if not math.isfinite(seconds):
        raise SgfError(f"node {index}: {ident} must be a number of seconds, got {text!r}")
    return seconds


def _node_moves(props: dict[str, list[str]], index: int) -> list[SgfMove]:
    """Moves of one node after the root: one per B or W value, clock and comment on the last."""
    if "B" in props and "W" in props:
        raise SgfError(f"node {index}: both B and W")
    colour = "B" if "B" in props else "W" if "W" in props else None
    if colour is None:
        return []
    moves = [SgfMove(colour, value) for value in props[colour]]
    moves[-1].time_left = _seconds(props, colour + "L", index)
    moves[-1].comment = _single(props, "C", index)
    return moves


def _read_territory(record: GameRecord, props: dict[str, list[str]], index: int) -> None:
    for ident, name in (("TB", "black_territory"), ("TW", "white_territory")):
        text = _single(props, ident, index)
        if text is None:
            continue
        if getattr(record, name) is not None:
            raise SgfError(f"node {index}: {ident} given a second time")
        if text and not text.startswith("."):
            raise SgfError(f"node {index}: {ident} must be empty or .ring.ring..., got {text[:20]!r}")
        setattr(record, name, text.split(".")[1:])


def write_record(record: GameRecord) -> str:
    """Write a record as one GM[40] game tree: root, one node per move, then a TB/TW node.

    The root holds FF, GM, CA, AP, SZ, RU and then the `ROOT_ORDER` properties, each only when set.
    Values get only the SGF escapes (`\\`, `]`): wire-protocol escaping belongs to the caller.
    """
    _check_record(record)
    root: dict[str, list[str]] = {"FF": ["4"], "GM": ["40"], "CA": ["UTF-8"]}
    if record.application is not None:
        root["AP"] = [record.application]
    square = record.width == record.height
    root["SZ"] = [str(record.width) if square else f"{record.width}:{record.height}"]
    if record.rules:
        root["RU"] = [",".join(f"{key}={value}" for key, value in record.rules.items())]
    elif record.rule_set is not None:
        root["RU"] = [record.rule_set]
    values: dict[str, list[str]] = {
        "AB": record.black_setup,
        "AW": record.white_setup,
        "HA": [] if record.handicap is None else [str(record.handicap)],
        "BL": [] if record.black_time_left is None else [_format_seconds(record.black_time_left)],
        "WL": [] if record.white_time_left is None else [_format_seconds(record.white_time_left)],
    }
    for ident in ROOT_ORDER:
        if ident in values:
            if values[ident]:
                root[ident] = list(values[ident])
        elif (text := getattr(record, _TEXT_FIELDS[ident])) is not None:
            root[ident] = [text]
    nodes = [Node(root)]
    for move in record.moves:
        props = {move.colour: [move.value]}
        if move.time_left is not None:
            props[move.colour + "L"] = [_format_seconds(move.time_left)]
        if move.comment is not None:
            props["C"] = [move.comment]
        nodes.append(Node(props))
    territory = {
        ident: ["".join("." + ring for ring in rings)]
        for ident, rings in (("TB", record.black_territory), ("TW", record.white_territory))
        if rings is not None
    }
    if territory:
        nodes.append(Node(territory))
    return serialize_collection([GameTree(nodes)])


def _check_record(record: GameRecord) -> None:
    """Refuse fields that the text could not carry, so that every written record reads back equal."""
    _check_size(record.width, record.height)
    for key, value in record.rules.items():
        if not key or "," in key or "=" in key or "," in value:
            raise SgfError(f"RU item {key!r}={value!r} cannot be written as key=value")
    if record.rule_set is not None and (record.rules or not record.rule_set or "=" in record.rule_set):
        raise SgfError(f"RU rule set {record.rule_set!r} must be non-empty, without '=' and without flags")
    for ident, points in (("AB", record.black_setup), ("AW", record.white_setup)):
        for point in points:
            _check_point(point, record.width, record.height, ident)
    if record.handicap is not None and (
        isinstance(record.handicap, bool) or not 0 <= record.handicap <= 9999
    ):
        raise SgfError(f"HA must be an integer 0..9999, got {record.handicap!r}")
    times = [record.black_time_left, record.white_time_left]
    for move in record.moves:
        if move.colour not in ("B", "W"):
            raise SgfError(f"move colour must be B or W, got {move.colour!r}")
        times.append(move.time_left)
    if any(time is not None and not math.isfinite(time) for time in times):
        raise SgfError("time left must be a finite number of seconds")
    for ident, rings in (("TB", record.black_territory), ("TW", record.white_territory)):
        if any("." in ring for ring in rings or ()):
            raise SgfError(f"{ident} ring contains '.'")


def _format_seconds(seconds: float) -> str:
    """Shortest text that reads back as the same float: 67.0 -> "67", 66.4 -> "66.4"."""
    text = repr(float(seconds))
    return text.removesuffix(".0")
