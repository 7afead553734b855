"""Which workflow run may be staged for a pull request.

A run qualifies when it is a ``pull_request`` run of ``.github/workflows/run-sweep.yml`` in
this repository, has completed, its head commit is one of the pull request's commits (the
commit list, not ``run.pull_requests``, which GitHub recomputes), and a full-sweep label was
on the pull request when the run was created: the labels at that moment are rebuilt by
replaying the timeline's ``labeled``/``unlabeled`` events up to ``run.created_at``. The run's
conclusion does not matter; the staging gates decide on its artifacts. The run object is its
latest attempt (``run_attempt``), and that is the attempt staged.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from infersweep.stage import authorize

WORKFLOW_FILE = "run-sweep.yml"
WORKFLOW_PATH = ".github/workflows/" + WORKFLOW_FILE
EVENT = "pull_request"


def when(stamp: str) -> datetime:
    """A GitHub timestamp (ISO 8601, ``Z``) as an aware datetime."""
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def labels_at(timeline: list[dict], moment: str) -> set[str]:
    """The labels on the pull request at ``moment``, from its label events in time order
    (a pull request starts with none; ties keep the timeline's order)."""
    cutoff = when(moment)
    events = [e for e in timeline if isinstance(e, dict) and e.get("event") in ("labeled",
              "unlabeled") and isinstance(e.get("label"), dict) and e.get("created_at")]
    events.sort(key=lambda e: when(e["created_at"]))  # stable: ties keep their order
    present: set[str] = set()
    for e in events:
        if when(e["created_at"]) > cutoff:
            break
        name = str(e["label"].get("name"))
        if e["event"] == "labeled":
            present.add(name)
        else:
            present.discard(name)
    return present


@dataclass(frozen=True)
class Candidate:
    run: dict
    labels: tuple[str, ...]    # the pull request's labels when the run was created

    @property
    def run_id(self) -> int:
        return int(self.run["id"])

    @property
    def attempt(self) -> int:
        return int(self.run.get("run_attempt") or 1)

    @property
    def url(self) -> str:
        return str(self.run.get("html_url") or "")


def problems(run: dict, *, repository: str, commits: set[str], timeline: list[dict]) -> list[str]:
    """Why ``run`` cannot be staged for this pull request (empty: it can)."""
    out = []
    path = run.get("path") or ""
    if path.split("@", 1)[0] != WORKFLOW_PATH:
        out.append(f"it is a run of {path or 'an unknown workflow'}, not {WORKFLOW_PATH}")
    if run.get("event") != EVENT:
        out.append(f"it was started by a {run.get('event')} event, not {EVENT}")
    repo = (run.get("repository") or {}).get("full_name")
    if repo and repo != repository:
        out.append(f"it ran in {repo}, not {repository}")
    head = run.get("head_sha")
    if head not in commits:
        out.append(f"its head commit {str(head)[:12]} is not a commit of this pull request")
    if run.get("status") != "completed":
        out.append(f"it has not completed (status {run.get('status')})")
    created = run.get("created_at")
    if not created:
        out.append("it has no creation time")
    else:
        why = authorize.label_problem(labels_at(timeline, created))
        if why:
            out.append(f"when it was created the pull request {why}")
    return out


def candidate(run: dict, timeline: list[dict]) -> Candidate:
    return Candidate(run, tuple(sorted(labels_at(timeline, run["created_at"]))))
