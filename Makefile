# Two commands on a fresh clone: `make run` and `make test`. Everything else is set up on demand.
PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.installed

.PHONY: install test run lint bench clean

install: $(STAMP)

# The stamp is rebuilt only when pyproject.toml changes, so repeated runs cost nothing.
$(STAMP): pyproject.toml
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

test: install
	$(VENV)/bin/pytest

run: install
	$(VENV)/bin/kropki-server serve --migrate

lint: install
	$(VENV)/bin/ruff check server tests benchmarks

bench: install
	$(VENV)/bin/python benchmarks/engine.py

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .ruff_cache .hypothesis
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
