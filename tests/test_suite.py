"""How make test splits the suite: its PostgreSQL half (--database-tests-only) runs the tests that get a
database from the suite, and leaves the others to the SQLite half, where they run the same; the SQLite
half's two parts run every test once."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FILES = ("tests/web/test_auth.py", "tests/hub/test_chat.py")  # the hub's tests get no database
BENCHMARKS = "tests/test_benchmarks.py"


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


def pytest_arguments(target: str) -> list[str]:
    """The arguments of the pytest that `make <target>` runs (make -n: printed, not run)."""
    run = subprocess.run(
        ["make", "-n", target], capture_output=True, text=True, cwd=ROOT, timeout=60, check=True
    )
    (command,) = [line.split() for line in run.stdout.splitlines() if "/pytest " in line]
    return command[[word.endswith("/pytest") for word in command].index(True) + 1 :]


def test_the_sqlite_halfs_two_parts_run_every_test_once() -> None:
    """What make test's SQLite part leaves out is its browser part's, but for the benchmarks' tests,
    which the PostgreSQL cluster part runs: moving tests between the parts to even their lengths drops
    none and runs none twice."""
    server, browser = pytest_arguments("test-server"), pytest_arguments("test-browser")
    ignored = {argument.removeprefix("--ignore=") for argument in server if argument.startswith("--ignore=")}
    assert not [argument for argument in server if argument.startswith("tests")]  # everything else
    assert ignored == {argument for argument in browser if argument.startswith("tests")} | {BENCHMARKS}
    assert BENCHMARKS in pytest_arguments("test-postgres-cluster")
