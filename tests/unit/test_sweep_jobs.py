"""What the setup job fans out: evals folded into the throughput job that runs their recipe,
the canary, rows no launcher can run (not run, still expected), each job's time limit from
the launcher's own deadline (an agentic row's from its duration and points), agentic rows in
shards of their own, and the token a fetch of a private repository needs."""

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
from infersweep.matrix.generate import Selection, keyed_rows
from infersweep.recipe.render import render_row
from infersweep.results.commands import _matrix_rows
from infersweep.rowjobs.fleet import load_fleets
from tests import livecatalog
from tests.conftest import REPO

FROZEN = REPO / "tests" / "data" / "catalog"
AGENTIC_FILE = REPO / "tests" / "data" / "agentic" / "agentic-master.yaml"
SEED = "dsv4-fp4-mi355x-atom-disagg"
SINGLE = "dsv4-fp4-mi355x-sglang"
AGENTIC_KEYS = ("dsv4-fp4-mi355x-atom-agentic", "dsv4-fp4-mi355x-atom-disagg-agentic")


def _catalog():
    """The frozen catalog (tests/data/catalog) and two agentic configs beside it: adding a
    config to the live one changes nothing here. Its rows name the live recipe templates,
    which are rendered."""
    return load_catalog([FROZEN / "amd-master.yaml", AGENTIC_FILE], FROZEN / "runners.yaml",
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


def test_an_eval_with_no_throughput_row_stays_an_eval_row_and_is_launched_on_its_own():
    outputs = buckets.job_outputs(_matrix([SEED], throughput=False))  # evals-only
    assert len(outputs["multinode-evals"]) == 2
    split = launchable.split(outputs, REPO)
    assert split.refused == []
    assert [r["eval-only"] for r in split.rows["multinode-evals"]] == [True, True]
    # the job runs the eval alone: its time limit is a job's, with no point to add
    assert all(split.timeouts[buckets.recipe_fingerprint(r)] > 0
               for r in split.rows["multinode-evals"])


def test_rows_no_launcher_can_run_are_listed_not_fanned_out_and_still_expected(tmp_path):
    outputs = buckets.job_outputs(_matrix([SEED, SINGLE]))
    # single-node rows of a framework with no template of its own and no default one
    outputs["single-node"] = [{**r, "framework": "tilert"} for r in outputs["single-node"]]
    split = launchable.split(outputs, REPO)
    assert split.rows["single-node"] == []
    assert len(split.rows["multi-node"]) == 2  # nothing else is held back
    assert {name for name, _, _ in split.refused} == {"single-node"}
    assert all("no default template for framework 'tilert'" in why
               for _, _, why in split.refused)
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


SINGLE_ROW = {"model-prefix": "dsv4", "exp-name": "dsv4_8k1k", "framework": "atom",
              "runner": "mi355x", "isl": 8192, "osl": 1024, "tp": 8, "ep": 1,
              "dp-attn": False, "spec-decoding": "none", "conc": 4}


@pytest.mark.parametrize(("fields", "expected"), [
    ({}, "dsv4 atom tp8 8k1k c4"),
    ({"spec-decoding": "mtp"}, "dsv4 atom tp8 mtp 8k1k c4"),
    # a grouped row: one server, several concurrencies
    ({"dp-attn": True, "conc": [64, 128]}, "dsv4 atom tp8 dpa 8k1k c64,128"),
    ({"ep": 8, "dp-attn": True, "isl": 1024, "conc": [256, 64, 128], "run-eval": True},
     "dsv4 atom tp8 ep8 dpa 1k1k c64,128,256 eval"),
    ({"isl": 2048, "osl": 128, "conc": [1]}, "dsv4 atom tp8 2048_128 c1"),
    ({"conc": [1, 2, 4, 8, 16, 32, 64, 128, 256]}, "dsv4 atom tp8 8k1k c1-256 (9)"),
    ({"scenario-type": "agentic-coding", "isl": None, "osl": None}, "dsv4 atom tp8 agentic c4"),
])
def test_a_single_node_title_shows_what_its_server_runs(fields, expected):
    """Framework, TP/EP/DPA, speculative decoding, ISL/OSL and every concurrency of the job."""
    assert shards.title({**SINGLE_ROW, **fields}) == expected


def test_a_multi_node_title_keeps_its_topology_and_range():
    rows = buckets.job_outputs(_matrix([SEED]))["multi-node"]
    assert [shards.title(r) for r in rows] == ["dsv4_8k1k atom-disagg 1P1D c4-128 eval",
                                               "dsv4_8k1k atom-disagg 2P1D c256-2048 eval"]
    assert shards.title({**rows[0], "spec-decoding": "mtp", "conc": [4], "run-eval": False}) \
        == "dsv4_8k1k atom-disagg 1P1D mtp c4"


# -- agentic-coding rows: jobs of their own, a time limit from their duration ---------------

def _table(markdown: str) -> list[list[str]]:
    """The body rows of the last GitHub markdown table in ``markdown``, cells stripped."""
    lines = [ln for ln in markdown.split("\n\n")[-1].splitlines() if ln.startswith("|")]
    return [[c.strip() for c in ln.strip("|").split("|")] for ln in lines[2:]]


AGENTIC_OUTPUTS = ("single-node-agentic", "multi-node-agentic", "agentic-evals",
                   "multinode-agentic-evals")


def test_agentic_rows_launch_in_shards_of_their_own_and_never_as_the_canary():
    outputs = buckets.job_outputs(_matrix([SEED, *AGENTIC_KEYS]))
    n_single, n_multi = len(outputs["single-node-agentic"]), len(outputs["multi-node-agentic"])
    assert n_single == 3 and n_multi == 3  # one row (one job) per concurrency, as InferenceX
    split = launchable.split(outputs, REPO)
    assert split.refused == []
    assert len(split.rows["single-node-agentic"]) == n_single
    assert len(split.rows["multi-node-agentic"]) == n_multi
    # the seed's rows launch exactly as in a sweep without the agentic configs
    alone = launchable.split(buckets.job_outputs(_matrix([SEED])), REPO)
    assert {k: v for k, v in split.rows.items() if k not in AGENTIC_OUTPUTS} == {
        k: v for k, v in alone.rows.items() if k not in AGENTIC_OUTPUTS}
    canary = buckets.take_canary(split.rows)
    assert not launchable.is_agentic(canary)  # the seed's cheapest point
    split.rows["canary-multi-node"] = [canary]
    plan = shards.plan(split.rows, timeout_of=split.timeout_of, not_run=split.refused)
    jobs = {k: json.loads(v) for k, v in plan.outputs.items()}
    assert [e["id"] for e in jobs["agentic-1"]] == [
        f"single-node-agentic-{i}" for i in range(1, n_single + 1)]
    assert [e["id"] for e in jobs["multi-agentic-1"]] == [
        f"multi-node-agentic-{i}" for i in range(1, n_multi + 1)]
    assert jobs["agentic-1"][0]["title"] == "dsv4 atom tp8 agentic c1"
    fixed = [e for k, v in jobs.items() if k.startswith(("single-", "multi-"))
             and not k.startswith("multi-agentic") for e in v]
    assert fixed and not [e for e in fixed if "agentic" in e["id"]]


def test_an_agentic_jobs_time_limit_follows_its_duration_points_and_scale_down():
    """Engine start + per point (overhead + warm-up grace + window), the windows scaled as
    the replay scales them, under the recipe's Slurm time limit; plus the fleet's margin and
    the job's allowance, for the launcher's deadline and the job's timeout-minutes alike."""
    from infersweep.launch import deadline

    outputs = buckets.job_outputs(_matrix([AGENTIC_KEYS[0]]))
    split = launchable.split(outputs, REPO)
    row = split.rows["single-node-agentic"][0]
    rendered = render_row(row, REPO)
    assert rendered.recipe["slurm"]["time_limit"] == "08:00:00"
    fleets = load_fleets(REPO / "configs" / "fleets.yaml")
    amds, local = fleets["mi355x-amds"], fleets["local"]
    full = deadline.AGENTIC_START_S + deadline.AGENTIC_POINT_OVERHEAD_S + 1800 + 3600
    assert deadline.agentic_budget_s(rendered.workload) == full == 8100
    assert deadline.launch_deadline_s(rendered.recipe, amds, rendered.workload) == \
        full + amds.deadline_margin_s
    # the runner label's fleet (mi355x-amds): 8100 + 3600 + 1800 s
    assert split.timeout_of(row) == math.ceil((full + 3600 + JOB_ALLOWANCE_S) / 60) == 225
    assert split.timeout_of(row) < 500  # InferenceX's fixed single-node agentic limit
    # scaled down as the local fleet runs it: the 3600 s window and 1800 s grace by 40
    small = deadline.AGENTIC_START_S + deadline.AGENTIC_POINT_OVERHEAD_S + 45 + 90
    assert deadline.launch_deadline_s(rendered.recipe, local, rendered.workload) == \
        small + local.deadline_margin_s
    assert deadline.job_timeout_minutes(rendered.recipe, [local], rendered.workload) == \
        math.ceil((small + local.deadline_margin_s + JOB_ALLOWANCE_S) / 60)
    # several points (a multi-node row's list) add up; the time limit still caps it
    many = rendered.workload.with_concs(range(1, 7))
    assert deadline.agentic_budget_s(many) == deadline.AGENTIC_START_S + 6 * (full - 1800)
    assert deadline.launch_deadline_s(rendered.recipe, amds, many) == 8 * 3600 + 3600
    # a fixed-seq-len row keeps the recipe's time limit
    seed = launchable.split(buckets.job_outputs(_matrix([SEED])), REPO)
    assert seed.timeout_of(seed.rows["multi-node"][0]) == 570


def test_an_agentic_row_whose_recipe_replays_nothing_is_not_launched(monkeypatch):
    """A recipe that would measure fixed-seq-len points for an agentic row is refused with the
    reason (a multi-node agentic row before its recipe exists), and still expected."""
    seed = buckets.job_outputs(_matrix([SEED]))["multi-node"][0]
    fixed = render_row(seed, REPO)
    monkeypatch.setattr(launchable, "render_row", lambda *a, **k: fixed)
    row = {**seed, "scenario-type": "agentic-coding"}
    split = launchable.split({"multi-node-agentic": [row]}, REPO)
    assert split.rows["multi-node-agentic"] == [] and split.timeouts == {}
    assert split.refused == [("multi-node-agentic", row, launchable.NO_REPLAY)]


def _repo_with_agentic(tmp_path):
    """The frozen checkout with the agentic configs as one more master file."""
    frozen, root = livecatalog.frozen_checkout(), tmp_path / "repo"
    (root / "configs").mkdir(parents=True)
    for item in frozen.iterdir():
        if item.name != "configs":
            (root / item.name).symlink_to(item)
    for item in (frozen / "configs").iterdir():
        (root / "configs" / item.name).symlink_to(item)
    (root / "configs" / AGENTIC_FILE.name).symlink_to(AGENTIC_FILE)
    return root


def _setup_step(run_cli, repo, tmp_path, keys, monkeypatch):
    """What run-sweep's setup step runs, on a manual run of ``keys``: (exit code, stdout,
    stderr, job outputs, rows file, step summary)."""
    from tests.unit.test_policy_commands import parse_github_output

    work = tmp_path / "-".join(keys)
    work.mkdir()
    out_file, summary, rows_file = (work / "github_output", work / "summary.md",
                                    work / "sweep-rows.json")
    monkeypatch.setenv("GITHUB_OUTPUT", str(out_file))
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.setattr("infersweep.changelog.gitrefs.head_commit", lambda root: "0" * 40)
    code, out, err = run_cli(
        "changelog", "matrix", "--repo", repo, "--job-outputs", "--rows-out", rows_file,
        "--output-format", "github", "--dispatch",
        json.dumps({"config-keys": " ".join(keys), "seq-lens": "", "conc": "",
                    "eval-mode": "default"}))
    if code:
        return code, out, err, {}, None, ""
    return (code, out, err, parse_github_output(out_file.read_text()),
            json.loads(rows_file.read_text()), summary.read_text())


def test_the_setup_step_fans_agentic_rows_out_to_their_shards(run_cli, tmp_path, monkeypatch):
    """A manual run of the seed and two agentic configs: every agentic row is a job of an
    agentic shard with its time limit and title, nothing is held back or announced, and the
    seed's jobs are exactly those of a run without them."""
    repo = _repo_with_agentic(tmp_path)
    code, out, err, outputs, doc, summary = _setup_step(
        run_cli, repo, tmp_path, [SEED, *AGENTIC_KEYS], monkeypatch)
    assert code == 0, err
    matrix = json.loads(out)
    agentic = [*matrix["single_node"]["agentic"], *matrix["multi_node"]["agentic"]]
    assert not [ln for ln in err.splitlines() if ln.startswith(("::notice", "::warning"))], err
    assert shards.NOT_RUN not in doc
    jobs = {k: json.loads(v) for k, v in outputs.items() if k != "ref"}
    launched = [e for k in ("agentic-1", "multi-agentic-1") for e in jobs[k]]
    assert len(launched) == len(agentic)
    assert sorted((doc["rows"][e["id"]]["recipe-fingerprint"], str(doc["rows"][e["id"]]["conc"]))
                  for e in launched) == sorted(
        (r["recipe-fingerprint"], str(r["conc"])) for r in agentic)
    assert all(isinstance(e["timeout-minutes"], int) and e["timeout-minutes"] < 500
               for e in jobs["agentic-1"])
    assert all(e["runner"] == "cluster:mi355x-amds" for e in launched)
    _, _, _, alone, alone_doc, _ = _setup_step(run_cli, repo, tmp_path, [SEED], monkeypatch)
    alone_jobs = {k: json.loads(v) for k, v in alone.items() if k != "ref"}
    assert {k: v for k, v in jobs.items() if "agentic" not in k} == {
        k: v for k, v in alone_jobs.items() if "agentic" not in k}
    assert {k: v for k, v in doc["rows"].items() if "agentic" not in k} == alone_doc["rows"]
    table = {r[0]: r[1:] for r in _table(summary.strip())}
    assert table["single-node-agentic"] == ["3", "1", "0"]  # rows, shards, not run
    assert table["multi-node-agentic"] == ["3", "1", "0"]
    assert "### Rows not launched" not in summary


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
