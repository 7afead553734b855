"""Rows that start the same server share a job: fewer engine starts, every point kept."""

from __future__ import annotations

import json

from infersweep.recipe.grouping import group, grouped_rows
from infersweep.recipe.render import render_row
from tests.conftest import REPO, SHARED, shared_absent
from tests.unit.recipe.test_coverage import frozen  # noqa: F401 - the fixture
from tests.unit.recipe.test_row_settings import ATOM
from tests.unit.test_matrix import FROZEN_ARGS


def test_points_with_one_server_share_a_job_and_keep_their_order():
    rows = [{**ATOM, "conc": c} for c in (1, 2, 4, 8, 16, 32, 64, 128)]
    jobs = grouped_rows(rows, REPO)
    # ATOM caps max-num-seqs at the concurrency from 64 on: each of those is its own server
    assert [j["conc"] for j in jobs] == [[1, 2, 4, 8, 16, 32], 64, 128]
    recipe = render_row(jobs[0], REPO)
    assert [p.conc for p in recipe.points] == [1, 2, 4, 8, 16, 32]


def test_a_group_runs_its_eval_once_at_the_highest_marked_concurrency():
    rows = [{**ATOM, "conc": c, "run-eval": c in (8, 16)} for c in (4, 8, 16)]
    (job,) = grouped_rows(rows, REPO)
    assert job["conc"] == [4, 8, 16] and job["run-eval"] is True and job["eval-conc"] == 16


def test_different_configs_or_settings_never_share_a_job():
    a = {**ATOM, "conc": 4}
    jobs = group([("k1", a), ("k2", {**a, "conc": 8}), ("k1", {**a, "tp": 4, "conc": 8}),
                  ("k1", {**a, "image": "other", "conc": 8})], REPO)
    assert [len(g.members) for g in jobs] == [1, 1, 1, 1]


def test_rows_that_do_not_render_and_multi_node_rows_stay_as_they_are(frozen):  # noqa: F811
    pairs, _ = frozen
    multi = [r for _, r in pairs if "prefill" in r]
    broken = [{**ATOM, "framework": "tilert", "conc": c} for c in (1, 2)]
    assert grouped_rows(multi + broken, REPO) == multi + broken


def test_our_catalog_runs_in_fewer_jobs_than_points(frozen):  # noqa: F811
    pairs, _ = frozen
    singles = [(k, r) for k, r in pairs if "prefill" not in r]
    jobs = group(singles, REPO)
    assert sum(len(g.members) for g in jobs) == len(singles) == 52
    assert len(jobs) == 34  # sglang sizes its CUDA graphs and admission to each point
    assert all(len({g.key}) == 1 for g in jobs)


def test_explain_shows_jobs_engine_starts_and_node_hours(run_cli):
    code, out, err = run_cli("explain", "dsv4-fp4-mi355x-atom", *FROZEN_ARGS, "--repo", REPO,
                             "--format", "json")
    assert code == 0, err
    (d,) = json.loads(out)
    assert d["jobs"] == d["engine-starts"] < d["inferencex-engine-starts"] == len(d["points"])
    assert d["node-hours"] < d["inferencex-node-hours"]
    code, out, _ = run_cli("explain", "dsv4-fp4-mi355x-atom", *FROZEN_ARGS, "--repo", REPO)
    assert f"{d['engine-starts']} engine start(s)" in out and "node-hours" in out


def test_a_third_of_inferencex_engine_starts_on_its_amd_catalog(run_cli):
    configs = SHARED / "reference" / "inferencex" / "configs"
    if not (configs / "amd-master.yaml").is_file():
        shared_absent("InferenceX's catalogs (../shared/reference/inferencex) not present")
    code, out, err = run_cli("explain", "*", "--config-files", configs / "amd-master.yaml",
                             "--runner-config", configs / "runners.yaml", "--repo", REPO,
                             "--scenario-type", "fixed-seq-len", "--single-node",
                             "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    starts = sum(d["engine-starts"] for d in data)
    theirs = sum(d["inferencex-engine-starts"] for d in data)
    assert theirs == 270 and starts * 3 <= theirs
