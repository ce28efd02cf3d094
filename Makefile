# Two commands on a fresh clone: `make run` and `make test`. Everything else is set up on demand.
PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.installed

.PHONY: install lock test test-packages test-sqlite test-server test-browser test-postgres test-postgres-cluster \
	test-postgres-rest run lint bench clean

# Python keeps its bytecode in __pycache__ here, as it does by default, even where the environment says
# not to (container images often set PYTHONDONTWRITEBYTECODE; this machine does): without it every
# process compiled the server's and the tests' sources again, and the suite starts hundreds. On
# 2026-11-30: a server's start 1.2 -> 0.9 s of CPU, collecting the suite 9.8 -> 2.8 s.
unexport PYTHONDONTWRITEBYTECODE

install: $(STAMP)

# Every dependency comes from the lock files, pinned with its hashes (docs/operations.md, "Installing: the
# locked dependencies"); then the project itself, which adds nothing. The stamp is rebuilt only when
# pyproject.toml or a lock file changes, so repeated runs cost nothing.
$(STAMP): pyproject.toml requirements/build.txt requirements/dev.txt
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --require-hashes -r requirements/build.txt -r requirements/dev.txt
	$(VENV)/bin/python -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $(STAMP)

# Writes the lock files again from pyproject.toml with uv (pinned in requirements/dev.txt): one
# resolution for every platform and Python from 3.11, with the hashes of every file of each pinned
# version. dev.txt first (everything); the others take its versions, so the three never disagree.
# LOCK_FLAGS=--upgrade takes every package to its newest allowed version, --upgrade-package NAME one.
LOCK_FLAGS ?=
UV_COMPILE = $(VENV)/bin/uv pip compile --quiet --universal --python-version 3.11 --generate-hashes \
	--custom-compile-command 'make lock' $(LOCK_FLAGS)
BUILD_REQUIRES = $(VENV)/bin/python -c 'import tomllib; print(*tomllib.load(open("pyproject.toml", "rb"))["build-system"]["requires"], sep="\n")'

lock: install
	$(UV_COMPILE) pyproject.toml --extra test --extra fast --extra postgresql --extra cluster --extra lock \
		-o requirements/dev.txt
	$(UV_COMPILE) pyproject.toml --extra postgresql --extra fast --extra cluster -c requirements/dev.txt \
		-o requirements/server.txt
	$(BUILD_REQUIRES) | $(UV_COMPILE) - -c requirements/dev.txt -o requirements/build.txt

# The whole suite on SQLite files, and again on a throwaway PostgreSQL server (installed when missing),
# but for the tests no database can change: the rules and the codec (tests/engine, tests/protocol: those
# layers import no database) and the browser tests, which drive the client through the protocol (the
# store's PostgreSQL paths behind every page and command are in tests/store, tests/web, tests/cluster).
# Running those twice took three and a half minutes of a suite that must stay well under ten. Of the rest,
# the PostgreSQL half runs only the tests that get a database from the suite (--database-tests-only,
# tests/conftest.py): the others (the hub's own tests, the CLI's, those on SQLite files of their own) ran
# the same on any database, 89 s of that half on 2026-11-30.
# Four parts side by side (much of each waits on browsers, servers and sleeps, not on a core: on a fast
# host the whole run kept the two cores less than half busy): the suite on SQLite without the browser
# tests, the engine's and the benchmarks' tests; the browser tests and the engine's (pure CPU, which
# fills the browser tests' waits: alone, the SQLite part ended last by a minute and a half); and the
# suite on PostgreSQL in two, the cluster's tests and the benchmarks' (a minute of chaos alone takes
# 100 s) beside the rest, each with a PostgreSQL server of its own. On a slow host the two cores are
# busy most of the run (docs/performance.md, "The test suite's length").
# --output-sync prints each part's output whole when it ends.
test: install test-packages
	$(MAKE) -j4 --output-sync=target test-server test-browser test-postgres-cluster test-postgres-rest

# What the tests need from Debian, installed once before the halves start (two apt runs at once would
# wait on each other's lock); scripts/with-postgres installs postgresql itself.
test-packages:
	scripts/ensure-debian-package nginx nginx-light
	scripts/ensure-debian-package chromium chromium
	scripts/ensure-debian-package chromium-headless-shell chromium-headless-shell
	scripts/ensure-debian-package redis-server redis-server
	scripts/ensure-debian-package openssl openssl
	scripts/ensure-debian-package valgrind valgrind

test-sqlite: install test-packages  # the whole suite on SQLite, in one run
	$(VENV)/bin/pytest

# The benchmarks' tests run in the PostgreSQL cluster part: its tests mostly wait (TTLs, restarts), and the
# benchmarks' short runs, which bring their own SQLite files, are a minute and a half of CPU that this
# part, the suite's longest, would otherwise add to its own. The browser part takes the engine's tests, the
# hub's (both mostly pure CPU; the few of the hub's that take a database get SQLite there too) and the command
# line's (whose servers and commands are processes of their own) to end about when the others do: on
# 2026-12-03 the SQLite part still ended last, 70 s after the browser part, with the hub's tests' 17 s of CPU.
BROWSER_PART = tests/static tests/engine tests/hub tests/test_admin.py tests/test_cli.py

test-server: install test-packages
	$(VENV)/bin/pytest $(addprefix --ignore=,$(BROWSER_PART)) --ignore=tests/test_benchmarks.py

test-browser: install test-packages
	$(VENV)/bin/pytest -p no:cacheprovider $(BROWSER_PART)

POSTGRES_PYTEST = scripts/with-postgres $(VENV)/bin/pytest -p no:cacheprovider
POSTGRES_IGNORED = --ignore=tests/static --ignore=tests/engine --ignore=tests/protocol
CLUSTER_TESTS = tests/cluster tests/test_benchmarks.py

test-postgres: install test-packages  # the whole suite on PostgreSQL, in one run
	$(POSTGRES_PYTEST) $(POSTGRES_IGNORED)

test-postgres-cluster: install test-packages
	$(POSTGRES_PYTEST) $(CLUSTER_TESTS)

test-postgres-rest: install test-packages
	$(POSTGRES_PYTEST) $(POSTGRES_IGNORED) $(addprefix --ignore=,$(CLUSTER_TESTS)) --database-tests-only

run: install
	$(VENV)/bin/kropki-server serve --migrate

lint: install
	$(VENV)/bin/ruff check server tests benchmarks

bench: install
	$(VENV)/bin/python benchmarks/engine.py

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .ruff_cache .hypothesis
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
