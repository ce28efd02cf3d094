"""roboCup's zagram reader and writer, ported from vn971/roboCup so tests read results as it does.

Source: src/main/scala/ru/ya/vn91/robotour/zagram/FromZagram.scala (the anonymous reader),
ToZagram.scala (lobby chat through loguj + dodajWpis + usunGracza, and setUpTable) and
Constants.scala (`zagramGameSettings`, the game type it sends). The transport is the caller's.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class GameInfo:
    first: str
    second: str
    is_tournament: bool


def game_settings(
    x: int = 25,
    y: int = 25,
    *,
    crosses: int = 2,
    territory: bool = False,
    rated: bool = True,
    infinite_time: bool = False,
    starting_seconds: int = 300,
    seconds_per_turn: int = 5,
) -> str:
    """Constants.zagramGameSettings; the defaults are roboCup's default.props (crossesCount=2, 25x25,
    5 minutes and 5 seconds a move, no territory)."""
    crosses_text = "" if crosses == 0 else str(crosses)
    start = "" if infinite_time else str(starting_seconds)
    turn = "" if infinite_time else str(seconds_per_turn)
    return (
        f"{x}{y}{'t' if territory else 'n'}0.{crosses_text}.a.{'R' if rated else 'F'}."
        f"{'n' if infinite_time else 'a'}.{start}.{turn}._SRAP_srap."
    )


def set_up_table_query(
    key: str, first: str, second: str, game_type: str, tournament: str, round_: int
) -> dict:
    """ToZagram.assignGame."""
    return {
        "co": "setUpTable",
        "key": key,
        "gameType": game_type,
        "pl1": first,
        "pl2": second,
        "sayHiTimes": "30.30",
        "tourn": tournament,
        "tRound": str(round_),
    }


@dataclass
class RoboCupReader:
    """FromZagram: polls `getMsg&idGracza=<7 digits>&msgNo=<messageCount>&wiad=x` every 7 seconds."""

    id_gracza: str = "1234567"
    message_count: int = 0
    game_set: dict[str, GameInfo] = field(default_factory=dict)
    players: dict[str, tuple[int, int, int, int]] = field(default_factory=dict)
    results: list[tuple[str, str, str]] = field(
        default_factory=list
    )  # ("won", winner, loser) / ("draw", a, b)
    registrations: list[str] = field(default_factory=list)  # `!register` lines read
    warnings: list[str] = field(default_factory=list)  # logger.warn(s"error processing line: $line", e)

    def query(self) -> dict[str, str]:
        return {"idGracza": self.id_gracza, "co": "getMsg", "msgNo": str(self.message_count), "wiad": "x"}

    def handle_response(self, response: str) -> None:
        """`if response.startsWith("sd") && response.endsWith("end"); line <- response.split('/')`."""
        if response.startswith("sd") and response.endswith("end"):
            for line in _java_split(response, "/"):
                self.handle_line(line)

    def handle_line(self, line: str) -> None:
        try:
            dot_split = _java_split(line[1:], ".")
            if line.startswith("m"):
                self.message_count = int(dot_split[1])
            elif line.startswith("ca"):
                self._handle_chat(line)
            elif line.startswith("x"):
                self._handle_game_state(dot_split)
            elif line.startswith("d"):
                self._handle_game_description(dot_split)
            elif line.startswith("i"):
                self._handle_user_info(dot_split)
        except (IndexError, KeyError, ValueError) as error:
            self.warnings.append(f"error processing line: {line}: {error!r}")

    def _handle_chat(self, line: str) -> None:
        inner = line.split(".", 3)  # line.split("\\.", 4)
        nick, message = inner[1], inner[3]
        if message.lower().startswith("!register"):  # getZagramDecoded(...).toLowerCase
            self.registrations.append(nick)

    def _handle_game_state(self, dot_split: list[str]) -> None:
        sgf_result = dot_split[2]
        info = self.game_set[dot_split[0]]  # gameSet(dotSplit(0)): NoSuchElementException if unknown
        if not info.is_tournament:
            return
        if sgf_result.startswith("B+"):
            self.results.append(("won", info.first, info.second))
        elif sgf_result.startswith("W+") or sgf_result == "Void":
            self.results.append(("won", info.second, info.first))
        elif sgf_result == "0":
            self.results.append(("draw", info.first, info.second))

    def _handle_game_description(self, dot_split: list[str]) -> None:
        table = str(int(dot_split[0]))
        first, second = dot_split[-2], dot_split[-1]
        self.game_set[table] = GameInfo(first, second, any("robocup" in part for part in dot_split))

    def _handle_user_info(self, dot_split: list[str]) -> None:
        player = dot_split[0]
        if player.startswith("*"):
            self.players[player] = (0, 0, 0, 0)
        else:
            self.players[player] = (
                int(dot_split[4]),
                int(dot_split[5]),
                int(dot_split[7]),
                int(dot_split[6]),
            )


def _java_split(text: str, separator: str) -> list[str]:
    """Scala's String.split (Java's, limit 0): trailing empty strings are dropped."""
    parts = text.split(separator)
    while parts and parts[-1] == "":
        parts.pop()
    return parts
