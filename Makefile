# Two commands on a fresh clone: `make run` and `make test`. Everything else is set up on demand.
PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.installed

.PHONY: install test test-packages test-sqlite test-postgres run lint bench clean

install: $(STAMP)

# The stamp is rebuilt only when pyproject.toml changes, so repeated runs cost nothing.
$(STAMP): pyproject.toml
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet -e '.[test,fast]'
	touch $(STAMP)

# The whole suite on SQLite files, and again on a throwaway PostgreSQL server (installed when missing),
# but for the tests no database can change: the rules and the codec (tests/engine, tests/protocol: those
# layers import no database) and the browser tests, which drive the client through the protocol (the
# store's PostgreSQL paths behind every page and command are in tests/store, tests/web, tests/cluster).
# Running those twice took three and a half minutes of a suite that must stay well under ten.
# The two halves run side by side (much of each waits on browsers, servers and sleeps, not on a core):
# 6 minutes instead of 9.5 on two cores. --output-sync prints each half's output whole when it ends.
test: install test-packages
	$(MAKE) -j2 --output-sync=target test-sqlite test-postgres

# What the tests need from Debian, installed once before the halves start (two apt runs at once would
# wait on each other's lock); scripts/with-postgres installs postgresql itself.
test-packages:
	scripts/ensure-debian-package nginx nginx-light
	scripts/ensure-debian-package chromium chromium
	scripts/ensure-debian-package redis-server redis-server
	scripts/ensure-debian-package openssl openssl

test-sqlite: install test-packages
	$(VENV)/bin/pytest

test-postgres: install test-packages
	scripts/with-postgres $(VENV)/bin/pytest -p no:cacheprovider --ignore=tests/static --ignore=tests/engine --ignore=tests/protocol

run: install
	$(VENV)/bin/kropki-server serve --migrate

lint: install
	$(VENV)/bin/ruff check server tests benchmarks

bench: install
	$(VENV)/bin/python benchmarks/engine.py

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .ruff_cache .hypothesis
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
