"""MultiPoints' zagram client, ported line by line from its newest source so tests parse as it does.

Source: vn971/multipoints, src/main/java/ru/narod/vn91/pointsop/server/ServerZagram.java (2017),
with zagram/MessageQueue.java and the parts of model/GuiController.java, gui/GameRoom.java and
gui/Paper.java that decide what its window shows. Each method names the Java it follows and keeps its
quirks (Java's String.split drops trailing empty strings; the empty property name in `sr` parsing;
`sd` ends the session for good). The GUI is a model: one board per game tab, built when the tab is
built (`subscribedGame`) and never reset otherwise, as MultiPoints' Paper is.

Only the protocol side is here; the transport is the caller's (`query()` gives the poll's parameters,
`handle_text()` reads the answer), so the same client runs in-process and against a real server.
"""

from __future__ import annotations

import re
import traceback
from dataclasses import dataclass, field
from urllib.parse import quote


def java_split(text: str, regex: str, limit: int = 0) -> list[str]:
    """Java's String.split: with limit 0, trailing empty strings are removed; but a text the regex
    does not match is the one element, so `"".split("]")` is `[""]`, which is what makes an empty
    SGF node a property with an empty name."""
    if re.search(regex, text) is None:
        return [text]
    parts = re.split(regex, text, maxsplit=limit - 1 if limit > 0 else 0)
    if limit == 0:
        while parts and parts[-1] == "":
            parts.pop()
    return parts


def java_matches(regex: str, text: str) -> bool:
    return re.fullmatch(regex, text, re.DOTALL) is not None


def decode(text: str) -> str:
    """ServerZagram.decode: the order of replacements matters."""
    for old, new in (
        ("@S", "/"),
        ("@A", "@"),
        ("&#60;", "<"),
        ("&#62;", ">"),
        ("&#39;", "'"),
        ("&#34;", '"'),
    ):
        text = text.replace(old, new)
    return text.replace("&#45;", "-")


def encode(text: str) -> str:
    """ServerZagram.encode: `@` -> `@A`, `/` -> `@S`, then URLEncoder (a space becomes `+`)."""
    return quote(text.replace("@", "@A").replace("/", "@S"), safe="*-._").replace("%20", "+")


def char_to_coordinate(char: str) -> int:
    """ServerZagram.charToCoordinate: `a` is 1, `A` is 27."""
    if "a" <= char <= "z":
        return ord(char) - ord("a") + 1
    if "A" <= char <= "Z":
        return ord(char) - ord("A") + 27
    raise ValueError(char)  # IllegalArgumentException


def string_to_coordinates(text: str) -> tuple[int, int] | None:
    """ServerZagram.stringToCoordinates: the first two characters, or null."""
    if len(text) < 2:
        return None
    try:
        return char_to_coordinate(text[0]), char_to_coordinate(text[1])
    except ValueError:
        return None


class JavaNullPointer(Exception):
    """What `stringToCoordinates(...).x` throws on a value without coordinates."""


@dataclass
class GameRoom:
    """gui/GameRoom + Paper: a tab with its own board, made once per `subscribedGame`."""

    room: str
    size: tuple[int, int]
    dots: dict[tuple[int, int], bool] = field(default_factory=dict)  # (x, y) -> is red
    moves: list[tuple[int, int, bool]] = field(default_factory=list)
    refused: list[tuple[int, int, bool]] = field(default_factory=list)  # Paper answered ERROR
    chat: list[tuple[str, str, str]] = field(default_factory=list)  # nick, text, nickType (not shown)
    notices: list[str] = field(default_factory=list)  # gui.raw lines about this room

    def make_move(self, x: int, y: int, is_red: bool) -> None:
        """Paper.makeMove through the engine: an occupied or off-board point is an ERROR, ignored."""
        width, height = self.size
        if not (1 <= x <= width and 1 <= y <= height) or (x, y) in self.dots:
            if x != -1:  # makedMove(-1, -1) ends every sa/sr line: always an ERROR, on purpose
                self.refused.append((x, y, is_red))
            return
        self.dots[(x, y)] = is_red
        self.moves.append((x, y, is_red))


@dataclass
class Game:
    """GuiController.gamePool: what `d` lines said about a table."""

    first: str
    second: str
    size: tuple[int, int]
    rated: bool
    stop_enabled: bool


@dataclass
class UserInfo:
    """What handlePlayerInfo hands to gui.updateUserInfo (null where a field was not read)."""

    player: str | None = None
    avatar: str | None = None
    status: str | None = None  # "<lang> (free)" or "<lang> ()"
    rating: int | None = None
    wins: int | None = None
    draws: int | None = None
    losses: int | None = None


class MultiPoints:
    def __init__(self, nick: str, secret: str) -> None:
        self.my_name = nick
        self.secret = secret
        self.queue: list[str] = []  # MessageQueue(10): numbered from 1, the last 10 kept
        self.transient: list[str] = ["i0nJa"]  # ThreadMain.run: sendCommandToServerTransient("i0nJ" + ...)
        self.last_server_message_number = 0
        self.last_sent_command_number = 0
        self.disposed = False
        self.subscribed_rooms: list[str] = []
        self.player_rooms: dict[str, list[str]] = {}
        self.invites_incoming: list[str] = []
        # gui.updateGameInfo(..., GameState.SearchingOpponent, ...) for each invitation shown: the game
        # list's row `<inviter>@incoming`, with the game its `vg` line offers
        self.invitation_rows: dict[str, dict] = {}
        self.is_busy = False
        self.invites_outgoing: list[str] = []
        self.games: dict[str, Game] = {}
        self.tabs: dict[str, GameRoom] = {}  # GuiController.gameRooms: the open game tabs
        self.closed_tabs: list[GameRoom] = []
        self.lobby: list[str] = []  # the main room's user list
        self.lobby_chat: list[tuple[str, str]] = []
        self.private: list[tuple[str, str, str]] = []  # (with whom, from, text)
        self.users: dict[str, list[str]] = {}
        self.user_info: dict[str, UserInfo] = {}  # gui.updateUserInfo, as handlePlayerInfo calls it
        self.failures: list[str] = []  # "failed to parse the message ..." with the Java exception
        self.raw: list[str] = []  # gui.raw / gui.rawError
        self.times: dict[str, tuple[int, int]] = {}

    # --- commands (ServerZagram's public methods) ----------------------------------------------

    def _send(self, message: str) -> None:
        self.queue.append(message)

    def _number(self) -> int:
        return len(self.queue) + 1  # queue.sizePlusOne()

    def make_move(self, room: str, x: int, y: int) -> None:
        self._send(f"s{self._number()}.{room}.{_sgf(x)}{_sgf(y)}")

    def invite(self, nick: str, game_type: str) -> None:
        """addPersonalGameInvite, with the game type getGameTypeString builds (or any other)."""
        self._send(f"v{self._number()}.0.s.{encode(nick)}.{game_type}")

    def accept_invite(self) -> None:
        self._send(f"v{self._number()}.0.a")

    def send_chat(self, room: str, text: str) -> None:
        self._send(f"c{self._number()}.{room}.{encode(text)}")

    def send_private(self, target: str, text: str) -> None:
        self._send(f"c{self._number()}._{encode(target)}.{encode(text)}")

    def subscribe(self, room: str) -> None:
        self._send(f"b{self._number()}.{room}.")

    def unsubscribe(self, room: str) -> None:
        self._send(f"q{self._number()}.{room}.")

    def propose(self, room: str, what: str) -> None:
        """surrender (`resign`), askNewGame/acceptNewGame (`new`), askDraw (`draw`), acceptDraw
        (`accept2draw`), askUndo, ...: every `u` command MultiPoints sends."""
        self._send(f"u{self._number()}.{room}.{what}")

    def reject_invite(self, sender: str) -> None:
        """rejectPersonalGameInvite: sent only for an invitation it shows."""
        if sender in self.invites_incoming:
            self._send(f"v{self._number()}.0.r")

    def set_status(self, busy: bool) -> None:
        self.is_busy = busy
        self.transient.append("i0nJ" + ("b" if busy else "a"))

    # --- the poll (ThreadMain.run) -------------------------------------------------------------

    def query(self) -> dict[str, str]:
        commands = "".join(message + "/" for message in self.transient)
        self.transient = []
        # the queue keeps its last 10: MessageQueue.get answers null for older ones
        for i in range(max(self.last_sent_command_number + 1, len(self.queue) - 9), len(self.queue) + 1):
            commands += self.queue[i - 1] + "/"
        self.last_sent_command_number = len(self.queue)
        commands = commands[:-1] if commands else "x"
        number = str(self.last_server_message_number)
        return {
            "playerId": self.secret,
            "co": "getBMsg",
            "msgNo": f"{number}.{number}",
            "msgFromClient": commands,
        }

    def url(self) -> str:
        """The poll as MultiPoints writes it: nothing but the chat text is URL-encoded."""
        return "/a.kropki?" + "&".join(f"{key}={value}" for key, value in self.query().items())

    # --- the answer (ThreadMain.handleText) ----------------------------------------------------

    def handle_text(self, text: str) -> None:
        if text.startswith("ok") and text.endswith("end"):
            self._incoming_new: list[str] = []
            self._outgoing_new: list[str] = []
            self._modified_rooms: list[str] = []
            self.current_room = ""
            for message in text.split("/"):  # split("/", -1)
                try:
                    self._handle_message(message)
                except Exception:  # System.out.println(... "failed to parse the message " + message ...)
                    self.failures.append(f"{message}: {traceback.format_exc(limit=1)}")
            for player in self.invites_incoming:
                if player not in self._incoming_new:  # invitation cancelled
                    self.invitation_rows.pop(player + "@incoming", None)  # gui.personalInviteCancelled
                    self.transient.append("i0nJa")
            self.invites_incoming = self._incoming_new
            self.invites_outgoing = self._outgoing_new
            for room in self.subscribed_rooms:
                if room not in self._modified_rooms:
                    self._unsubscribed_room(room)
            self.subscribed_rooms = self._modified_rooms
        elif text == "":
            pass  # "we got an empty result. Well, lets treat this as normal."
        else:
            self.raw.append("error handling server response, exiting. Technical details: message: " + text)
            self.disposed = True  # gui.serverClosed; the thread stops polling for good

    def _unsubscribed_room(self, room: str) -> None:
        """GuiController.unsubscribedRoom: the tab is closed, its board with it."""
        tab = self.tabs.pop(room, None)
        if tab is not None:
            self.closed_tabs.append(tab)

    def _subscribed_game(self, room: str) -> None:
        """GuiController.subscribedGame: a new tab and a new Paper (initPaper), unless one is open."""
        if room in self.tabs:
            return
        game = self.games.get(room)
        if game is None:  # gamePool.get makes an empty entry: initPaper unboxes its null sizeX
            raise JavaNullPointer(f"no d line for table {room} before q{room}")
        self.tabs[room] = GameRoom(room, game.size)

    def _handle_message(self, message: str) -> None:  # noqa: C901 (one branch per line kind, as in Java)
        if message.startswith("b"):
            player = re.sub(r"\..*", "", message, flags=re.DOTALL)[1:]
            rooms = java_split(re.sub(r"^.*?\.", "", message, count=1), r"\.")
            self.player_rooms[player] = rooms
        elif message.startswith("ca") or message.startswith("cr"):
            parts = java_split(message[2:], r"\.", 4)
            try:
                int(re.sub(r"[^0-9].*", "", parts[0]))
                nick, chat_message = parts[1], decode(parts[3])
                if "-" in nick:
                    nicks = java_split(nick, "-")
                    nick_type = parts[2]
                    if nick_type != "nochat":
                        who = int(nick_type)  # `-` and `del` raise here, caught below
                        if who == 0:
                            nick = ""
                        elif who in (1, 2):
                            nick = nicks[who - 1]
                        with_whom = nicks[1] if nicks[0] == self.my_name else nicks[0]
                        sender = self.my_name if nick.lower() == self.my_name.lower() else with_whom
                        self.private.append((with_whom, sender, chat_message))
                elif self.current_room == "0":
                    self.lobby_chat.append((nick, chat_message))
                elif self.current_room in self.tabs:
                    self.tabs[self.current_room].chat.append((nick, chat_message, parts[2]))
            except (ValueError, IndexError):  # NumberFormatException | ArrayIndexOutOfBoundsException
                self.raw.append("unknown chat: " + message[2:])
        elif message.startswith("d"):
            sufficient = re.sub(r"^[^.]*.", "", message, count=1)
            sufficient = re.sub(r"\.[^.]*$", "", sufficient, count=1)
            sufficient = re.sub(r"\.[^.]*$", "", sufficient, count=1)
            game_type = _zagram_game_type(sufficient)
            parts = java_split(message, r"\.")
            room = parts[0].replace("d", "", 1)
            self.games[room] = Game(
                parts[-2], parts[-1], game_type["size"], game_type["rated"], game_type["stop"]
            )
        elif message.startswith("f"):
            self._handle_game_flags(message.replace("f", "", 1))
        elif message.startswith(("ga", "gr", "gd", "h")):
            pass  # the game list: not needed by these tests
        elif message.startswith("i"):
            self.users[message[1:].split(".")[0]] = message[1:].split(".")
            self._handle_player_info(message)
        elif message.startswith("m"):
            parts = java_split(message[1:], r"\.")
            a = [parts[i] if len(parts) > i else "" for i in range(3)]
            i1, i2, i3 = int(a[0]), int(a[1]), int(a[2])  # NumberFormatException: counters not updated
            del i1
            self.last_server_message_number = i2
            self.last_sent_command_number = i3
        elif message.startswith("pa") or message.startswith("pr"):
            for player in java_split(message[2:], r"\."):
                if player and self.current_room == "0" and player not in self.lobby:
                    self.lobby.append(player)
        elif message.startswith("pd"):
            for player in java_split(message[2:], r"\."):
                if player and self.current_room == "0" and player in self.lobby:
                    self.lobby.remove(player)
        elif message.startswith("q"):
            room = message[1:]
            self.current_room = room
            self._modified_rooms.append(room)
            if room not in self.subscribed_rooms and room != "0":
                self._subscribed_game(room)
        elif java_matches(r"sa.*|sr.*", message):
            self._game_actions(message)
        elif java_matches(r"u.undo", message):
            pass  # shown as a chat notice: "Запрос на 'undo'..."
        elif message.startswith("vg"):
            sender = re.sub(r"\..*", "", message[2:], flags=re.DOTALL)
            if sender not in self.invites_incoming:
                game_type = _zagram_game_type(re.sub(r"^[^.]*\.", "", message[2:], count=1))
                if self.is_busy:
                    self._reject_at_once(sender)
                elif game_type["empty_scored"]:
                    self._reject_at_once(sender)
                    self.raw.append(
                        f"Игрок '{sender}' вызвал тебя на игру. ..."
                    )  # gui.privateMessageReceived
                    self.send_private(sender, 'Sorry, my game client does not support "territory" rules.')
                else:
                    self.invitation_rows[sender + "@incoming"] = {**game_type, "state": "SearchingOpponent"}
                    self._incoming_new.append(sender)
            else:
                self._incoming_new.append(sender)
        elif message.startswith("vr"):
            self._send(f"v{self._number()}.0.o")
        elif message.startswith("vs"):
            self._outgoing_new.append(java_split(message[2:], r"\.")[0])

    def _reject_at_once(self, sender: str) -> None:
        """personalInvitesIncoming.add(sender); rejectPersonalGameInvite(sender); ...remove(sender)
        ("kind of a hack"): a `v..r` for an invitation it does not show."""
        self.invites_incoming.append(sender)
        self.reject_invite(sender)
        self.invites_incoming.remove(sender)

    def _handle_player_info(self, message: str) -> None:
        """ThreadMain.handlePlayerInfo: fields read in order until the first exception (`catch
        (Exception ignore)`), then `gui.updateUserInfo` with what was read. The status is
        `dotSplitted[2].matches(".*(N|b).*") ? "" : "free"`."""
        info = UserInfo()
        try:
            split = java_split(message[1:], r"\.")
            info.player = split[0] or None
            info.avatar = split[1] or None
            status = "" if java_matches(".*(N|b).*", split[2]) else "free"
            info.status = f"{split[3] or None} ({status})"
            info.rating = int(split[4])
            info.wins = int(split[5])
            info.losses = int(split[7])
            info.draws = int(split[6])
        except (IndexError, ValueError):
            pass
        self.user_info[info.player or ""] = info

    def _handle_game_flags(self, message: str) -> None:
        """ThreadMain.handleGameFlags (called with the `f` already removed)."""
        underline = java_split(message, "_")
        limits = java_split(message, "_")[1] if len(underline) >= 2 else ""
        if limits:
            part1, part2 = java_split(limits, r"\.")[0], java_split(limits, r"\.")[1]
            self.times[self.current_room] = (int(part1.replace("p", "", 1)), int(part2.replace("p", "", 1)))

    def _game_actions(self, message: str) -> None:
        """The `sa`/`sr` branch of handleMessage, exactly."""
        message = re.sub(r"\(|\)", "", message)
        tab = self.tabs.get(self.current_room)  # GuiController.makedMove: nothing without a tab
        useful = re.sub(r"sa;|sr;", "", message, count=1)
        for node in java_split(useful, ";"):
            if not java_matches(r"([A-Z]{1,2}\[.*\])*", node):
                self.raw.append("unknown message structure: " + message)
                continue
            last_property = ""
            for prop in java_split(node, r"\]"):
                name = re.sub(r"\[.*", "", prop, flags=re.DOTALL)
                value = re.sub(r"^.*\[", "", prop, count=1, flags=re.DOTALL)
                if java_matches("U(B|W)", name):
                    self.raw.append("ERROR in game room 'UNDO is unsupported'.")
                    return  # FatalGameRoomError: the rest of the line is not read
                if java_matches("B|W|AB|AW|", name):
                    is_white = java_matches("W|AW", name) or (
                        name == "" and java_matches("A|AW", last_property)
                    )
                    if name:
                        last_property = name
                    point = string_to_coordinates(value)
                    if point is None:
                        raise JavaNullPointer(f"stringToCoordinates({value!r}).x")
                    if tab is not None:
                        tab.make_move(point[0], point[1], is_white)
        if tab is not None:
            tab.make_move(-1, -1, True)


def _sgf(i: int) -> str:
    """ServerZagram.get1SgfCoord."""
    return chr(ord("a") + i - 1) if i <= 26 else chr(ord("A") + i - 26 - 1)


def _zagram_game_type(text: str) -> dict:
    """ServerZagram.getZagramGameType: only the 9-field format parses."""
    split = text.split(".")  # split("\\.", -1)
    head = split[0]
    size = (int(head[0:2]), int(head[2:4]))
    rules = head[4:5]
    timed = split[4][0] == "a"
    if timed:
        int(split[5]), int(split[6])
    int("0" + head[5:])
    empty_scored = java_matches("t|s", rules)  # isEmptyScored = rulesAsString.matches("t|s")
    return {"size": size, "rated": split[3][0] == "R", "stop": rules == "n", "empty_scored": empty_scored}
