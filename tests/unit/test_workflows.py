"""The GitHub workflows: lint-clean, secure, thin, and consuming every matrix bucket."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from infersweep.changelog import buckets, shards

REPO = Path(__file__).resolve().parents[2]
WORKFLOWS = REPO / ".github" / "workflows"
BIN = Path(sys.executable).parent


def _tool(name: str) -> str:
    path = BIN / name
    if path.exists():
        return str(path)
    found = shutil.which(name)
    assert found, f"{name} is a test dependency (pip install -e '.[test]')"
    return found


def _load(name: str) -> dict:
    return yaml.load((WORKFLOWS / name).read_text(), Loader=yaml.BaseLoader)


def test_actionlint_clean():
    proc = subprocess.run([_tool("actionlint"), *sorted(map(str, WORKFLOWS.glob("*.yml")))],
                          capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_zizmor_clean():
    proc = subprocess.run([_tool("zizmor"), "--offline", "--no-progress", str(WORKFLOWS)],
                          capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "No findings" in proc.stdout + proc.stderr


def _consumers(workflow: dict) -> dict[str, list[str]]:
    """setup output -> the jobs whose matrix expands it."""
    used: dict[str, list[str]] = {}
    for name, job in workflow["jobs"].items():
        matrix = job.get("strategy", {}).get("matrix", {})
        for value in matrix.values() if isinstance(matrix, dict) else []:
            for output in re.findall(r"fromJSON\(needs\.setup\.outputs\.([\w-]+)\)", value):
                used.setdefault(output, []).append(name)
    return used


def test_every_setup_output_has_exactly_one_consuming_job():
    sweep = _load("run-sweep.yml")
    declared = set(sweep["jobs"]["setup"]["outputs"]) - {"ref"}  # the run's commit
    assert declared == set(shards.output_names())
    consumers = _consumers(sweep)
    for name in declared:
        assert consumers.get(name) == [name], f"setup output '{name}' -> {consumers.get(name)}"


@pytest.mark.parametrize("template", sorted(shards.TEMPLATES))
def test_shard_jobs_are_the_planners_slots(template):
    """run-sweep.yml has exactly the shard jobs `changelog matrix` plans for, each calling its
    template's benchmark workflow (single-node rows benchmark-single-node.yml, multi-node rows
    benchmark.yml) with the run's commit and the row's own time limit; so does the canary of
    that template."""
    jobs = _load("run-sweep.yml")["jobs"]
    slots = [n for n in jobs if re.fullmatch(rf"{template}-\d+", n)]
    assert slots == shards.slot_names(template)
    # fixed-seq-len rows have a canary; agentic rows never do (buckets.take_canary)
    canaries = [c for c in shards.CANARIES if c == f"canary-{template}-node"]
    assert len(canaries) == (0 if "agentic" in template else 1)
    for name in [*slots, *canaries]:
        job = jobs[name]
        # act and GHES refuse $/
        assert job["uses"] == f"./.github/workflows/{shards.WORKFLOWS[template]}", name
        assert job["with"] == {"runner": "${{ matrix.row.runner }}",
                               "row-id": "${{ matrix.row.id }}",
                               "title": "${{ matrix.row.title }}",
                               "ref": "${{ needs.setup.outputs.ref }}",
                               "timeout-minutes": "${{ matrix.row.timeout-minutes }}"}
    for name in slots:
        job = jobs[name]
        assert {"canary-single-node", "canary-multi-node"} <= set(job["needs"])
        assert f"needs.setup.outputs.{name} != '[]'" in job["if"]
        # a failed canary stops the shards only under fail-fast
        assert "needs.policy.outputs.fail-fast != 'true'" in job["if"]
        for canary in ("canary-single-node", "canary-multi-node"):
            assert (f"""contains(fromJSON('["failure","cancelled"]'), needs.{canary}.result)"""
                    in job["if"])
    assert set(slots) <= set(jobs["collect"]["needs"])


def test_every_job_of_a_run_checks_out_one_commit():
    """policy/check/setup check out the PR head; setup outputs the commit it read the rows
    from, and the benchmark jobs and collect check out exactly that."""
    sweep = _load("run-sweep.yml")
    head = "${{ github.event.pull_request.head.sha || github.sha }}"
    for name in ("policy", "check", "setup"):
        checkout = _step(sweep["jobs"][name],
                         lambda s: s.get("uses", "").startswith("actions/checkout@"))
        assert checkout["with"]["ref"] == head
    assert sweep["jobs"]["setup"]["outputs"]["ref"] == "${{ steps.matrix.outputs.ref }}"
    collect = _step(sweep["jobs"]["collect"],
                    lambda s: s.get("uses", "").startswith("actions/checkout@"))
    assert collect["with"]["ref"] == "${{ needs.setup.outputs.ref }}"
    bench = _load("benchmark.yml")
    checkout = _step(bench["jobs"]["benchmark"],
                     lambda s: s.get("uses", "").startswith("actions/checkout@"))
    assert checkout["with"]["ref"] == "${{ inputs.ref }}"
    assert bench["jobs"]["benchmark"]["timeout-minutes"] == "${{ inputs.timeout-minutes }}"


def test_every_benchmark_job_routes_by_its_rows_node_count():
    """Every job of run-sweep.yml that runs rows calls a benchmark workflow: the single-node
    one exactly for the jobs fed single-node outputs, benchmark.yml for the multi-node ones."""
    jobs = _load("run-sweep.yml")["jobs"]
    callers = {name: job["uses"] for name, job in jobs.items() if "uses" in job}
    assert set(callers) == set(shards.output_names())
    assert set(shards.WORKFLOWS) == set(shards.TEMPLATES)
    template_of = {**{s: t for t in shards.TEMPLATES for s in shards.slot_names(t)},
                   "canary-single-node": "single", "canary-multi-node": "multi"}
    for name, uses in callers.items():
        assert uses == f"./.github/workflows/{shards.WORKFLOWS[template_of[name]]}", name
    assert shards.WORKFLOWS == {"single": "benchmark-single-node.yml", "multi": "benchmark.yml",
                                "agentic": "benchmark-single-node.yml",
                                "multi-agentic": "benchmark.yml"}


def test_the_benchmark_steps_are_in_one_place():
    """benchmark-single-node.yml takes exactly benchmark.yml's inputs and hands every one,
    unchanged, to benchmark.yml: it has no steps of its own, so checkout, the row, the launch
    and the uploads are written once. Its job is named by the row id (act names a nested
    job by its caller's name, not the shard's: the id keeps every row's job apart)."""
    single, bench = _load("benchmark-single-node.yml"), _load("benchmark.yml")
    assert single["on"]["workflow_call"]["inputs"] == bench["on"]["workflow_call"]["inputs"]
    assert single["permissions"] == {}
    [(_, job)] = single["jobs"].items()
    assert job["uses"] == "./.github/workflows/benchmark.yml"
    assert job["name"] == "${{ inputs.row-id }}"
    assert job["permissions"] == {"contents": "read"}
    assert job["with"] == {name: f"${{{{ inputs.{name} }}}}"
                           for name in bench["on"]["workflow_call"]["inputs"]}
    assert "steps" not in job and "env" not in single
    # the row, the launcher and the uploads appear in one workflow file only
    texts = {p.name: p.read_text() for p in WORKFLOWS.glob("*.yml")}
    for marker in ("infersweep changelog row", 'bash "runners/launch_', "bmk_${{ inputs.row-id",
                   "rows_${{ inputs.row-id", "bmk_agentic_${{ inputs.row-id",
                   "agentic artifacts split"):
        assert [n for n, t in texts.items() if marker in t] == ["benchmark.yml"], marker


@pytest.mark.parametrize("family", ["1k1k", "8k1k", "2048_128", "agentic"])
def test_every_bucket_routes_to_a_shard_template(family):
    routed = {name: template for template, (names, _) in shards.TEMPLATES.items()
              for name in names}
    assert set(routed) | set(shards.CANARIES) == set(buckets.JOB_OUTPUTS)
    agentic = "agentic" if family == "agentic" else ""
    assert routed[buckets.job_output_for("single_node", family)] == (agentic or "single")
    assert routed[buckets.job_output_for("multi_node", family)] == (
        "multi-agentic" if agentic else "multi")
    for name in buckets.EVAL_BUCKETS:
        side = "multi" if "multinode" in name else "single"
        expected = {"single": "agentic", "multi": "multi-agentic"}[side] \
            if "agentic" in name else side
        assert routed[buckets.job_output_for(name)] == expected


def test_an_unusual_sequence_family_reaches_a_job():
    row = {"isl": 2048, "osl": 128, "conc": 4, "runner": "x", "framework": "y"}
    matrix = buckets.build([row], [], {})
    assert matrix["single_node"] == {"2048_128": [row]}
    assert buckets.job_outputs(matrix)["single-node"] == [row]


def _step(job: dict, predicate) -> dict:
    found = [s for s in job["steps"] if predicate(s)]
    assert len(found) == 1, found
    return found[0]


@pytest.mark.parametrize("name", ["benchmark.yml"])
def test_templates_read_their_row_from_the_rows_artifact(name):
    """Jobs get an id; the row comes from the artifact (no row JSON in job outputs)."""
    template = _load(name)
    inputs = template["on"]["workflow_call"]["inputs"]
    assert set(inputs) == {"runner", "row-id", "title", "ref", "timeout-minutes",
                           "rows-artifact"}
    assert "inputs.row " not in (WORKFLOWS / name).read_text()
    job = template["jobs"]["benchmark"]
    assert job["env"]["INFERSWEEP_ROW_ID"] == "${{ inputs.row-id }}"
    download = _step(job, lambda s: s.get("uses", "").startswith("actions/download-artifact@"))
    assert download["with"] == {"name": "${{ inputs.rows-artifact }}",
                                "path": "${{ runner.temp }}/sweep-rows"}
    row = _step(job, lambda s: s.get("id") == "row")
    assert row["run"] == ('infersweep changelog row --from '
                          '"$RUNNER_TEMP/sweep-rows/sweep-rows.json" --id "$INFERSWEEP_ROW_ID"')
    launch = _step(job, lambda s: s.get("name") == "Launch")
    assert launch["env"] == {"INFERSWEEP_ROW": "${{ steps.row.outputs.row }}"}
    order = [s.get("id") or s.get("name") or s.get("uses", "").split("@")[0]
             for s in job["steps"]]
    assert order.index("actions/download-artifact") < order.index("row") < order.index("Launch")
    # the setup job uploads exactly that artifact, with the file the row step reads
    setup = _load("run-sweep.yml")["jobs"]["setup"]
    upload = _step(setup, lambda s: s.get("with", {}).get("name") == inputs["rows-artifact"][
        "default"])
    assert upload["with"]["path"] == "sweep-rows.json"
    matrix = _step(setup, lambda s: s.get("id") == "matrix")
    assert "--rows-out sweep-rows.json" in matrix["run"] and "--job-outputs" in matrix["run"]


@pytest.mark.parametrize(("job", "command"), [("check", "changelog check"),
                                              ("setup", "changelog matrix")])
def test_changelog_jobs_work_on_a_one_commit_checkout(job, command):
    """The checkout is one commit deep; the command fetches what it needs."""
    steps = _load("run-sweep.yml")["jobs"][job]["steps"]
    checkout = _step({"steps": steps}, lambda s: s.get("uses", "").startswith("actions/checkout@"))
    assert checkout["with"]["fetch-depth"] == "1"
    run = _step({"steps": steps}, lambda s: command in s.get("run", ""))
    assert "--fetch-missing" in run["run"]


ALLOWED_RUN = re.compile(r"^(infersweep |pip install |bash \"runners/launch_|sudo "
                         r"--preserve-env=[A-Z_,]+ bash \.ci/run$)")


def test_steps_are_thin_and_never_interpolate():
    for path in WORKFLOWS.glob("*.yml"):
        workflow = yaml.load(path.read_text(), Loader=yaml.BaseLoader)
        for job_name, job in workflow["jobs"].items():
            for step in job.get("steps", []):
                script = step.get("run")
                if script is None:
                    continue
                assert "${{" not in script, f"{path.name}:{job_name} interpolates into run:"
                assert ALLOWED_RUN.match(script.strip()), (
                    f"{path.name}:{job_name} runs '{script.strip()}': decisions belong in "
                    "infersweep commands")


def test_sweep_triggers_only_on_the_changelog():
    on = _load("run-sweep.yml")["on"]
    assert on["pull_request"]["paths"] == ["perf-changelog.yaml"]
    assert on["push"]["paths"] == ["perf-changelog.yaml"]


def test_templates_run_the_fleet_launcher():
    steps = _load("benchmark.yml")["jobs"]["benchmark"]["steps"]
    assert any(s.get("run", "").startswith('bash "runners/launch_${RUNNER_NAME%%_*}.sh"')
               for s in steps)


def test_concurrency_label_list_is_the_policy_vocabulary():
    """The workflow's only copy of label names equals the policy module's (its source)."""
    from infersweep.policy import labels

    group = _load("run-sweep.yml")["concurrency"]["group"]
    copied = json.loads(re.search(r"fromJSON\('(\[.*?\])'\)", group)[1])
    assert sorted(copied) == sorted(labels.SWEEP_LABELS)


def test_sweep_runs_on_dispatch_through_the_same_matrix_command():
    workflow = _load("run-sweep.yml")
    inputs = workflow["on"]["workflow_dispatch"]["inputs"]
    assert set(inputs) == {"config-keys", "seq-lens", "conc", "eval-mode"}
    assert inputs["config-keys"]["required"] == "true"
    assert set(inputs["eval-mode"]["options"]) == {"default", "none", "evals-only", "all-evals"}
    matrix = _step(workflow["jobs"]["setup"], lambda s: s.get("id") == "matrix")
    assert matrix["env"]["DISPATCH"] == (
        "${{ github.event_name == 'workflow_dispatch' && toJSON(inputs) || '' }}")
    assert '--dispatch "$DISPATCH"' in matrix["run"]


def test_dispatch_inputs_build_the_matrix(tmp_path, frozen_repo):
    """What the setup step runs on a dispatch: rows, bucketed, sharded like a changelog's."""
    from click.testing import CliRunner

    from infersweep.cli import cli

    rows = tmp_path / "sweep-rows.json"
    res = CliRunner().invoke(cli, [
        "changelog", "matrix", "--repo", str(frozen_repo), "--rows-out", str(rows), "--dispatch",
        json.dumps({"config-keys": "dsv4-fp4-mi355x-atom-disagg", "seq-lens": "8k1k",
                    "conc": "4 8 256", "eval-mode": "none"})])
    assert res.exit_code == 0, res.output
    matrix = json.loads(res.stdout)
    multi = matrix["multi_node"]["8k1k"]
    assert len(multi) == 2 and all(set(r["conc"]) <= {4, 8, 256} for r in multi)
    assert matrix["single_node"] == {}
    assert len(json.loads(rows.read_text())["rows"]) == 2


def test_a_refused_launch_turns_only_the_launch_red():
    """The job folder (manifest inside) is the one results artifact; processing and the rows
    upload run only when there is something to process."""
    steps = _load("benchmark.yml")["jobs"]["benchmark"]["steps"]
    assert not [s for s in steps if "manifest" in s.get("with", {}).get("name", "")]
    upload = _step({"steps": steps}, lambda s: s.get("name") == "Upload results")
    assert upload["if"] == "always() && steps.artifacts.outputs.kind != 'agentic'"
    assert upload["with"]["path"] == "results"
    process = _step({"steps": steps}, lambda s: s.get("name") == "Process results")
    assert process["if"] == "always() && hashFiles('results/**/manifest.json') != ''"


def test_launcher_scripts_are_a_few_lines_calling_infersweep_launch():
    for fleet in ("mi355x-amds", "local-slurm", "local"):
        text = (REPO / "runners" / f"launch_{fleet}.sh").read_text()
        code = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
        assert code[-1] == f'exec infersweep launch --fleet {fleet} "$@"'
        assert len(code) <= 3


def test_every_upload_is_named_by_row_id_and_attempt():
    """A called workflow has no matrix of its own (strategy.job-index is 0 in every row's
    job): only the row id keeps two rows' artifacts apart, and the attempt two runs of one."""
    steps = _load("benchmark.yml")["jobs"]["benchmark"]["steps"]
    uploads = [s for s in steps if s.get("uses", "").startswith("actions/upload-artifact@")]
    assert [u["with"]["name"].split("$")[0] for u in uploads] == [
        "bmk_", "bmk_agentic_", "agentic_", "rows_"]
    for upload in uploads:
        assert re.fullmatch(r"[a-z_]+_\$\{\{ inputs\.row-id \}\}_\$\{\{ github\.run_attempt \}\}",
                            upload["with"]["name"]), upload["with"]["name"]


def test_collect_never_merges_artifacts_and_gates_on_the_runs_matrix():
    steps = _load("run-sweep.yml")["jobs"]["collect"]["steps"]
    downloads = [s["with"] for s in steps
                 if s.get("uses", "").startswith("actions/download-artifact@")]
    assert not [d for d in downloads if "merge-multiple" in d]  # one folder per artifact
    assert {d.get("pattern") or d.get("name"): d["path"] for d in downloads} == {
        "bmk_*": "results", "rows_*": "rows", "agentic_*": "agentic-exports",
        "sweep-rows": "sweep-rows", "changelog-metadata": "changelog-metadata"}
    runs = [s["run"] for s in steps if "run" in s]
    order = [next(i for i, r in enumerate(runs) if r.startswith(cmd)) for cmd in (
        "infersweep agentic artifacts join results agentic-exports --out results/agentic",
        "infersweep results collect results rows --allow-empty",
        "infersweep results check results --matrix sweep-rows/sweep-rows.json",
        "infersweep eval collect results", "infersweep eval check results")]
    assert order == sorted(order)
    assert "--output-format github" in next(r for r in runs
                                            if r.startswith("infersweep results check"))
    evals = [s for s in steps if s.get("run", "").startswith("infersweep eval ")]
    assert all("hashFiles('results/**/eval/eval.json')" in s["if"] for s in evals)
    upload = steps[-1]
    assert upload["with"]["name"] == "results_bmk"
    # staging reads the aggregates and re-checks the eval folders (infersweep/stage/gates.py)
    assert upload["with"]["path"].split() == ["results", "aggregate", "sweep-rows",
                                              "changelog-metadata"]


def test_staging_runs_on_pull_request_comments_from_the_default_branch_only():
    """stage-results.yml: least privilege, one staging at a time, trusted code, no comment
    text in a shell line, and everything decided by `infersweep stage`."""
    text = (WORKFLOWS / "stage-results.yml").read_text()
    wf = _load("stage-results.yml")
    assert wf["on"] == {"issue_comment": {"types": ["created"]}}
    assert wf["permissions"] == {}
    # no group: GitHub would cancel a pending staging when a third request arrived
    assert "concurrency" not in wf
    job = wf["jobs"]["stage"]
    assert job["if"] == ("github.event.issue.pull_request && "
                         "startsWith(github.event.comment.body, '/stage-results')")
    assert job["permissions"] == {"actions": "read", "contents": "read", "issues": "write",
                                  "pull-requests": "read"}
    checkout = _step(job, lambda s: s.get("uses", "").startswith("actions/checkout@"))
    assert checkout["with"]["persist-credentials"] == "false"
    assert "ref" not in checkout["with"]  # the default branch, never the pull request's head
    runs = [s["run"] for s in job["steps"] if "run" in s]
    assert runs.index("infersweep store migrate") < runs.index("infersweep stage --site-dir site")
    stage = _step(job, lambda s: s.get("id") == "stage")
    assert stage["run"] == "infersweep stage --site-dir site"
    assert stage["env"]["GITHUB_TOKEN"] == "${{ github.token }}"
    assert "comment.body" not in "".join(s.get("run", "") + str(s.get("env", ""))
                                         for s in job["steps"])
    assert text.count("github.event.comment.body") == 1  # only in the job's `if`
    for uses in re.findall(r"uses: (\S+)", text):
        assert re.fullmatch(r"[\w./-]+@[0-9a-f]{40}", uses), uses
    publish = wf["jobs"]["publish"]
    assert publish["permissions"] == {"pages": "write", "id-token": "write"}
    assert "needs.stage.outputs.staged == 'true'" in publish["if"]



@pytest.mark.parametrize("command", ["infersweep validate", "infersweep pins check",
                                     "infersweep changelog check", "infersweep results check"])
def test_gate_steps_annotate_the_diff(command):
    """Every step that runs a gate prints its problems as GitHub annotations as well."""
    runs = [step["run"] for path in WORKFLOWS.glob("*.yml")
            for job in yaml.load(path.read_text(), Loader=yaml.BaseLoader)["jobs"].values()
            for step in job.get("steps", []) if step.get("run", "").startswith(command)]
    assert runs, f"no workflow step runs {command}"
    assert all("--output-format github" in r for r in runs), runs


WRITES = {("stage-results.yml", "stage"): {"issues"},
          ("stage-results.yml", "publish"): {"pages", "id-token"}}


@pytest.mark.parametrize("path", sorted(WORKFLOWS.glob("*.yml")), ids=lambda p: p.name)
def test_every_job_has_the_least_permissions(path):
    """act ignores `permissions`, so they are checked here: nothing by default, each job its
    own, and write access only where a job must write (the staging reply, Pages)."""
    wf = yaml.load(path.read_text(), Loader=yaml.BaseLoader)
    assert wf["permissions"] == {}
    for name, job in wf["jobs"].items():
        assert "permissions" in job, f"{path.name}:{name} has no permissions of its own"
        writes = {scope for scope, level in job["permissions"].items() if level == "write"}
        assert writes == WRITES.get((path.name, name), set()), (path.name, name, writes)


def test_an_agentic_job_uploads_the_pair_staging_reads_and_collect_joins_it():
    """An agentic row's job folder goes up as bmk_agentic_<id>_<attempt> (results) and
    agentic_<id>_<attempt> (exports), both from the split step's folder, instead of the whole
    folder; collect downloads the exports apart, joins each pair under results/agentic before
    the gate, and leaves those folders out of results_bmk. The names are the ones staging
    looks for (infersweep/stage/agenticarts.py)."""
    from infersweep.launch import agenticartifacts
    from infersweep.stage import agenticarts

    assert (agenticartifacts.RESULTS_PREFIX, agenticartifacts.EXPORTS_PREFIX) == (
        agenticarts.RESULTS_PREFIX, agenticarts.EXPORTS_PREFIX)
    steps = _load("benchmark.yml")["jobs"]["benchmark"]["steps"]
    split = _step({"steps": steps}, lambda s: s.get("id") == "artifacts")
    assert split["env"] == {"INFERSWEEP_ROW": "${{ steps.row.outputs.row }}"}
    out = re.fullmatch(r'infersweep agentic artifacts split results --out "\$RUNNER_TEMP/(.+)"',
                       split["run"])[1]
    names = [s.get("name") for s in steps]
    assert names.index("Launch") < names.index("Split agentic artifacts") < names.index(
        "Upload results")
    for name, prefix, sub in (("Upload agentic results", agenticartifacts.RESULTS_PREFIX,
                               "results"),
                              ("Upload agentic exports", agenticartifacts.EXPORTS_PREFIX,
                               "exports")):
        upload = _step({"steps": steps}, lambda s, n=name: s.get("name") == n)
        assert upload["if"] == "always() && steps.artifacts.outputs.kind == 'agentic'"
        assert upload["with"]["name"].startswith(prefix + "${{ inputs.row-id }}")
        assert upload["with"]["path"] == f"${{{{ runner.temp }}}}/{out}/{sub}"
    collect = _load("run-sweep.yml")["jobs"]["collect"]["steps"]
    join = _step({"steps": collect}, lambda s: "artifacts join" in s.get("run", ""))
    assert "if" not in join
    later = [s for s in collect[collect.index(join) + 1:] if "run" in s]
    assert all(s.get("if", "").startswith("always()") for s in later)  # a bad pair gates on
    assert _step({"steps": collect}, lambda s: s.get("with", {}).get("pattern") == (
        agenticartifacts.EXPORTS_PREFIX + "*"))["with"]["path"] == "agentic-exports"
