"""One line per event with key=value fields, whatever the values and traces hold."""

from __future__ import annotations

import io
import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest

from server.logs import Fields, OneLineFormatter, RepeatFilter, quoted

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(
    ("value", "written"),
    [
        ("*Ala", "*Ala"),
        (42, "42"),
        ("AI easy", '"AI easy"'),
        ("", '""'),
        ('say "hi"', '"say \\"hi\\""'),
        ("a=b", '"a=b"'),
        ("two\nlines", '"two\\nlines"'),
        ("Ёжик", "Ёжик"),
        ("tab\there", '"tab\\there"'),
        # line breaks beyond \n and \r (str.splitlines and many viewers break lines on them), the C1
        # controls (U+009B is a terminal's CSI, as ESC [ is) and the bidirectional overrides
        ("a\u2028fake", '"a\\u2028fake"'),
        ("a\u2029fake", '"a\\u2029fake"'),
        ("a\x85fake", '"a\\u0085fake"'),
        ("a\x9b31mred", '"a\\u009b31mred"'),
        ("\x1b[31mred", '"\\u001b[31mred"'),
        ("a\u202eb", '"a\\u202eb"'),
        ("tag\U000e0041", '"tag\\udb40\\udc41"'),
    ],
)
def test_a_value_is_bare_only_when_it_is_one_plain_word(value: object, written: str) -> None:
    assert quoted(value) == written


def test_fields_are_key_value_pairs_in_order() -> None:
    assert str(Fields(uid=3, blue="AI hard", red="*Ola")) == 'uid=3 blue="AI hard" red=*Ola'


def record(message: str, *args: object, exc_info: object = None) -> logging.LogRecord:
    return logging.LogRecord("server.hub.hub", logging.ERROR, __file__, 1, message, args, exc_info)


def test_a_record_is_one_line_with_level_logger_and_fields() -> None:
    line = OneLineFormatter().format(record("table opened %s", Fields(uid=7, blue="AI easy")))

    stamp, rest = line[:23], line[24:]
    assert stamp[4] == "-" and stamp[19] == ","
    assert rest == 'level=ERROR logger=server.hub.hub table opened uid=7 blue="AI easy"'


def test_a_trace_becomes_one_quoted_field() -> None:
    try:
        raise RuntimeError("broken\nin two")
    except RuntimeError:
        line = OneLineFormatter().format(record("sweep failed", exc_info=sys.exc_info()))

    assert "\n" not in line
    head, trace = line.split(" trace=", 1)
    assert head.endswith("logger=server.hub.hub sweep failed")
    text = json.loads(trace)
    assert text.startswith("Traceback (most recent call last):\n")
    assert text.endswith("RuntimeError: broken\nin two")


def test_line_breaks_in_a_plain_message_are_escaped() -> None:
    line = OneLineFormatter().format(record("first\r\nsecond"))

    assert line.endswith("logger=server.hub.hub first\\r\\nsecond")


def test_every_line_break_python_knows_in_a_plain_message_is_escaped() -> None:
    line = OneLineFormatter().format(record("a\u2028b\u2029c\x85d\x0be\x0cf\x1cg\x1dh\x1ei"))

    assert len(line.splitlines()) == 1
    assert line.endswith("logger=server.hub.hub a\\u2028b\\u2029c\\x85d\\x0be\\x0cf\\x1cg\\x1dh\\x1ei")


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def throttled() -> tuple[logging.Logger, io.StringIO, Clock]:
    """A logger of its own writing one-line records through a RepeatFilter on a clock the test moves."""
    out, clock = io.StringIO(), Clock()
    handler = logging.StreamHandler(out)
    handler.setFormatter(OneLineFormatter())
    handler.addFilter(RepeatFilter(handler, interval=10.0, clock=clock))
    logger = logging.getLogger(f"tests.repeats.{id(out)}")
    logger.propagate = False
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    return logger, out, clock


def messages(out: io.StringIO) -> list[str]:
    return [line.split(" ", 4)[4] for line in out.getvalue().splitlines()]


def test_a_repeated_error_is_written_once_per_interval_with_the_count_left_out() -> None:
    logger, out, clock = throttled()

    for peer in range(4124):  # one template, other arguments: the same error
        logger.error("Error handling request from %s", f"10.0.0.{peer % 250}")
        clock.now += 0.002  # 8.2 s in all
    assert messages(out) == ["Error handling request from 10.0.0.0"]  # the first one, at once

    clock.now += 2.0
    logger.error("Error handling request from %s", "10.0.0.9")

    assert messages(out) == [
        "Error handling request from 10.0.0.0",
        "Error handling request from 10.0.0.9 (repeated 4123 times in the last 10 s)",
    ]


def test_kinds_are_told_apart_by_logger_level_and_template() -> None:
    logger, out, _ = throttled()
    other = logging.getLogger(logger.name + ".other")

    for _ in range(3):
        logger.error("database write failed %s", Fields(table="games"))
        logger.warning("database write failed %s", Fields(table="games"))
        logger.error("socket.accept() out of system resource\nsocket: <fd=7>")
        logger.error("socket.accept() out of system resource\nsocket: <fd=8>")  # the same first line
        other.error("database write failed %s", Fields(table="games"))

    assert messages(out) == [
        "database write failed table=games",
        "database write failed table=games",
        "socket.accept() out of system resource\\nsocket: <fd=7>",
        "database write failed table=games",
    ]
    assert [line.split()[2] for line in out.getvalue().splitlines()] == [
        "level=ERROR",
        "level=WARNING",
        "level=ERROR",
        "level=ERROR",
    ]


def test_the_count_of_repeats_that_stopped_comes_with_the_next_line_logged() -> None:
    logger, out, clock = throttled()
    try:
        raise OSError(24, "Too many open files")
    except OSError:
        for _ in range(50):
            logger.exception("accept failed")
    clock.now += 3
    logger.error("accept failed")
    clock.now += 10
    logger.info("table opened %s", Fields(uid=3))

    lines = out.getvalue().splitlines()
    assert len(lines) == 3
    assert "accept failed trace=" in lines[0] and "Too many open files" in lines[0]
    assert lines[1].endswith(
        "level=ERROR logger=" + logger.name + " accept failed (repeated 50 times in the last 13 s)"
    )
    assert lines[2].endswith("table opened uid=3")


def test_information_is_never_held_back() -> None:
    logger, out, _ = throttled()

    for number in range(100):
        logger.info("request %s", Fields(status=200, n=number))

    assert len(messages(out)) == 100


def test_the_server_log_writes_a_flood_of_one_error_once() -> None:
    script = (
        "import logging; from server import logs; logs.configure('INFO')\n"
        "for n in range(10000):\n"
        "    logging.getLogger('asyncio').error('socket.accept() out of system resource')\n"
        "logging.getLogger('server.web').warning('something else')"
    )
    run = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=60)

    assert run.returncode == 0, run.stderr
    lines = run.stderr.splitlines()
    assert len(lines) == 2, lines
    assert lines[0].endswith("level=ERROR logger=asyncio socket.accept() out of system resource")
    assert lines[1].endswith("level=WARNING logger=server.web something else")
