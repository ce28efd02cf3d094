"""zagram game type strings, old and new format, as one value type.

Invitations, ``setUpTable`` and the ``d`` lines describe a game by a ``gameType`` string. Clients send
either of zagram's two formats, so both parse into one :class:`GameType`; the server writes the new
format, the only one MultiPoints reads back. docs/gametype.md lists the grammar and every choice made
where zagram's own description is silent.
"""

from __future__ import annotations

import string
import unicodedata
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TypeVar

MIN_SIZE = 4
MAX_SIZE = 52
MAX_INSTANT_WIN = 99
MAX_START_TIME = 86_400
MAX_ADDED_TIME = 3_600
MAX_SGF_NUMBER = 999_999_999
MAX_HANDICAP = 9
CROSS_COUNTS = (1, 2, 4)
MIN_FOUR_CROSS_SIZE = 10
MIN_HANDICAP_SIZE = 5
MAX_TOURNAMENT_LENGTH = 100
# The bidirectional embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069; the codec takes
# them out of chat, clean_text): in a name shown in the lobby they would show it, and what follows it,
# reordered.
BIDI_CONTROLS = frozenset(("LRE", "RLE", "LRO", "RLO", "PDF", "LRI", "RLI", "FSI", "PDI"))
MAX_NICK_LENGTH = 20
MAX_LENGTH = 300

BLACK_RIGHTS = "SRAUTP"
WHITE_RIGHTS = "srautp"
ANALYSER_RIGHTS = "SUsue"
TABLE_RIGHTS = string.ascii_lowercase


class GameTypeError(ValueError):
    """A game type zagram would not accept; the message names the bad part."""


class Rules(StrEnum):
    STANDARD = "s"
    TERRITORY = "t"
    NO_TERRITORY = "n"


class GameKind(StrEnum):
    RANKED = "R"
    FREE = "F"
    AI = "A"
    ANALYSIS = "a"


class WhoStarts(StrEnum):
    INVITER = "a"
    INVITED = "p"
    SERVER = "s"
    UNSPECIFIED = ""


class TimeMethod(StrEnum):
    ADDED = "a"
    NONE = "n"


class Right(StrEnum):
    """A player's right, as the blue (B) letter; red's letter is the same in lower case."""

    PLACE = "S"
    RESIGN = "R"
    PROPOSE = "A"
    UNDO = "U"
    ADD_TIME = "T"
    PAUSE = "P"


class StartKind(StrEnum):
    EMPTY = "empty"
    CROSSES = "crosses"
    SGF = "sgf"
    HANDICAP = "handicap"


_E = TypeVar("_E", bound=StrEnum)


def _parse_enum(enum: type[_E], token: str, what: str) -> _E:
    try:
        return enum(token)
    except ValueError:
        raise GameTypeError(f"unknown {what} {_show(str(token))}") from None


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _show(text: str) -> str:
    """Quote a piece of untrusted input for an error message, cut short so messages stay short."""
    return repr(text if len(text) <= 20 else text[:20] + "...")


_START_NUMBERS: dict[StartKind, tuple[range | tuple[int, ...], str]] = {
    StartKind.EMPTY: ((0,), "an empty start takes no number"),
    StartKind.CROSSES: (CROSS_COUNTS, "crosses must be 1, 2 or 4"),
    StartKind.SGF: (range(1, MAX_SGF_NUMBER + 1), f"SGF archive number must be 1..{MAX_SGF_NUMBER}"),
    StartKind.HANDICAP: (range(2, MAX_HANDICAP + 1), f"handicap must be 2..{MAX_HANDICAP}"),
}
_START_PREFIX = {StartKind.EMPTY: "", StartKind.CROSSES: "", StartKind.SGF: "SGFz", StartKind.HANDICAP: "H"}


@dataclass(frozen=True)
class Start:
    """The starting position; ``number`` is the cross count, SGF archive number or handicap (0 if empty)."""

    kind: StartKind = StartKind.EMPTY
    number: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", _parse_enum(StartKind, self.kind, "start kind"))
        allowed, message = _START_NUMBERS[self.kind]
        if not _is_int(self.number) or self.number not in allowed:
            raise GameTypeError(message)

    @classmethod
    def empty(cls) -> Start:
        return cls()

    @classmethod
    def crosses(cls, count: int) -> Start:
        return cls(StartKind.CROSSES, count)

    @classmethod
    def sgf(cls, number: int) -> Start:
        return cls(StartKind.SGF, number)

    @classmethod
    def handicap(cls, stones: int) -> Start:
        return cls(StartKind.HANDICAP, stones)

    @property
    def code(self) -> str:
        """The new format's starting-position field: '', '1', '2', '4', 'SGFz<n>' or 'H<n>'."""
        return "" if self.kind is StartKind.EMPTY else f"{_START_PREFIX[self.kind]}{self.number}"


def _parse_start(token: str) -> Start:
    # "0" is MultiPoints' spelling of the empty board (ServerZagram.getGameTypeString).
    if token in ("", "0"):
        return Start.empty()
    if token in ("1", "2", "4"):  # '2' is roboCup's default (docs/gametype.md)
        return Start.crosses(int(token))
    if token.startswith("SGFz") and _is_digits(token[4:]):
        return Start.sgf(int(token[4:]))
    if len(token) == 2 and token[0] == "H" and token[1] in "23456789":
        return Start.handicap(int(token[1]))
    raise GameTypeError(
        f"unknown starting position {_show(token)} (expected '', '1', '2', '4', 'SGFz<n>' or 'H2'..'H9')"
    )


def _letters(value: str, alphabet: str, what: str) -> str:
    """Check rights letters; return them in the alphabet's order so equal sets compare equal."""
    for i, letter in enumerate(value):
        if letter not in alphabet:
            allowed = alphabet if len(alphabet) < 10 else f"{alphabet[0]}-{alphabet[-1]}"
            raise GameTypeError(f"unknown {what} {_show(letter)} (allowed: {allowed})")
        if letter in value[:i]:
            raise GameTypeError(f"repeated {what} {_show(letter)}")
    return "".join(letter for letter in alphabet if letter in value)


def _valid_nick(nick: str) -> bool:
    """Structural check only; the full nick grammar belongs to accounts."""
    return 1 <= len(nick) <= MAX_NICK_LENGTH and all(c.isalnum() or c in "_ *" for c in nick)


@dataclass(frozen=True)
class Rights:
    """The opt field: table rights, rights of B (blue, player 1) and W (red, player 2), optional analyser.

    Player letters are kept in canonical order (``SRAUTP``), table letters in the order given because their
    meaning is unknown. An analyser is present exactly when ``analyser_nick`` is non-empty.
    """

    table: str = ""
    black: str = BLACK_RIGHTS
    white: str = WHITE_RIGHTS
    analyser: str = ""
    analyser_nick: str = ""

    def __post_init__(self) -> None:
        _letters(self.table, TABLE_RIGHTS, "table right")
        object.__setattr__(self, "black", _letters(self.black, BLACK_RIGHTS, "right for B"))
        object.__setattr__(self, "white", _letters(self.white, WHITE_RIGHTS, "right for W"))
        object.__setattr__(self, "analyser", _letters(self.analyser, ANALYSER_RIGHTS, "analyser right"))
        if (self.analyser or self.analyser_nick) and not _valid_nick(self.analyser_nick):
            raise GameTypeError(
                f"analyser nick must be 1..{MAX_NICK_LENGTH} letters, digits, '_', ' ' or '*'"
            )

    @property
    def has_analyser(self) -> bool:
        return bool(self.analyser_nick)

    @property
    def is_default(self) -> bool:
        return self == DEFAULT_RIGHTS

    def may(self, player: int, right: str) -> bool:
        """Whether player 1 (blue, B) or 2 (red, W) holds ``right`` (a :class:`Right`; either case)."""
        letter = Right(right.upper())
        if player == 1:
            return letter in self.black
        if player == 2:
            return letter.lower() in self.white
        raise ValueError(f"player must be 1 or 2, not {player!r}")

    def analyser_may(self, letter: str) -> bool:
        """Whether the analyser holds ``letter`` (one of ``SUsue``; case matters: S/U act on blue)."""
        if len(letter) != 1 or letter not in ANALYSER_RIGHTS:
            raise ValueError(f"analyser rights are letters of {ANALYSER_RIGHTS}, not {letter!r}")
        return letter in self.analyser

    def analyser_places(self, player: int) -> bool:
        """Whether the analyser may place dots of player 1 (blue, `S`) or 2 (red, `s`)."""
        return self.analyser_may("S" if player == 1 else "s")

    def __str__(self) -> str:
        return format_rights(self)


DEFAULT_RIGHTS = Rights()


def parse_rights(opt: str) -> Rights:
    """Parse the opt field; '' and a bare table-rights string (e.g. 'ua') keep the default player rights."""
    if "_" not in opt:
        return Rights(table=opt)
    parts = opt.split("_", 3)
    if len(parts) == 2:
        raise GameTypeError("rights must be table_B_W or table_B_W_<analyser>n<nick>")
    table, black, white = parts[:3]
    if len(parts) == 3:
        return Rights(table, black, white)
    letters, separator, nick = parts[3].partition("n")
    if not separator or not nick:
        raise GameTypeError("analyser rights must be followed by 'n' and the analyser's nick")
    return Rights(table, black, white, letters, nick)


def format_rights(rights: Rights) -> str:
    """The shortest opt string for ``rights``: '' for the default, bare table rights when players default."""
    if rights.has_analyser:
        return f"{rights.table}_{rights.black}_{rights.white}_{rights.analyser}n{rights.analyser_nick}"
    if rights.black == BLACK_RIGHTS and rights.white == WHITE_RIGHTS:
        return rights.table
    return f"{rights.table}_{rights.black}_{rights.white}"


_RULES_NAME = {Rules.STANDARD: "stan", Rules.TERRITORY: "terr", Rules.NO_TERRITORY: "noT"}


@dataclass(frozen=True, kw_only=True)
class GameType:
    """One game's settings. Times are seconds; an untimed game has ``start_time == added_time == 0``."""

    width: int
    height: int
    rules: Rules
    start: Start = field(default_factory=Start)
    instant_win: int = 0
    who_starts: WhoStarts = WhoStarts.SERVER
    kind: GameKind = GameKind.FREE
    timed: bool = False
    start_time: int = 0
    added_time: int = 0
    rights: Rights = field(default_factory=Rights)
    tournament: str = ""

    def __post_init__(self) -> None:
        # Plain strings ("s", "R", ...) are stored as the enums, so equal values compare and print alike.
        object.__setattr__(self, "rules", _parse_enum(Rules, self.rules, "rules"))
        object.__setattr__(self, "kind", _parse_enum(GameKind, self.kind, "game type"))
        object.__setattr__(self, "who_starts", _parse_enum(WhoStarts, self.who_starts, "who-starts"))
        _check_int(self.width, MIN_SIZE, MAX_SIZE, "board width")
        _check_int(self.height, MIN_SIZE, MAX_SIZE, "board height")
        _check_int(self.instant_win, 0, MAX_INSTANT_WIN, "instant win")
        if self.timed:
            _check_int(self.start_time, 1, MAX_START_TIME, "start time")
            _check_int(self.added_time, 0, MAX_ADDED_TIME, "added time")
        elif self.start_time != 0 or self.added_time != 0:
            raise GameTypeError("an untimed game must have start time and added time 0")
        smaller = min(self.width, self.height)
        if self.start == Start.crosses(4) and smaller < MIN_FOUR_CROSS_SIZE:
            raise GameTypeError(
                f"4 crosses need a board of at least {MIN_FOUR_CROSS_SIZE}x{MIN_FOUR_CROSS_SIZE}"
            )
        if self.start.kind is StartKind.HANDICAP and smaller < MIN_HANDICAP_SIZE:
            raise GameTypeError(
                f"a handicap needs a board of at least {MIN_HANDICAP_SIZE}x{MIN_HANDICAP_SIZE}"
            )
        if self.start.kind is StartKind.SGF and self.who_starts not in (WhoStarts.INVITER, WhoStarts.INVITED):
            raise GameTypeError("an SGF starting position needs who-starts 'a' or 'p'")
        if self.rights.has_analyser and self.kind is not GameKind.ANALYSIS:
            raise GameTypeError("analyser rights are only allowed in analysis games (type 'a')")
        if len(self.tournament) > MAX_TOURNAMENT_LENGTH:
            raise GameTypeError(f"tournament name must be at most {MAX_TOURNAMENT_LENGTH} characters")
        if any(c == "/" or _control(c) for c in self.tournament):
            raise GameTypeError("tournament name must not contain '/' or control characters")

    @property
    def variant(self) -> str:
        """zagram's name ('stan', 'terr', 'noT1', 'noT4') or rules name + '+' + start code, e.g. 'stan+4'."""
        name = _RULES_NAME[self.rules]
        if self.rules is Rules.NO_TERRITORY and self.start.kind is StartKind.CROSSES:
            return f"{name}{self.start.number}"
        return f"{name}+{self.start.code}" if self.start.code else name

    @property
    def ranked(self) -> bool:
        return self.kind is GameKind.RANKED

    @property
    def automatic_enclosures(self) -> bool:
        return self.rules is not Rules.TERRITORY

    @property
    def stop_allowed(self) -> bool:
        return self.rules is Rules.NO_TERRITORY

    def __str__(self) -> str:
        return format_new(self)


def _check_int(value: int, low: int, high: int, what: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise GameTypeError(f"{what} must be {low}..{high}")


def _is_digits(text: str) -> bool:
    """ASCII digits only: str.isdigit() also accepts '²' and other digits int() rejects."""
    return text.isascii() and text.isdigit()


def _parse_int(token: str, low: int, high: int, what: str) -> int:
    # The length bound keeps int() cheap; anything that long is out of range anyway.
    if not _is_digits(token) or len(token) > 9 or not low <= int(token) <= high:
        raise GameTypeError(f"{what} must be an integer {low}..{high}, got {_show(token)}")
    return int(token)


def _parse_instant_win(token: str) -> int:
    return _parse_int(token, 0, MAX_INSTANT_WIN, "instant win") if token else 0


def _parse_size(token: str) -> tuple[int, int]:
    if len(token) != 4 or not _is_digits(token):
        raise GameTypeError(f"board size must be 4 digits XXYY, got {_show(token)}")
    return int(token[:2]), int(token[2:])


_OLD_RULES = {
    "stan": (Rules.STANDARD, Start.empty()),
    "terr": (Rules.TERRITORY, Start.empty()),
    "noT1": (Rules.NO_TERRITORY, Start.crosses(1)),
    "noT4": (Rules.NO_TERRITORY, Start.crosses(4)),
}
_OLD_RULES_NAME = {value: name for name, value in _OLD_RULES.items()}
_OLD_KINDS = {
    "R": (GameKind.RANKED, WhoStarts.SERVER),
    "F": (GameKind.FREE, WhoStarts.SERVER),
    "A": (GameKind.AI, WhoStarts.SERVER),
    "r": (GameKind.RANKED, WhoStarts.INVITER),
}
_OLD_KIND_LETTER = {value: letter for letter, value in _OLD_KINDS.items()}


def parse_game_type(text: str) -> GameType:
    """Parse either format; old when the 6th character is 't', 'e' or 'o' (MultiPoints' rule)."""
    if not text:
        raise GameTypeError("gameType is empty")
    if len(text) > MAX_LENGTH:
        raise GameTypeError(f"gameType must be at most {MAX_LENGTH} characters")
    if len(text) >= 6 and text[5] in "teo":
        return _parse_old(text)
    return _parse_new(text)


def _parse_old(text: str) -> GameType:
    """``XXYY<stan|terr|noT1|noT4><A|F|R|r><instantWin>.<startSec>.<addSec>[_<tournament>]``."""
    width, height = _parse_size(text[:4])
    if text[4:8] not in _OLD_RULES:
        raise GameTypeError(f"unknown rules {_show(text[4:8])}")
    rules, start = _OLD_RULES[text[4:8]]
    if text[8:9] not in _OLD_KINDS:
        raise GameTypeError(f"unknown game type {_show(text[8:9])}")
    kind, who_starts = _OLD_KINDS[text[8:9]]
    numbers, _, tournament = text[9:].partition("_")
    fields = numbers.split(".")
    if len(fields) != 3:
        raise GameTypeError("old gameType must end with <instantWin>.<startTime>.<addedTime>")
    start_time = _parse_int(fields[1], 0, MAX_START_TIME, "start time")
    added_time = _parse_int(fields[2], 0, MAX_ADDED_TIME, "added time")
    return GameType(
        width=width,
        height=height,
        rules=rules,
        start=start,
        instant_win=_parse_instant_win(fields[0]),
        who_starts=who_starts,
        kind=kind,
        timed=start_time > 0,
        start_time=start_time,
        # zagram: with no time limit the added time "is ignored (but set to 0)".
        added_time=added_time if start_time > 0 else 0,
        tournament=tournament,
    )


def _parse_new(text: str) -> GameType:
    """``XXYYrI.(start).(who).(type).(time).t0.t1.opt.tourn``; the tournament name may contain dots."""
    fields = text.split(".", 8)
    if len(fields) != 9:
        raise GameTypeError(f"gameType must have 9 dot-separated fields, got {len(fields)}")
    head, start, who, kind, method, t0, t1, opt, tournament = fields
    width, height = _parse_size(head[:4])
    timed = _parse_enum(TimeMethod, method, "time method") is TimeMethod.ADDED
    if timed:
        start_time = _parse_int(t0, 1, MAX_START_TIME, "start time")
        added_time = _parse_int(t1, 0, MAX_ADDED_TIME, "added time")
    elif t0 or t1:
        raise GameTypeError("time method 'n' needs empty start and added time")
    else:
        start_time = added_time = 0
    return GameType(
        width=width,
        height=height,
        rules=_parse_enum(Rules, head[4:5], "rules"),
        start=_parse_start(start),
        instant_win=_parse_instant_win(head[5:]),
        who_starts=_parse_enum(WhoStarts, who, "who-starts"),
        kind=_parse_enum(GameKind, kind, "game type"),
        timed=timed,
        start_time=start_time,
        added_time=added_time,
        rights=parse_rights(opt),
        tournament=tournament,
    )


def format_new(game_type: GameType) -> str:
    """The 9-field format; instant win is always written as digits because MultiPoints parses it."""
    g = game_type
    times = f"{TimeMethod.ADDED}.{g.start_time}.{g.added_time}" if g.timed else f"{TimeMethod.NONE}.."
    return (
        f"{g.width:02d}{g.height:02d}{g.rules}{g.instant_win}.{g.start.code}.{g.who_starts}.{g.kind}."
        f"{times}.{format_rights(g.rights)}.{g.tournament}"
    )


def format_old(game_type: GameType) -> str:
    """The pre-2012 format, for values it can express; otherwise GameTypeError says what it cannot."""
    g = game_type
    rules_name = _OLD_RULES_NAME.get((g.rules, g.start))
    if rules_name is None:
        raise GameTypeError(f"variant {g.variant!r} has no old-format name")
    letter = _OLD_KIND_LETTER.get((g.kind, g.who_starts))
    if letter is None:
        raise GameTypeError(
            f"old format cannot express game type {g.kind.value!r} with who-starts {g.who_starts.value!r}"
        )
    if not g.rights.is_default:
        raise GameTypeError("old format cannot carry rights")
    tournament = f"_{g.tournament}" if g.tournament else ""
    return (
        f"{g.width:02d}{g.height:02d}{rules_name}{letter}{g.instant_win}"
        f".{g.start_time}.{g.added_time}{tournament}"
    )


def _control(character: str) -> bool:
    """A control or surrogate character, or one of BIDI_CONTROLS."""
    category, direction = unicodedata.category(character), unicodedata.bidirectional(character)
    return category in ("Cc", "Cs") or direction in BIDI_CONTROLS
