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
from infersweep.results.check import against_matrix
from infersweep.results.commands import _matrix_rows
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


def test_an_eval_with_no_throughput_row_stays_an_eval_row_and_is_not_launched():
    outputs = buckets.job_outputs(_matrix([SEED], throughput=False))  # evals-only
    assert len(outputs["multinode-evals"]) == 2
    split = launchable.split(outputs, REPO)
    assert split.rows["multinode-evals"] == []
    assert [why for _, _, why in split.refused] == [launchable.EVAL_ALONE] * 2


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


# -- agentic-coding rows: held back by rule, announced once, still expected ---------------

def _table(markdown: str) -> list[list[str]]:
    """The body rows of the last GitHub markdown table in ``markdown``, cells stripped."""
    lines = [ln for ln in markdown.split("\n\n")[-1].splitlines() if ln.startswith("|")]
    return [[c.strip() for c in ln.strip("|").split("|")] for ln in lines[2:]]


AGENTIC_OUTPUTS = ("single-node-agentic", "multi-node-agentic", "agentic-evals",
                   "multinode-agentic-evals")


def test_agentic_rows_are_held_back_by_rule_and_nothing_else_is():
    outputs = buckets.job_outputs(_matrix([SEED, *AGENTIC_KEYS]))
    assert outputs["single-node-agentic"] and outputs["multi-node-agentic"]
    split = launchable.split(outputs, REPO)
    agentic, others = launchable.agentic_and_others(split.refused)
    assert others == []
    assert {name for name, _, _ in agentic} == {"single-node-agentic", "multi-node-agentic"}
    assert all(why == launchable.AGENTIC for _, _, why in agentic)
    assert len(agentic) == len(outputs["single-node-agentic"]) + len(
        outputs["multi-node-agentic"])
    assert all(split.rows[name] == [] for name in AGENTIC_OUTPUTS)
    # the seed's rows launch exactly as in a sweep without the agentic configs
    alone = launchable.split(buckets.job_outputs(_matrix([SEED])), REPO)
    assert split.rows == alone.rows and len(split.rows["multi-node"]) == 2
    assert [split.timeout_of(r) for r in split.rows["multi-node"]] == [570, 570]


def test_an_agentic_row_is_agentic_before_anything_else():
    """The rule comes before rendering and before the eval rule: an agentic eval row, or an
    agentic row whose recipe would render, is held back as agentic."""
    evals = buckets.job_outputs(_matrix(list(AGENTIC_KEYS), throughput=False))
    assert evals["agentic-evals"]
    split = launchable.split(evals, REPO)
    assert {why for _, _, why in split.refused} == {launchable.AGENTIC}
    seed = buckets.job_outputs(_matrix([SEED]))["multi-node"][0]
    split = launchable.split({"multi-node": [{**seed, "scenario-type": "agentic-coding"}]},
                             REPO)
    assert split.rows["multi-node"] == [] and split.timeouts == {}
    assert [why for _, _, why in split.refused] == [launchable.AGENTIC]


def test_the_agentic_announcement_names_the_rows_and_configs():
    outputs = buckets.job_outputs(_matrix([SEED, *AGENTIC_KEYS]))
    agentic, _ = launchable.agentic_and_others(launchable.split(outputs, REPO).refused)
    notice = launchable.agentic_notice(agentic)
    n_single, n_multi = len(outputs["single-node-agentic"]), len(outputs["multi-node-agentic"])
    assert notice.rule == launchable.AGENTIC_RULE
    assert notice.message == (
        f"{launchable.AGENTIC}: {n_single + n_multi} rows of 2 configs not run: "
        f"{AGENTIC_KEYS[0]} ({n_single} rows), {AGENTIC_KEYS[1]} ({n_multi} rows)")
    assert "gate counts their points as missing" in notice.hint
    summary = launchable.agentic_summary(agentic)
    assert summary.startswith("### Agentic-coding rows not run\n")
    assert _table(summary) == [
        [AGENTIC_KEYS[0], "single-node-agentic", str(n_single), str(n_single)],
        [AGENTIC_KEYS[1], "multi-node-agentic", str(n_multi),
         str(sum(len(r["conc"]) for r in outputs["multi-node-agentic"]))]]
    assert launchable.agentic_notice([]) is None and launchable.agentic_summary([]) == ""


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


def test_the_setup_step_announces_agentic_rows_once_and_runs_the_rest(
        run_cli, tmp_path, monkeypatch):
    """A manual run of the seed and two agentic configs: one notice naming the rows and the
    configs, a summary section, every agentic row under not-run with the rule's reason (the
    gate then counts its points missing), no job for any of them, and the seed's jobs exactly
    as in a run without them."""
    repo = _repo_with_agentic(tmp_path)
    code, out, err, outputs, doc, summary = _setup_step(
        run_cli, repo, tmp_path, [SEED, *AGENTIC_KEYS], monkeypatch)
    assert code == 0, err
    matrix = json.loads(out)  # annotations never mix into the matrix JSON on stdout
    agentic = [*matrix["single_node"]["agentic"], *matrix["multi_node"]["agentic"]]
    # the annotation: one notice, nothing per row
    notices = [ln for ln in err.splitlines() if ln.startswith("::notice")]
    assert len(notices) == 1, err
    assert notices[0].startswith(f"::notice title={launchable.AGENTIC_TITLE}::"
                                 f"{launchable.AGENTIC}: {len(agentic)} rows of 2 configs")
    assert all(key in notices[0] for key in AGENTIC_KEYS)
    assert not [ln for ln in err.splitlines() if ln.startswith("::warning")], err
    # the rows file: every agentic row not run, with the reason
    not_run = doc[shards.NOT_RUN]
    assert len(not_run) == len(agentic)
    assert {v["reason"] for v in not_run.values()} == {launchable.AGENTIC}
    assert sorted((v["row"]["recipe-fingerprint"], str(v["row"]["conc"]))
                  for v in not_run.values()) == sorted(
        (r["recipe-fingerprint"], str(r["conc"])) for r in agentic)  # evals folded in
    # no job for them; the seed's rows are the jobs of a run without the agentic configs
    assert not [r for r in doc["rows"].values() if launchable.is_agentic(r)]
    jobs = {k: json.loads(v) for k, v in outputs.items() if k != "ref"}
    _, _, _, alone, alone_doc, _ = _setup_step(run_cli, repo, tmp_path, [SEED], monkeypatch)
    assert jobs == {k: json.loads(v) for k, v in alone.items() if k != "ref"}
    assert doc["rows"] == alone_doc["rows"] and shards.NOT_RUN not in alone_doc
    # the summary: a section of its own, and the job table counts them as not run
    section = summary[summary.index("### Agentic-coding rows not run"):]
    assert all(key in section for key in AGENTIC_KEYS)
    assert "### Rows not launched" not in summary  # nothing else was refused
    table = {r[0]: r[1:] for r in _table(summary.split("### Agentic")[0].strip())}
    for side in ("single", "multi"):  # rows, shards, not run
        held = len(matrix[f"{side}_node"]["agentic"])
        assert table[f"{side}-node-agentic"] == ["0", "0", str(held)]
    # the gate: every agentic point is expected, so missing
    path = tmp_path / "-".join([SEED, *AGENTIC_KEYS]) / "sweep-rows.json"
    problems, asked = against_matrix({"expected": []}, _matrix_rows(path))
    points = sum(len(r["conc"]) if isinstance(r["conc"], list) else 1
                 for r in [*agentic, *doc["rows"].values()])
    assert asked == points == len(problems)
    assert sum("agentic-coding c=" in p.point for p in problems) == sum(
        len(r["conc"]) if isinstance(r["conc"], list) else 1 for r in agentic)


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
