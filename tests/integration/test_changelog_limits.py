"""Every sweep fits GitHub's limits: 256 jobs per matrix, 1 MB of outputs per job.

The largest change there is, `config-keys: ["*"]` on InferenceX's two catalogs (about 2,500
rows), is planned as row ids in shards, and every benchmark job finds its row by id; a run
that cannot fit the shard jobs run-sweep.yml has is refused before anything is written.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from infersweep.changelog import buckets, shards
from tests.gitrepo import GitRepo, frozen_base_files
from tests.unit.test_policy_commands import parse_github_output

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
ALL_KEYS = """
- config-keys:
    - "*"
  description:
    - "Re-run everything."
  pr-link: XXX
"""


def _all_keys_repo(tmp_path: Path, configs: dict[str, str], changelog: str) -> GitRepo:
    repo = GitRepo(tmp_path / "repo")
    repo.commit("base", {**configs, "perf-changelog.yaml": changelog})
    repo.commit("all keys", {"perf-changelog.yaml": changelog.rstrip("\n") + "\n" + ALL_KEYS})
    return repo


def _matrix(run_cli, repo, tmp_path, monkeypatch, *extra):
    out_file = tmp_path / "github_output"
    out_file.write_text("")
    monkeypatch.setenv("GITHUB_OUTPUT", str(out_file))
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "summary.md"))
    result = run_cli("changelog", "matrix", "--repo", repo.path, "--base-ref", "HEAD~1",
                     "--head-ref", "HEAD", "--job-outputs", "--rows-out",
                     tmp_path / "sweep-rows.json", "--metadata-out", tmp_path / "meta.json",
                     *extra)
    return (*result, out_file)


def _flat(result: dict) -> list[dict]:
    rows = [r for side in ("single_node", "multi_node") for fam in result[side].values()
            for r in fam]
    for name in ("evals", "agentic_evals", "multinode_evals", "multinode_agentic_evals"):
        rows += result[name]
    return rows


def _key(row: dict) -> str:
    return json.dumps(row, sort_keys=True)


@pytest.mark.parametrize("canary", [False, True])
def test_all_keys_on_inferencex_fits_githubs_limits(inferencex, tmp_path, run_cli, monkeypatch,
                                                    canary):
    configs = {f"configs/{n}": (inferencex / "configs" / n).read_text()
               for n in ("amd-master.yaml", "nvidia-master.yaml", "runners.yaml")}
    repo = _all_keys_repo(tmp_path, configs, (inferencex / "perf-changelog.yaml").read_text())
    code, out, err, out_file = _matrix(run_cli, repo, tmp_path, monkeypatch,
                                       *(["--canary"] if canary else []))
    assert code == 0, err
    text = out_file.read_text()
    assert len(text.encode("utf-16-le")) < shards.JOB_OUTPUTS_LIMIT  # GitHub counts UTF-16
    outputs = parse_github_output(text)
    outputs.pop("ref")
    outputs = {k: json.loads(v) for k, v in outputs.items()}
    assert set(outputs) == set(shards.output_names())
    result = json.loads(out)
    everything = _flat(result)
    assert len(everything) > 2000  # the premise: far more than one matrix can hold
    assert sum(len(result["single_node"][f]) for f in result["single_node"]
               if f != "agentic") > shards.MATRIX_LIMIT
    doc = json.loads((tmp_path / "sweep-rows.json").read_text())
    # every requested row is in the rows file once: launched, or not run yet (no template
    # for it in this repository), never dropped
    listed = [*doc["rows"].values(), *(v["row"] for v in doc.get("not-run", {}).values())]
    # none of InferenceX's recipes is a template of this repository yet: nothing launches,
    # so no canary either, and every row is listed as not run with its reason
    assert doc["rows"] == {} and not any(outputs.values())
    jobs = [r for rows in buckets.job_outputs(result).values() for r in rows]
    assert sorted(map(_key, listed)) == sorted(map(_key, jobs))
    # the whole request fits GitHub's limits once every row can run: planned as if it could
    plan = shards.plan(buckets.job_outputs(result))
    planned = {k: json.loads(v) for k, v in plan.outputs.items()}
    assert all(len(entries) <= shards.MATRIX_LIMIT for entries in planned.values())
    ids = [e["id"] for entries in planned.values() for e in entries]
    assert len(ids) == len(set(ids)) == len(plan.rows)
    # every row runs exactly once: the rows file is the job list, re-keyed by id
    assert sorted(map(_key, plan.rows.values())) == sorted(map(_key, jobs))
    outputs, rows = planned, plan.rows
    for slot in shards.slot_names("single") + shards.slot_names("multi"):
        entries = outputs[slot]
        families = {e["id"].rsplit("-", 1)[0] for e in entries}
        assert len(families) <= 1  # a shard never mixes buckets
        multi = slot.startswith("multi")
        assert all((rows[e["id"]].get("prefill") is not None) == multi for e in entries)
        assert all(e["runner"] == rows[e["id"]]["runner"] for e in entries)
    # a benchmark job reads its row back by id
    rows_file = tmp_path / "planned-rows.json"
    rows_file.write_text(plan.rows_document())
    last = outputs["multi-1"][-1]
    code, text, err = run_cli("changelog", "row", "--from", rows_file, "--id", last["id"])
    assert code == 0, err
    assert json.loads(text) == rows[last["id"]]


def test_a_run_that_cannot_fit_is_refused(tmp_path, run_cli, monkeypatch):
    """More single-node rows than run-sweep.yml's shard jobs hold (10 x 256): of a framework
    with no template, so that no two of its points share a job."""
    n_points = shards.SLOTS["single"] * shards.MATRIX_LIMIT + 1
    huge = f"""
huge-fp8-mi355x-tilert:
  image: example/tilert:1
  model: example/huge
  model-prefix: huge
  precision: fp8
  framework: tilert
  runner: mi355x
  multinode: false
  scenarios:
    fixed-seq-len:
    - isl: 1024
      osl: 1024
      search-space:
      - {{ tp: 8, conc-list: [{", ".join(str(c) for c in range(1, n_points + 1))}] }}
"""
    configs = frozen_base_files()
    changelog = configs.pop("perf-changelog.yaml")
    configs["configs/amd-master.yaml"] += huge
    repo = _all_keys_repo(tmp_path, configs, changelog)
    code, out, err, out_file = _matrix(run_cli, repo, tmp_path, monkeypatch)
    assert code == 1
    assert "Traceback" not in err
    found = re.search(r"the sweep needs (\d+) single-node shards of at most 256 jobs "
                      r"\((\d+) rows\), but run-sweep.yml has 10 single-node shard jobs", err)
    assert found, err
    assert int(found[1]) > 10 and int(found[2]) > n_points
    assert "split the change into several pull requests" in err
    assert out == "" and out_file.read_text() == ""
    assert not (tmp_path / "sweep-rows.json").exists() and not (tmp_path / "meta.json").exists()
