"""What the setup job fans out: evals folded into the throughput job that runs their recipe,
the canary, rows no launcher can run (not run, still expected), each job's time limit from
the launcher's own deadline, and the token a fetch of a private repository needs."""

from __future__ import annotations

import base64
import json
import math

import pytest

from infersweep import gitexec
from infersweep.changelog import buckets, launchable, shards
from infersweep.changelog.process import normalise
from infersweep.config.catalog import load_catalog
from infersweep.launch.deadline import JOB_ALLOWANCE_S, launch_deadline_s
from infersweep.launch.fleet import load_fleets
from infersweep.matrix.generate import Selection, keyed_rows
from infersweep.recipe.render import render_row
from infersweep.results.commands import _matrix_rows
from tests.conftest import REPO

FROZEN = REPO / "tests" / "data" / "catalog"
SEED = "dsv4-fp4-mi355x-atom-disagg"
SINGLE = "dsv4-fp4-mi355x-sglang"


def _catalog():
    """The frozen catalog (tests/data/catalog): adding a config to the live one changes
    nothing here. Its rows name the live recipe templates, which are rendered."""
    return load_catalog([FROZEN / "amd-master.yaml"], FROZEN / "runners.yaml",
                        strict_runners=False)


def _matrix(keys, *, throughput=True):
    """The bucket object `changelog matrix` builds for an entry naming ``keys``."""
    cat = _catalog()
    rows = keyed_rows(cat, Selection(config_keys=keys, evals="none")) if throughput else []
    evals = keyed_rows(cat, Selection(config_keys=keys, evals="only"))
    return buckets.build([normalise(r) for r in rows], [normalise(r) for r in evals], {})


def test_an_eval_runs_in_the_job_of_the_throughput_row_with_its_recipe():
    matrix = _matrix([SEED])
    assert len(matrix["multinode_evals"]) == 2  # the bucket object keeps InferenceX's shape
    outputs = buckets.job_outputs(matrix)
    assert outputs["multinode-evals"] == []
    rows = outputs["multi-node"]
    assert [(r["run-eval"], r["eval-conc"], max(r["conc"])) for r in rows] == [
        (True, 128, 128), (True, 2048, 2048)]
    assert all(not r.get("eval-only") for r in rows)
    # the rendered recipe ends with the eval step, after every point
    command = render_row(rows[0], REPO).recipe["benchmark"]["command"]
    assert command.index("--max-concurrency 128") < command.index("eval gsm8k")
    assert "--concurrency 128" in command


def test_the_canary_is_the_cheapest_point_and_leaves_the_eval_with_the_rest():
    outputs = buckets.job_outputs(_matrix([SEED]))
    canary = buckets.take_canary(outputs)
    assert canary["conc"] == [4] and canary["run-eval"] is False and "eval-conc" not in canary
    rest = outputs["multi-node"][0]
    assert rest["conc"] == [8, 16, 32, 64, 128] and rest["run-eval"] and rest["eval-conc"] == 128
    # every requested point still runs exactly once
    assert sorted(canary["conc"] + rest["conc"]) == [4, 8, 16, 32, 64, 128]


def test_a_canary_whose_point_is_the_eval_point_takes_the_eval():
    row = {"prefill": {"num-worker": 1, "tp": 8}, "decode": {"num-worker": 1, "tp": 8},
           "conc": [4, 8], "run-eval": True, "eval-conc": 4, "runner": "r"}
    outputs = {"single-node": [], "multi-node": [row]}
    canary = buckets.take_canary(outputs)
    assert canary["conc"] == [4] and canary["run-eval"] and canary["eval-conc"] == 4
    assert outputs["multi-node"][0]["run-eval"] is False
    assert "eval-conc" not in outputs["multi-node"][0]


def test_an_eval_with_no_throughput_row_stays_an_eval_row_and_is_not_launched():
    outputs = buckets.job_outputs(_matrix([SEED], throughput=False))  # evals-only
    assert len(outputs["multinode-evals"]) == 2
    split = launchable.split(outputs, REPO)
    assert split.rows["multinode-evals"] == []
    assert [why for _, _, why in split.refused] == [launchable.EVAL_ALONE] * 2


def test_rows_no_launcher_can_run_are_listed_not_fanned_out_and_still_expected(tmp_path):
    outputs = buckets.job_outputs(_matrix([SEED, SINGLE]))
    split = launchable.split(outputs, REPO)
    assert split.rows["single-node"] == []
    assert len(split.rows["multi-node"]) == 2  # nothing else is held back
    assert {name for name, _, _ in split.refused} == {"single-node"}
    assert all("names no recipe template" in why for _, _, why in split.refused)
    outs = split.rows
    canary = buckets.take_canary(outs)
    assert canary.get("prefill") is not None  # the canary is a row that can run
    outs["canary-multi-node"] = [canary]
    plan = shards.plan(outs, timeout_of=split.timeout_of, not_run=split.refused)
    doc = json.loads(plan.rows_document())
    assert len(doc[shards.NOT_RUN]) == len(split.refused)
    assert all(not k.startswith("not-run") for k in doc["rows"])
    path = tmp_path / "sweep-rows.json"
    path.write_text(plan.rows_document())
    expected = _matrix_rows(path)  # what results check --matrix expects
    assert len(expected) == len(doc["rows"]) + len(split.refused)


def test_a_jobs_time_limit_is_the_launchers_deadline_plus_the_jobs_own_work():
    outputs = buckets.job_outputs(_matrix([SEED]))
    split = launchable.split(outputs, REPO)
    row = split.rows["multi-node"][0]
    fleet = load_fleets(REPO / "configs" / "fleets.yaml")["mi355x-amds"]
    deadline = launch_deadline_s(render_row(row, REPO).recipe, fleet)
    assert deadline == 8 * 3600 + fleet.deadline_margin_s  # the recipe's time_limit 08:00:00
    assert split.timeout_of(row) == math.ceil((deadline + JOB_ALLOWANCE_S) / 60) == 570
    canary = buckets.take_canary(split.rows)
    assert split.timeout_of(canary) == 570  # a canary shares its row's recipe
    entry = json.loads(shards.plan({"canary-multi-node": [canary]},
                                   timeout_of=split.timeout_of).outputs["canary-multi-node"])
    assert entry[0]["timeout-minutes"] == 570


def test_job_titles_tell_speculative_decoding_apart():
    base = {"exp-name": "dsv4_8k1k", "framework": "atom", "tp": 8, "conc": 4, "runner": "r"}
    assert shards.title({**base, "spec-decoding": "none"}) == "dsv4_8k1k atom tp8 c4"
    assert shards.title({**base, "spec-decoding": "mtp"}) == "dsv4_8k1k atom tp8 mtp c4"


@pytest.mark.parametrize("count", [None, "1"])
def test_a_fetch_authenticates_with_the_jobs_token_through_the_environment(count):
    env = {"GITHUB_TOKEN": "t0k"} if count is None else {
        "GITHUB_TOKEN": "t0k", "GIT_CONFIG_COUNT": count, "GIT_CONFIG_KEY_0": "url.x.insteadOf",
        "GIT_CONFIG_VALUE_0": "https://github.com/"}
    out = gitexec.token_env(env)
    n = 0 if count is None else 1
    assert out["GIT_CONFIG_COUNT"] == str(n + 1)
    assert out[f"GIT_CONFIG_KEY_{n}"] == "http.https://github.com/.extraheader"
    value = out[f"GIT_CONFIG_VALUE_{n}"]
    assert base64.b64decode(value.split()[-1]).decode() == "x-access-token:t0k"
    if count is not None:  # an existing rewrite is kept
        assert out["GIT_CONFIG_KEY_0"] == "url.x.insteadOf"
    assert gitexec.token_env({}) is None
