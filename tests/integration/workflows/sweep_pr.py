"""A pull request the sandbox can run end to end: test data, never the shipped catalog.

The catalog pins srt-slurm (a fork) and ATOM at commits this machine cannot fetch. The
sandbox's github.com serves instead, behind the same URLs (the git ``insteadOf`` rewrite of
infersweep/replay/sandbox.py): upstream srt-slurm v1.0.68 from the bundle in
../shared/reference/srt-slurm as ``SemiAnalysisAI/srt-slurm``, and a one-commit ``ROCm/ATOM``.
The base commit of the test repository re-pins both to those commits (configs/runtimes.yaml,
the catalog's atomesh router version and every other mention `pins check` finds); the PR's
head appends one
changelog entry selecting the seed config. Everything else is the working tree as it is.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import yaml

from infersweep.replay.events import pull_request_event
from infersweep.replay.sandbox import GitSandbox, PullRequest, commit_files
from tests.conftest import shared_absent
from tests.integration.slurm import launch_setup
from tests.integration.slurm.srtctl_setup import BUNDLE
from tests.integration.slurm.srtctl_setup import PIN as UPSTREAM_PIN

REPOSITORY = "acme/infersweep"
WORKFLOW = ".github/workflows/run-sweep.yml"
SEED = "dsv4-fp4-mi355x-atom-disagg"
SEED_POINTS = 11  # 1P1D c4-128 (6) + 2P1D c256-2048 (5)
FORK_PIN = "81d46274f508e18ab14d1f123b75132005818dcf"
ATOM_PIN = "f95ef3ec30a16876a676e0af96d60f8e0605c7c5"
RUNNER_LABELS = ("mi355x", "mi355x-disagg")  # what the catalog's rows run on


def entry(keys=(SEED,)) -> str:
    names = "".join(f"    - {k}\n" for k in keys)
    return (f"- config-keys:\n{names}  description:\n"
            '    - "Replay test: run the configuration again."\n  pr-link: XXX\n')


def repin(source: Path, sandbox: GitSandbox) -> str:
    """Serve the pinned repositories from the sandbox and re-pin the base to them; returns
    the new base commit of ``source``."""
    if not BUNDLE.is_file():
        shared_absent(f"upstream srt-slurm bundle not present ({BUNDLE.name})")
    sandbox.mirror("SemiAnalysisAI/srt-slurm", BUNDLE)
    atom_src = source.parent / "atom-source"
    atom_src.mkdir(exist_ok=True)
    _init(atom_src)
    atom = commit_files(atom_src, {"README.md": "ATOM stand-in for the workflow tests\n"},
                        "ATOM stand-in")
    sandbox.publish("ROCm/ATOM", atom_src, {"refs/heads/main": atom})
    files = {}
    found = subprocess.run(["git", "-C", str(source), "grep", "-l", "-e", FORK_PIN, "-e",
                            ATOM_PIN], capture_output=True, text=True, check=True)
    for rel in found.stdout.split():  # runtimes.yaml, the catalog, docs that quote them
        text = (source / rel).read_text()
        text = text.replace(FORK_PIN, UPSTREAM_PIN).replace(ATOM_PIN, atom)
        text = text.replace("ref: inferencex-runtime-81d46274f508", "ref: v1.0.68")
        files[rel] = text
    return commit_files(source, files, "test: pins the sandbox serves")


def scaled_down_thresholds(source: Path) -> dict[str, str]:
    """The sandbox's sweeps run on the local fleet at scale-down 40, so each eval asks 33
    questions; the thresholds file of a repository of such runs says how many it stages
    (the shipped one requires GSM8K's 1,319)."""
    rel = "configs/eval-thresholds.yaml"
    text = (source / rel).read_text()
    assert "gsm8k-min-questions: 1319" in text
    return {rel: text.replace("gsm8k-min-questions: 1319", "gsm8k-min-questions: 33")}


def _init(path: Path) -> None:
    if not (path / ".git").exists():
        subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
        for key, value in (("user.email", "test@example.invalid"), ("user.name", "test")):
            subprocess.run(["git", "-C", str(path), "config", key, value], check=True)


@dataclass
class SweepPR:
    pr: PullRequest
    event: dict
    base_sha: str
    head_sha: str


def open_pr(worktree: Path, sandbox: GitSandbox, work: Path, *,
            label="full-sweep-fail-fast", keys=(SEED,), number=7,
            base_files: Callable[[Path, GitSandbox], dict[str, str]] | None = None,
            labels: tuple[str, ...] = ()) -> SweepPR:
    """In a clone of ``worktree`` under ``work``: re-pin the base, append the entry on a head
    commit, publish both as PR #number (act runs from ``work/clone``), the event labeling it
    ``label`` (``labels``: the PR's labels before). ``base_files(source,
    sandbox)``, called once the sandbox serves the pinned repositories, gives more test data
    for the base commit ({path: text}), e.g. :func:`local_slurm_fleet`."""
    source, base, head = _entry_commits(worktree, sandbox, work, keys, base_files)
    pr = sandbox.pull_request(REPOSITORY, source, work / "clone", base_sha=base, head_sha=head,
                              number=number, head_ref="changelog-entry")
    event = pull_request_event(repository=REPOSITORY, number=number, head_sha=head,
                               base_sha=base, head_ref=pr.head_ref, label=label,
                               labels=labels, title=f"Re-run {' '.join(keys)}")
    return SweepPR(pr, event, base, head)


LOCAL_SLURM_TEMPLATE = ".replay/local-slurm-sglang-1p1d.yaml"  # in the base commit only


@dataclass(frozen=True)
class UpstreamRecipes:
    """What launch_setup.upstream_template reads from an installed srtctl (``upstream_recipe``,
    ``model``), read here from the sandbox's srt-slurm at the pin: the workflow's launcher
    installs srtctl itself."""

    bare: Path
    commit: str
    model: Path

    def upstream_recipe(self, rel: str) -> dict:
        text = subprocess.run(["git", "--git-dir", str(self.bare), "show",
                               f"{self.commit}:recipes/{rel}"], capture_output=True, text=True,
                              check=True).stdout
        return yaml.safe_load(text)


def local_slurm_fleet(work: Path, python312: Path | None, *, time_limit: str = "00:15:00"
                      ) -> Callable[[Path, GitSandbox], dict[str, str]]:
    """``open_pr(base_files=...)`` for a run whose benchmark jobs go to the `local-slurm`
    fleet with upstream srtctl: configs/fleets.yaml's local-slurm entry as the Slurm launch
    tests have it (launch_setup.write_fleets: CPython 3.12 first on the job's PATH, or the uv
    double) plus a ``template``, the upstream SGLang 1P1D template those tests launch
    (upstream srt-slurm has no ATOM backend), committed at LOCAL_SLURM_TEMPLATE with a local
    model folder under ``work`` and the row's max-model-len as the workers' context length.
    Every 1P1D row renders with it, the multi-node canary among them; a 2P1D row does not
    fit it (the launch says so)."""

    def files(source: Path, sandbox: GitSandbox) -> dict[str, str]:
        model = work / "model"
        model.mkdir(parents=True, exist_ok=True)
        (model / "config.json").write_text(json.dumps({"model_type": "infersweep-sim"}))
        recipes = UpstreamRecipes(sandbox.bare("SemiAnalysisAI/srt-slurm"), UPSTREAM_PIN, model)
        template = launch_setup.upstream_template(recipes, 1, time_limit=time_limit)
        for role in ("prefill", "decode"):  # the launch tests' rows are 64/16 tokens, ours 8k/1k
            template["backend"]["sglang_config"][role]["context-length"] = \
                "{{ row.max-model-len }}"
        # scaled down like the local fleet: the point still crosses srtctl, sbatch, the
        # job's engines and our client, in seconds instead of minutes of 8k prompts
        fleets = launch_setup.write_fleets(work / "fleets.yaml", python312,
                                           template=LOCAL_SLURM_TEMPLATE, **{"scale-down": 10})
        return {"configs/fleets.yaml": fleets.read_text(),
                LOCAL_SLURM_TEMPLATE: yaml.safe_dump(template, sort_keys=False)}

    return files


# -- the same commits as a push to main, or main for a manual dispatch ----------------------

@dataclass
class SweepPush:
    """main in the sandbox at ``head_sha`` (act runs from ``clone``, on main at the head) and
    the event: a push of the changelog entry (``before`` the base) or a manual dispatch."""

    clone: Path
    event: dict
    base_sha: str
    head_sha: str


def _entry_commits(worktree: Path, sandbox: GitSandbox, work: Path, keys,
                   base_files=None) -> tuple[Path, str, str]:
    """In a clone of ``worktree`` under ``work``: (the clone, the re-pinned base with any
    ``base_files``, the head that appends the entry)."""
    source = work / "source"
    subprocess.run(["git", "clone", "-q", str(worktree), str(source)], check=True)
    _init(source)
    repin(source, sandbox)
    base = commit_files(source, scaled_down_thresholds(source),
                        "test: stage the local fleet's scaled-down evals")
    if base_files is not None:
        base = commit_files(source, base_files(source, sandbox), "test: data for the run")
    text = (source / "perf-changelog.yaml").read_text()
    head = commit_files(source, {"perf-changelog.yaml": text.rstrip("\n") + "\n\n" + entry(keys)},
                        f"perf-changelog: {' '.join(keys)} again")
    return source, base, head


def _main_at(sandbox: GitSandbox, source: Path, sha: str, work: Path) -> Path:
    """main at ``sha`` in the sandbox and a clone on main there (how `infersweep replay`
    lays out a push or a dispatch, infersweep/replay/commands.py)."""
    sandbox.publish(REPOSITORY, source, {"refs/heads/main": sha})
    sandbox.set_default_branch(REPOSITORY, "main")
    return sandbox.clone(REPOSITORY, work / "clone", rev=sha, branch="main")


def push_main(worktree: Path, sandbox: GitSandbox, work: Path, *, keys=(SEED,)) -> SweepPush:
    """The push that merges the changelog entry: main moves from the re-pinned base to the
    head that appends the entry (``before`` = base, ``after`` = head)."""
    from infersweep.replay.events import push_event

    source, base, head = _entry_commits(worktree, sandbox, work, keys)
    clone = _main_at(sandbox, source, head, work)
    event = push_event(repository=REPOSITORY, after=head, before=base,
                       message=f"perf-changelog: {' '.join(keys)} again")
    return SweepPush(clone, event, base, head)


def dispatch_main(worktree: Path, sandbox: GitSandbox, work: Path,
                  inputs: dict[str, str]) -> SweepPush:
    """A manual run on main at the re-pinned base (no changelog entry: the inputs choose)."""
    from infersweep.replay.events import workflow_dispatch_event

    source = work / "source"
    subprocess.run(["git", "clone", "-q", str(worktree), str(source)], check=True)
    _init(source)
    base = repin(source, sandbox)
    clone = _main_at(sandbox, source, base, work)
    event = workflow_dispatch_event(repository=REPOSITORY, inputs=inputs)
    return SweepPush(clone, event, base, base)


# -- derived workflows: act's limits worked around without touching the real files ----------
# act 0.2.89 ends the whole run when a *called* workflow's job fails (the caller job returns
# the nested run's error, and the stage pipeline stops at the first error): no later job
# starts, `if: always()` included. A failing plain job does not end the run (act reports it
# at the end). Two mechanical rewrites of the repository's own workflow text get the jobs
# after a failure run: a one-job copy (`job_alone`) and a call inlined into a plain job
# (`inline_calls`).

_EXPR = re.compile(r"\$\{\{(.*?)\}\}", re.S)
_INPUT = re.compile(r"\binputs\.([A-Za-z_][\w-]*)")
_NEEDS_OUTPUT = re.compile(r"\bneeds\.([A-Za-z_][\w-]*)\.outputs\.([A-Za-z_][\w-]*)")


def load_workflow(path: Path) -> dict:
    """A workflow file as data, its ``on`` key kept as the string ``on`` (YAML 1.1 reads a
    bare ``on`` as true)."""
    import yaml

    doc = yaml.safe_load(Path(path).read_text())
    if True in doc:
        doc["on"] = doc.pop(True)
    return doc


def dump_workflow(doc: dict, dest: Path) -> Path:
    import yaml

    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(yaml.safe_dump(doc, sort_keys=False, width=10_000))
    return dest


def _map_strings(node, fn):
    if isinstance(node, str):
        return fn(node)
    if isinstance(node, list):
        return [_map_strings(x, fn) for x in node]
    if isinstance(node, dict):
        return {k: _map_strings(v, fn) for k, v in node.items()}
    return node


def _in_expressions(text: str, pattern: re.Pattern, repl) -> str:
    """``pattern`` replaced by ``repl`` inside the ``${{ }}`` of ``text`` only."""
    return _EXPR.sub(lambda m: "${{" + pattern.sub(repl, m.group(1)) + "}}", text)


def _literal(value) -> str:
    return "'" + str(value).replace("'", "''") + "'"


def job_alone(workflow: Path, job_id: str, dest: Path, *,
              needs_outputs: dict[str, dict[str, str]]) -> Path:
    """A copy of ``workflow`` holding only ``job_id``, without its ``needs`` and ``if`` (act
    runs a job given alone with ``needs.*`` empty, so its ``if`` on them is false), each
    ``needs.<job>.outputs.<name>`` replaced by the value the earlier run gave it."""
    doc = load_workflow(workflow)
    job = dict(doc["jobs"][job_id])
    job.pop("needs", None)
    job.pop("if", None)

    def value(m: re.Match) -> str:
        try:
            return _literal(needs_outputs[m.group(1)][m.group(2)])
        except KeyError:
            raise KeyError(f"no value given for needs.{m.group(1)}.outputs.{m.group(2)} of "
                           f"job {job_id}") from None

    job = _map_strings(job, lambda s: _in_expressions(s, _NEEDS_OUTPUT, value))
    left = [s for s in _strings(job) if "needs." in s]
    assert not left, f"job {job_id} still reads needs.*: {left}"
    doc["jobs"] = {job_id: job}
    doc.pop("concurrency", None)
    return dump_workflow(doc, dest)


def _strings(node):
    if isinstance(node, str):
        yield node
    elif isinstance(node, list):
        for x in node:
            yield from _strings(x)
    elif isinstance(node, dict):
        for x in node.values():
            yield from _strings(x)


def inline_calls(workflow: Path, repo_dir: Path, job_ids, dest: Path) -> Path:
    """A copy of ``workflow`` where each job of ``job_ids`` that calls a local workflow
    (``uses: ./.github/workflows/X.yml`` with one job) is that job instead: its ``needs``,
    ``if``, ``strategy`` and ``permissions`` kept, the called job's body taken with every
    ``inputs.<name>`` read as the caller's ``with:`` expression (or the input's default).
    The other jobs are left as they are."""
    doc = load_workflow(workflow)
    for job_id in job_ids:
        doc["jobs"][job_id] = _inlined(job_id, doc["jobs"][job_id], Path(repo_dir))
    return dump_workflow(doc, dest)


def _inlined(job_id: str, caller: dict, repo_dir: Path) -> dict:
    uses = caller["uses"]
    assert uses.startswith("./.github/workflows/"), uses
    called = load_workflow(repo_dir / uses)
    [(_, body)] = called["jobs"].items()
    assert not {"needs", "if", "strategy", "uses"} & set(body), sorted(body)
    assert "defaults" not in called, "the called workflow's defaults are not inlined"
    inputs = (called["on"]["workflow_call"] or {}).get("inputs") or {}
    given = caller.get("with") or {}
    unknown = set(given) - set(inputs)
    assert not unknown, f"{job_id} passes inputs {sorted(unknown)} {uses} does not take"

    def expression(m: re.Match) -> str:
        name = m.group(1)
        if name in given:
            text = str(given[name])
            whole = _EXPR.fullmatch(text.strip())
            return f"({whole.group(1).strip()})" if whole else _literal(text)
        if "default" in inputs[name]:
            return _literal(inputs[name]["default"])
        raise KeyError(f"{job_id}: required input {name} of {uses} not given")

    body = _map_strings(body, lambda s: _in_expressions(s, _INPUT, expression))
    left = [s for s in _strings(body) if "${{" in s and _INPUT.search(s)]
    assert not left, f"inputs left in the inlined {job_id}: {left}"
    job = {k: v for k, v in caller.items() if k not in ("uses", "with", "secrets")}
    for key, value in body.items():
        if key == "permissions" and "permissions" in job:
            continue  # the caller's bound the called job's
        if key == "env" and called.get("env"):
            value = {**called["env"], **value}
        job[key] = value
    return job


_STEP_OUTPUT = re.compile(r"^\$\{\{\s*steps\.([\w-]+)\.outputs\.([\w-]+)\s*\}\}$")


def job_outputs(log, workflow: Path, job_id: str) -> dict[str, str]:
    """``needs.<job_id>.outputs`` as a run gave them: the job's ``outputs:`` in ``workflow``
    (each ``${{ steps.<id>.outputs.<name> }}``) read from its steps' outputs in act's log."""
    declared = load_workflow(workflow)["jobs"][job_id].get("outputs") or {}
    steps = log.job(job_id).outputs
    values = {}
    for name, expr in declared.items():
        m = _STEP_OUTPUT.match(str(expr).strip())
        assert m, f"{job_id}.outputs.{name} is not a step output: {expr!r}"
        values[name] = steps.get(m.group(1), {}).get(m.group(2), "")
    return values
