"""The suite's own option: make test's PostgreSQL half (--database-tests-only) runs the tests that get a
database from the suite, and leaves the others to the SQLite half, where they run the same."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FILES = ("tests/web/test_auth.py", "tests/hub/test_chat.py")  # the hub's tests get no database


def collected(*options: str) -> set[str]:
    command = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *options]
    command += FILES
    run = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=120, check=True)
    return {line for line in run.stdout.splitlines() if "::" in line}


def test_the_postgresql_half_keeps_every_test_with_a_database_and_only_those() -> None:
    every, kept = collected(), collected("--database-tests-only")
    auth = {test for test in every if test.startswith("tests/web/")}
    assert any(test.startswith("tests/hub/") for test in every)
    assert kept == auth - {"tests/web/test_auth.py::test_the_refusals_are_documented"}  # a text check
