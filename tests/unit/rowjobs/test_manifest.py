"""The result manifest: points present, incomplete or missing (with the reason), files nobody
asked for, GPU counts, provenance, schema, atomic write and located load errors."""

from __future__ import annotations

import json

import pytest

from infersweep.diagnostics import InputError
from infersweep.recipe.workload import Point
from infersweep.rowjobs import manifest as manifests
from infersweep.rowjobs.executor import JobState, Provenance

NAME = "mi355x-atom-dsv4-disagg-1p1d-tp8-8k1k"
RECIPE = {"name": NAME, "resources": {"gpus_per_node": 8, "prefill_nodes": 1, "decode_nodes": 1,
                                      "prefill_workers": 1, "decode_workers": 1}}
PROV = Provenance(config_key="dsv4-fp4-mi355x-atom-disagg", image="rocm/atom-dev:x",
                  srt_slurm_commit="8" * 40, atom_revision="f" * 40, run_id="r1", attempt=1)


def points(*concs):
    return [Point(c, 10 * c, 2 * c, f"{NAME}-c{c}.json") for c in concs]


def result(conc, completed=None, prompts=None, **extra):
    prompts = 10 * conc if prompts is None else prompts
    data = {"num_prompts": prompts, "max_concurrency": conc,
            "completed": prompts if completed is None else completed, "failed": 0,
            "total_token_throughput": 1600.0, "median_ttft_ms": 12.5, "p99_ttft_ms": 30.0,
            "median_tpot_ms": 20.0}
    data.update(extra)
    return json.dumps(data)


def collect(tmp_path, pts, state=JobState.COMPLETED, reason=None):
    return manifests.collect(recipe=RECIPE, points=pts, isl=8192, osl=1024,
                             result_dir=tmp_path / "logs" / "fixed-seq", manifest_dir=tmp_path,
                             provenance=PROV, executor="local", job_id="local-1",
                             job_state=state, job_reason=reason)


@pytest.fixture
def results(tmp_path):
    d = tmp_path / "logs" / "fixed-seq"
    d.mkdir(parents=True)
    return d


def test_every_point_present_is_complete(tmp_path, results):
    for c in (4, 8):
        (results / f"{NAME}-c{c}.json").write_text(result(c))
    m = collect(tmp_path, points(4, 8))
    assert manifests.validate(m) == []
    assert m["complete"] is True and manifests.problems(m) == []
    assert [(p["conc"], p["status"], p["completed"], p["requested"]) for p in m["points"]] == [
        (4, "present", 40, 40), (8, "present", 80, 80)]
    assert m["points"][0]["file"] == f"logs/fixed-seq/{NAME}-c4.json"
    assert m["points"][0]["metrics"]["median_ttft_ms"] == 12.5
    assert m["gpus"] == {"prefill": 8, "decode": 8, "total": 16}
    prov = m["provenance"]
    assert (prov["config-key"], prov["srt-slurm-commit"], prov["job-state"], prov["attempt"]) == (
        "dsv4-fp4-mi355x-atom-disagg", "8" * 40, "COMPLETED", 1)


@pytest.mark.parametrize(("state", "reason", "fragment"), [
    (JobState.COMPLETED, None, "the benchmark step ended without writing it"),
    (JobState.CANCELLED, "the sweep received SIGTERM",
     "cancelled before this point finished (the sweep received SIGTERM)"),
    (JobState.FAILED, "the benchmark step exited 1", "the job ended FAILED"),
    (JobState.TIMEOUT, None, "the job ended TIMEOUT"),
    (JobState.RUNNING, None, "the job was RUNNING when collected"),
])
def test_missing_point_says_why(tmp_path, results, state, reason, fragment):
    (results / f"{NAME}-c4.json").write_text(result(4))
    m = collect(tmp_path, points(4, 8), state, reason)
    assert manifests.validate(m) == []
    missing = m["points"][1]
    assert missing["status"] == "missing" and missing["file"] is None
    assert fragment in missing["reason"]
    assert m["complete"] is False
    assert any("c=8 missing" in line for line in manifests.problems(m))


def test_a_completed_job_with_every_point_but_a_failed_state_is_not_complete(tmp_path, results):
    (results / f"{NAME}-c4.json").write_text(result(4))
    m = collect(tmp_path, points(4), JobState.FAILED, "the benchmark step exited 2")
    assert m["points"][0]["status"] == "present"
    assert m["complete"] is False
    assert manifests.problems(m) == [
        "dsv4-fp4-mi355x-atom-disagg mi355x-atom-dsv4-disagg-1p1d-tp8-8k1k (job local-1): "
        "job ended FAILED: the benchmark step exited 2"]


@pytest.mark.parametrize(("content", "status", "fragment"), [
    (result(4, completed=37), "incomplete", "completed 37 of 40 requests"),
    (result(4, prompts=20), "incomplete", "asked for 20 prompts, the recipe for 40"),
    (result(8), "missing", "for concurrency 8, not 4"),
    (json.dumps({"completed": 40}), "missing", "no parsable concurrency"),
    ('{"completed": 4', "missing", "not valid JSON"),
    ("[]", "missing", "not a JSON object"),
])
def test_unusable_result_files(tmp_path, results, content, status, fragment):
    (results / f"{NAME}-c4.json").write_text(content)
    m = collect(tmp_path, points(4))
    assert manifests.validate(m) == []
    p = m["points"][0]
    assert p["status"] == status and fragment in p["reason"]
    assert p["file"] == f"logs/fixed-seq/{NAME}-c4.json"
    assert m["complete"] is False


def test_an_unfinished_point_of_an_unfinished_job_says_both(tmp_path, results):
    (results / f"{NAME}-c4.json").write_text(result(4, completed=0))
    m = collect(tmp_path, points(4), JobState.TIMEOUT, "time limit of 2 s reached")
    assert m["points"][0]["reason"] == (
        "completed 0 of 40 requests; the job ended TIMEOUT (time limit of 2 s reached)")


def test_files_nobody_asked_for(tmp_path, results):
    (results / f"{NAME}-c4.json").write_text(result(4))
    (results / f"{NAME}-c999.json").write_text(result(999))
    (results / "notes.json").write_text("{}")
    (results / f"{NAME}-c4.records.jsonl").write_text("{}\n")  # the client's records: expected
    m = collect(tmp_path, points(4))
    assert m["unexpected-files"] == [
        {"file": f"{NAME}-c999.json", "reason": "concurrency 999 was not requested"},
        {"file": "notes.json",
         "reason": f"no parsable concurrency in the name (expected {NAME}-c<conc>.json)"}]
    assert m["complete"] is False


def test_gpu_counts_per_role():
    two_p = {"resources": {"gpus_per_node": 8, "prefill_nodes": 2, "decode_nodes": 1,
                           "prefill_workers": 2, "decode_workers": 1}}
    assert manifests.gpu_counts(two_p) == {"prefill": 16, "decode": 8, "total": 24}
    agg = {"resources": {"gpus_per_node": 8, "agg_nodes": 1, "agg_workers": 2}}
    assert manifests.gpu_counts(agg) == {"prefill": 0, "decode": 8, "total": 8}


def test_rerun_runs_only_what_is_not_present(tmp_path, results):
    (results / f"{NAME}-c4.json").write_text(result(4))
    (results / f"{NAME}-c16.json").write_text(result(16, completed=3))
    m = collect(tmp_path, points(4, 8, 16), JobState.CANCELLED, "stopped")
    assert manifests.rerun_concs(m, [4, 8, 16]) == [8, 16]
    assert manifests.rerun_concs(m, [4]) == []


def test_write_is_atomic_and_load_round_trips(tmp_path, results):
    (results / f"{NAME}-c4.json").write_text(result(4))
    m = collect(tmp_path, points(4))
    path = tmp_path / "manifest.json"
    manifests.write(path, m)
    assert manifests.load(path) == m
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
    broken = dict(m, points="nope")
    with pytest.raises(ValueError, match="does not match its schema"):
        manifests.write(tmp_path / "other.json", broken)
    assert not (tmp_path / "other.json").exists()


def test_load_reports_where_the_manifest_is_wrong(tmp_path, results):
    (results / f"{NAME}-c4.json").write_text(result(4))
    m = collect(tmp_path, points(4))
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(m, indent=2).replace('"attempt": 1,', '"attempt": 0,', 1))
    with pytest.raises(InputError) as err:
        manifests.load(bad)
    text = str(err.value)
    assert "bad.json:" in text and "attempt" in text
    line = text.split(":")[1]
    assert line.isdigit() and int(line) > 1
    (tmp_path / "trunc.json").write_text('{"manifest-version": 1,')
    with pytest.raises(InputError, match=r"trunc\.json:1:\d+: \[manifest\] not valid JSON"):
        manifests.load(tmp_path / "trunc.json")
    with pytest.raises(InputError, match="no such manifest file"):
        manifests.load(tmp_path / "absent.json")
