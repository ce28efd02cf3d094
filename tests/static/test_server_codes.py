"""The reader of the server's refusal codes (tests/static/server_codes.py) finds a code however it is
written, and says where it cannot read one."""

from __future__ import annotations

from pathlib import Path

from tests.static.server_codes import Reader


def codes_of(tmp_path: Path, **modules: str) -> Reader:
    root = tmp_path / "server"
    for name, source in modules.items():
        path = root / f"{name.replace('__', '/')}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source)
    return Reader(root)


def test_a_code_is_read_through_parameters_constants_and_answers(tmp_path: Path) -> None:
    reader = codes_of(
        tmp_path,
        hub__limits="""
from server.protocol.codec import ProtocolError
FLOOD = "tooManyThings"

def within(limit, code, what="things"):
    raise ProtocolError(code, f"At most {limit} {what}.")

class Limits:
    def chat(self, player):
        within(20, "chatFlood")

    def again(self, player):
        within(limit=3, code=FLOOD)

    def new(self, kind):
        raise ProtocolError(f"missing.{kind}")

    def either(self, swiss):
        raise ProtocolError("missing.rounds" if swiss else "badKind")
""",
        web__auth="""
INTERNAL = "nieOk."

def register(refused, flooded):
    if flooded:
        return INTERNAL + "tooManyRegistrations"
    if refused:
        return f"err.{refused.code}"  # passed on: found where it was raised
    return INTERNAL
""",
        hub__tables="""
def tell(player, uid, code, english=""):
    return for_player(player.lang, code, english)

def refuse(player):
    tell(player, 0, "notReached")
""",
    )
    codes = reader.codes()
    assert codes.unreadable == []
    assert set(codes.raised) == {"tooManyThings", "chatFlood", "missing", "badKind"}
    assert set(codes.answers) == {"tooManyRegistrations", ""}
    assert set(codes.told) == {"notReached"}
    assert codes.in_the_stream == {"tooManyThings", "chatFlood", "missing", "badKind", "notReached"}
    assert {str(place) for place in codes.raised["chatFlood"]} == {"server/hub/limits.py:6"}


def test_a_code_that_cannot_be_read_is_reported_with_its_place(tmp_path: Path) -> None:
    reader = codes_of(
        tmp_path,
        web__kropki="""
def refuse(kind):
    raise ProtocolError(kind + "Refused")

def answer(name):
    return f"err.{name}"

def nameless():
    raise ProtocolError()
""",
    )
    codes = reader.codes()
    assert codes.raised == {} and codes.answers == {}
    assert [line.split(":")[:2] for line in codes.unreadable] == [
        ["server/web/kropki.py", "3"],
        ["server/web/kropki.py", "6"],
        ["server/web/kropki.py", "9"],
    ]


def test_a_code_passed_round_a_loop_of_calls_is_read_where_it_is_readable(tmp_path: Path) -> None:
    """A node met again while it is read is a loop: it cannot be read there, and the reader ends."""
    reader = codes_of(
        tmp_path,
        hub__rounds="""
def ping(what, depth):
    if depth:
        return pong(what, depth - 1)
    raise ProtocolError(f"missing.{what}")

def pong(what, depth):
    if what == "all":
        raise ProtocolError(what)
    return ping(what, depth)

def ask():
    ping("rounds", 3)
    pong("kinds", 2)
""",
    )
    codes = reader.codes()
    assert set(codes.raised) == {"missing", "rounds", "kinds"}  # `what` in pong: its calls' and ping's
    assert {str(place) for place in codes.raised["missing"]} == {"server/hub/rounds.py:5"}
    assert [line.split(":")[:2] for line in codes.unreadable] == [["server/hub/rounds.py", "9"]]
