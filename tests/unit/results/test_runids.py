"""One run per folder: `results check` refuses a folder mixing run ids by the rule the store's
checks call, and both count the same ids (every row read, the rows replaced, the evals)."""

from __future__ import annotations

from infersweep.results import check, collect, runids
from infersweep.store import checks as store_checks
from infersweep.store.rundir import read_run_dir
from tests import resultsrun


def _problems(*paths):
    g = collect.gather(paths, allow_incomplete=True)
    return check.check(collect.aggregate(g), errors=g.errors)


def test_a_folder_of_two_runs_fails_the_gate_naming_both(tmp_path):
    resultsrun.write_job(tmp_path / "a", resultsrun.disagg_row([4]), run_id="local-a")
    resultsrun.write_job(tmp_path / "b", resultsrun.single_row([8]), run_id="local-b",
                         config_key="gptoss-fp4-h200-vllm", name="h200")
    problems, counts = _problems(tmp_path)
    assert counts["complete"] == counts["expected"] == 2  # every point is fine on its own
    [p] = problems
    assert (p.kind, p.point) == ("identity", "run")
    assert p.message.startswith("[results-run-id] the rows belong to 2 runs: local-a, local-b")
    assert f"local-a: {tmp_path}/a/" in p.message and "check one run at a time" in p.message


def test_a_rerun_of_another_run_hidden_by_the_rerun_rule_is_still_found(tmp_path):
    row = resultsrun.disagg_row([4])
    resultsrun.write_job(tmp_path / "try1", row, run_id="run-1", attempt=1)
    resultsrun.write_job(tmp_path / "try2", row, run_id="run-2", attempt=2)
    g = collect.gather([tmp_path], allow_incomplete=True)
    agg = collect.aggregate(g)
    assert {r["run_id"] for r in agg["rows"]} == {"run-2"}   # the winner alone
    assert list(runids.run_ids(agg["rows"])) == ["run-1", "run-2"]
    problems, _ = check.check(agg, errors=g.errors)
    assert [p.point for p in problems] == ["run"]


def test_reruns_of_one_run_pass(tmp_path):
    row = resultsrun.disagg_row([4, 8])
    resultsrun.write_job(tmp_path / "try1", row, attempt=1,
                         results={8: resultsrun.result(8, 8, completed=6, failed=2)})
    resultsrun.write_job(tmp_path / "try2", row, attempt=2)
    assert _problems(tmp_path)[0] == []


def test_the_store_counts_the_same_runs_and_refuses_by_the_same_rule(tmp_path):
    resultsrun.write_job(tmp_path / "a", resultsrun.disagg_row([4]), run_id="local-a")
    resultsrun.write_job(tmp_path / "b", resultsrun.disagg_row([8]), run_id="local-b",
                         name="other")
    d = read_run_dir(tmp_path)
    assert store_checks.run_ids(d.points, d.evals) == d.run_ids == ["local-a", "local-b"]
    [diag] = store_checks.check_one_run(d.points, d.evals, str(tmp_path))
    assert diag.rule == "results-run-id" and diag.path == str(tmp_path)
    assert "the rows belong to 2 runs: local-a, local-b" in diag.message
    assert "--run-id" in diag.hint
    evals = [{"run-id": "local-c", "source": "x/eval"}]
    assert store_checks.run_ids(d.points[:1], evals) == ["local-a", "local-c"]
    assert store_checks.check_one_run(d.points[:1]) == []
