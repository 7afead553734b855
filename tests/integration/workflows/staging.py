"""Feeding a run executed by act to `/stage-results`: its artifacts, as the run uploaded
them, served by the GitHub API double for the pull request, and stage-results.yml executed
by act on an ``issue_comment`` event against that double.

act's artifact server keeps each artifact as the zip GitHub would hand out
(``<run id>/<name>/<name>.zip``), so the double serves exactly those bytes.
"""

from __future__ import annotations

from pathlib import Path

from tests.ghdouble import GitHubDouble
from tests.integration.workflows.conftest import run_in_sandbox

STAGE_WORKFLOW = ".github/workflows/stage-results.yml"
ACT_RUN_ID = 1  # act numbers every run 1 (GITHUB_RUN_ID)
TOKEN = "act-local-token"  # the token act hands the jobs (github.token)
LABELED_AT = "2026-12-01T09:00:00Z"
CREATED = "2026-12-01T10:00:00Z"
COMMENTER = "maya"


def artifacts_of(run) -> dict[str, bytes]:
    """name -> zip bytes of every artifact the run uploaded."""
    return {folder.name: (folder / f"{folder.name}.zip").read_bytes()
            for folder in run.artifacts() if (folder / f"{folder.name}.zip").is_file()}


def serve_run(gh: GitHubDouble, run, pr, *,
              labels: tuple[str, ...] = ("full-sweep-fail-fast",)) -> None:
    """The pull request (its commits, its labels' timeline) and the run with its artifacts."""
    gh.add_pull(pr.pr.number, head_sha=pr.head_sha, commits=[pr.base_sha, pr.head_sha],
                labels=labels, label_events=[("labeled", name, LABELED_AT) for name in labels])
    gh.state.permissions.update({COMMENTER: "maintain"})
    gh.add_run(ACT_RUN_ID, head_sha=pr.head_sha, created_at=CREATED,
               pr_numbers=(pr.pr.number,))
    for name, data in artifacts_of(run).items():
        gh.add_artifact(ACT_RUN_ID, name, data)


def run_stage_results(gh: GitHubDouble, sandbox, pr, work: Path, *, act, trees, toolcache,
                      db_url: str, body: str = f"/stage-results {ACT_RUN_ID}"):
    """stage-results.yml, executed by act from a clone of the default branch, on a comment
    ``body`` by a maintainer; its store is ``db_url``."""
    clone = work / "main-clone"
    sandbox.clone(pr.pr.repository, clone, rev=pr.base_sha, branch="main")
    event = gh.event(pr.pr.number, COMMENTER, body)
    return run_in_sandbox(sandbox, STAGE_WORKFLOW, "issue_comment", event, repo_dir=clone,
                          work=work, act=act, trees=trees, toolcache=toolcache, name="stage",
                          env={"GITHUB_API_URL": gh.url},
                          secrets={"INFERSWEEP_DB_URL": db_url}, timeout=900)
