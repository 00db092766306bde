# Two entry points: `make run` (the web arena) and `make test` (every check CI runs).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: run test lint install clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.installed: pyproject.toml examples/tictactoe/pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[test]' -e examples/tictactoe
	touch $@

install: $(VENV)/.installed

run: install
	$(BIN)/agon serve

lint: install
	$(BIN)/ruff check src tests examples
	$(BIN)/mypy
	$(BIN)/lint-imports

test: lint
	$(BIN)/python -m pytest -n 2 --dist loadgroup

clean:
	rm -rf $(VENV) build *.egg-info
