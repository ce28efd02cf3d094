"""One line per event with key=value fields, whatever the values and traces hold."""

from __future__ import annotations

import json
import logging
import sys

import pytest

from server.logs import Fields, OneLineFormatter, quoted


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
