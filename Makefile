# Two entry points from the README: `make run` (main job) and `make test` (whole suite).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install run test unit integration lint clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

# The main job on its embedded default.
run: $(STAMP)
	$(BIN)/infersweep validate
	$(BIN)/infersweep matrix full-sweep --format table

test: $(STAMP) lint
	$(BIN)/python -m pytest -q -rs $(PYTEST_ARGS)

unit: $(STAMP)
	$(BIN)/python -m pytest -q tests --ignore=tests/integration $(PYTEST_ARGS)

integration: $(STAMP)
	$(BIN)/python -m pytest -q tests/integration $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check infersweep tests benchmarks

clean:
	rm -rf $(VENV) .pytest_cache
