"""`infersweep store` in a fresh process on the seed sweep: ingest of the local `sweep run`
folder and of the same run as CI's downloaded artifacts (results_bmk with its aggregates,
changelog-metadata made by `changelog matrix` on a real git repository), on SQLite and
PostgreSQL; staging twice keeps one copy; list, the step summary, and clear errors."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from infersweep.store import load_run_dir, open_store
from tests.gitrepo import APPENDED_ENTRY, GitRepo, frozen_base_files

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[3]


def infersweep(*args, cwd=REPO, env=None) -> subprocess.CompletedProcess:
    full = {**os.environ, **(env or {})}
    full.pop("INFERSWEEP_DB_URL", None)
    full.pop("GITHUB_STEP_SUMMARY", None)
    full.update(env or {})
    return subprocess.run([sys.executable, "-m", "infersweep", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=300, env=full)


@pytest.fixture(scope="module")
def changelog_metadata(tmp_path_factory) -> Path:
    """changelog_metadata.json as run-sweep's setup job writes it, for a PR appending one
    entry to the frozen changelog."""
    tmp = tmp_path_factory.mktemp("changelog")
    repo = GitRepo(tmp / "repo")
    repo.commit("base", frozen_base_files())
    repo.git("checkout", "-q", "-b", "pr")
    head = repo.commit("append", {"perf-changelog.yaml":
                                  (repo.path / "perf-changelog.yaml").read_text()
                                  + APPENDED_ENTRY})
    decision = {"decision": "run", "run": True, "diff-base": "main", "diff-head": head,
                "trim-conc": True, "canary": False, "pr-number": None}
    out = tmp / "changelog_metadata.json"
    done = infersweep("changelog", "matrix", "--decision", json.dumps(decision),
                      "--metadata-out", out, cwd=repo.path)
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture(scope="module")
def artifacts(seed_sweep, changelog_metadata, tmp_path_factory) -> Path:
    """The run as `/stage-results` downloads it: results_bmk (the job folders with the
    changelog metadata, and the collect job's aggregates) and changelog-metadata."""
    root = tmp_path_factory.mktemp("artifacts")
    bmk = root / "results_bmk"
    shutil.copytree(seed_sweep, bmk / "results")
    shutil.copy(changelog_metadata, bmk / "results" / "changelog_metadata.json")
    (root / "changelog-metadata").mkdir()
    shutil.copy(changelog_metadata, root / "changelog-metadata" / "changelog_metadata.json")
    done = infersweep("results", "collect", "results", "--output", "aggregate/results.json",
                      cwd=bmk)
    assert done.returncode == 0, done.stderr
    done = infersweep("eval", "collect", "results", "--output", "aggregate/evals.json", cwd=bmk)
    assert done.returncode == 0, done.stderr
    return root


def test_local_sweep_folder_ingests_twice_into_one_copy(seed_sweep, store_url, tmp_path):
    summary = tmp_path / "summary.md"
    done = infersweep("store", "ingest", seed_sweep, "--db", store_url,
                      env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert done.returncode == 0, done.stderr
    run_id = json.loads(next(seed_sweep.rglob("manifest.json")).read_text())[
        "provenance"]["run-id"]
    assert f"staged run {run_id} attempt 1: 11 point(s) inserted" in done.stdout
    assert "2 eval(s) inserted" in done.stdout and "schema created" in done.stderr
    assert "| points | 11 | 0 | 0 |" in summary.read_text()
    again = infersweep("store", "ingest", seed_sweep, "--db", store_url)
    assert again.returncode == 0, again.stderr
    assert "0 point(s) inserted, 11 updated" in again.stdout
    listed = infersweep("store", "list", "--db", store_url, "--format", "json")
    [row] = json.loads(listed.stdout)
    assert (row["run_id"], row["source"], row["points"], row["evals"], row["ingest_count"]) == (
        run_id, "local", 11, 2, 2)
    points, evals, _ = load_run_dir(seed_sweep)
    with open_store(store_url) as s:
        [run] = s.staged_runs()
    assert run.points == points and run.evals == evals
    assert run.created_at is not None and run.source == "local"


def test_ci_artifacts_ingest_with_the_changelog_metadata(artifacts, changelog_metadata,
                                                         seed_sweep, store_url):
    done = infersweep("store", "ingest", artifacts, "--db", store_url, "--run-id",
                      "33825304569", "--attempt", "2")
    assert done.returncode == 0, done.stderr
    assert "(artifacts folder)" in done.stderr
    with open_store(store_url) as s:
        [run] = s.staged_runs()
    assert (run.run_id, run.attempt, run.source) == ("33825304569", 2, "github")
    assert run.changelog == json.loads(changelog_metadata.read_text())
    agg = json.loads((artifacts / "results_bmk" / "aggregate" / "results.json").read_text())
    assert run.points == agg["rows"]
    evals = json.loads((artifacts / "results_bmk" / "aggregate" / "evals.json").read_text())
    assert run.evals == evals["evals"]
    # the same rows a local ingest of the sweep folder reads
    assert [(p["recipe_name"], p["conc"]) for p in run.points] == [
        (p["recipe_name"], p["conc"]) for p in load_run_dir(seed_sweep)[0]]


def test_an_aggregate_failing_its_schema_writes_nothing(artifacts, tmp_path):
    bad = tmp_path / "bad"
    shutil.copytree(artifacts, bad)
    agg_path = bad / "results_bmk" / "aggregate" / "results.json"
    agg = json.loads(agg_path.read_text())
    agg["rows"][3]["conc"] = 0
    agg_path.write_text(json.dumps(agg))
    db = tmp_path / "store.db"
    done = infersweep("store", "ingest", bad, "--db", db)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "aggregate/results.json" in done.stderr and "not a aggregate" in done.stderr
    assert not db.exists()


def test_an_unreachable_postgresql_names_host_port_and_what_to_check(tmp_path, seed_sweep):
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    done = infersweep("store", "ingest", seed_sweep, env={
        "INFERSWEEP_DB_URL": f"postgresql+psycopg://u:hunter2@127.0.0.1:{port}/db"})
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert f"cannot connect to PostgreSQL at 127.0.0.1:{port}" in done.stderr
    assert "check that the server runs" in done.stderr and "INFERSWEEP_DB_URL" in done.stderr
    assert "hunter2" not in done.stderr


def test_a_database_failing_mid_ingest_exits_1_with_nothing_written_then_reruns(
        seed_sweep, store_url):
    from tests.integration.store.test_store_backends import (
        _drop_trigger,
        _trigger_failing_on_conc,
    )

    with open_store(store_url) as s:
        s.migrate()
        _trigger_failing_on_conc(s, 16)
    done = infersweep("store", "ingest", seed_sweep, "--db", store_url)
    assert done.returncode == 1 and "Traceback" not in done.stdout + done.stderr
    assert "injected failure" in done.stderr and "rolled back" in done.stderr
    assert "run the same command again" in done.stderr
    with open_store(store_url) as s:
        assert s.overview() == []
        _drop_trigger(s)
    done = infersweep("store", "ingest", seed_sweep, "--db", store_url)
    assert done.returncode == 0, done.stderr
    assert "11 point(s) inserted" in done.stdout


@pytest.mark.parametrize("url", ["sqlite:///:memory:", ":memory:",
                                 "sqlite:///file::memory:?cache=shared"])
def test_an_in_memory_store_is_refused_before_it_claims_to_stage(url, seed_sweep):
    done = infersweep("store", "ingest", seed_sweep, "--db", url)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "[store-url] an in-memory SQLite database keeps nothing" in done.stderr
    assert "inserted" not in done.stdout + done.stderr


def test_two_first_ingests_into_a_new_sqlite_file_both_succeed(seed_sweep, tmp_path):
    """The migration waits for the other writer as ingest does (BEGIN IMMEDIATE), instead of
    one of them failing with "database is locked"."""
    for i in range(3):
        db = tmp_path / f"store{i}.db"
        env = {**os.environ, "INFERSWEEP_DB_URL": f"sqlite:///{db}"}
        env.pop("GITHUB_STEP_SUMMARY", None)
        procs = [subprocess.Popen([sys.executable, "-m", "infersweep", "store", "ingest",
                                   str(seed_sweep)], cwd=REPO, env=env, text=True,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                 for _ in range(2)]
        outs = [p.communicate(timeout=300) for p in procs]
        assert [p.returncode for p in procs] == [0, 0], outs
        with open_store(f"sqlite:///{db}") as store:
            (run,) = store.staged_runs()
        assert len(run.points) == 11


@pytest.mark.parametrize(("url", "says"), [
    ("sqlite+pysqlite:///{tmp}/a.db?timeout=abc", "could not convert string to float: 'abc'"),
    ("sqlite:///{tmp}/a.db?mode=ro", "'mode' are not accepted by the pysqlite driver"),
])
def test_a_url_option_the_driver_cannot_take_is_a_located_error(url, says, tmp_path):
    done = infersweep("store", "list", "--db", url.format(tmp=tmp_path))
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr and "Warning" not in done.stderr, done.stderr
    assert "[store-url] the URL's options are not valid" in done.stderr and says in done.stderr
    assert not (tmp_path / "a.db").exists()
