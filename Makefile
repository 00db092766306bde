# Two entry points: `make run` (the web arena) and `make test` (every check CI runs). Each
# installs what it needs, system packages included (tools/system-packages says how, or in one
# line why it cannot).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
export PYTHON VENV

.PHONY: run test test-all lint install browser postgres clean

$(BIN)/python:
	tools/system-packages venv
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

HOST ?= 127.0.0.1
PORT ?= 8000

# what running needs, then what the tests need besides
$(VENV)/.installed-run: pyproject.toml examples/tictactoe/pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e . -e examples/tictactoe
	touch $@

$(VENV)/.installed: $(VENV)/.installed-run
	$(BIN)/python -m pip install -q -e '.[test]' -e examples/tictactoe
	touch $@

install: $(VENV)/.installed

run: $(VENV)/.installed-run
	$(BIN)/agon serve --host $(HOST) --port $(PORT)

lint: install
	$(BIN)/ruff check src tests examples
	$(BIN)/mypy
	$(BIN)/lint-imports

browser: install
	tools/system-packages browser

# a PostgreSQL server's programs: each test process starts a throw-away one (tests/conftest.py)
postgres:
	tools/system-packages postgres

# `make test`: every check and every test but the slow ones (the kill, signal, property and
# real-solve tests); `make test-all` (CI: .ci/run) runs those too.
TESTS ?= quick
PYTEST_SELECTION_quick := -m "not slow"
PYTEST_SELECTION_all :=

test: lint browser postgres
	$(BIN)/python -m pytest -n 2 --dist loadgroup $(PYTEST_SELECTION_$(TESTS))

test-all:
	$(MAKE) test TESTS=all

clean:
	rm -rf $(VENV) build *.egg-info
