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

import subprocess
from dataclasses import dataclass
from pathlib import Path

from infersweep.replay.events import pull_request_event
from infersweep.replay.sandbox import GitSandbox, PullRequest, commit_files
from tests.conftest import shared_absent
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
            label="full-sweep-fail-fast", keys=(SEED,), number=7) -> SweepPR:
    """In a clone of ``worktree`` under ``work``: re-pin the base, append the entry on a head
    commit, publish both as PR #number (act runs from ``work/clone``)."""
    source = work / "source"
    subprocess.run(["git", "clone", "-q", str(worktree), str(source)], check=True)
    _init(source)
    base = repin(source, sandbox)
    text = (source / "perf-changelog.yaml").read_text()
    head = commit_files(source, {"perf-changelog.yaml": text.rstrip("\n") + "\n\n" + entry(keys)},
                        f"perf-changelog: {' '.join(keys)} again")
    pr = sandbox.pull_request(REPOSITORY, source, work / "clone", base_sha=base, head_sha=head,
                              number=number, head_ref="changelog-entry")
    event = pull_request_event(repository=REPOSITORY, number=number, head_sha=head,
                               base_sha=base, head_ref=pr.head_ref, label=label,
                               title=f"Re-run {' '.join(keys)}")
    return SweepPR(pr, event, base, head)
