"""Who may stage, and which pull requests' sweeps may be staged.

* The commenter's collaborator permission (not ``author_association``, which says nothing
  about write access) must be write, maintain or admin.
* The pull request must carry a full-sweep label: a primary label that the policy module
  marks stageable (:data:`infersweep.policy.labels.PRIMARIES`), and none of the modifiers
  it marks not stageable. The label names are the policy module's; none is written here.
* Pull requests from forks are refused. The sweep policy never runs a fork's pull request,
  so there is no run to stage; and a ``pull_request`` run of a fork's head executes the
  workflow file of that head, so its artifacts say only what the fork's author wrote. The
  staging job itself stays safe either way (it checks out the default branch, runs nothing
  from the pull request and reads artifacts only as data, through the size-limited
  extractor and the schemas), but staging must not publish numbers nobody trusted measured.
"""

from __future__ import annotations

from collections.abc import Iterable

from infersweep.policy import labels as policy_labels

WRITE_PERMISSIONS = ("admin", "maintain", "write")


def stageable_labels() -> tuple[str, ...]:
    """The full-sweep labels, from the policy module."""
    return tuple(p.name for p in policy_labels.PRIMARIES.values() if p.stageable)


def may_stage(permission: str) -> bool:
    return permission in WRITE_PERMISSIONS


def label_problem(labels: Iterable[str]) -> str | None:
    """Why a set of labels does not make a sweep stageable (None: it does)."""
    present = set(labels)
    full = [name for name in stageable_labels() if name in present]
    if not full:
        return ("carries no full-sweep label (one of "
                + ", ".join(f"`{n}`" for n in stageable_labels()) + ")")
    blocking = sorted(present & policy_labels.NOT_STAGEABLE_MODIFIERS)
    if blocking:
        return ("carries " + ", ".join(f"`{n}`" for n in blocking)
                + ", which makes a sweep that is not stageable")
    return None


def label_todo() -> str:
    full = ", ".join(f"`{n}`" for n in stageable_labels())
    blocking = " or ".join(f"`{n}`" for n in sorted(policy_labels.NOT_STAGEABLE_MODIFIERS))
    return (f"Label it with one of {full} (and without {blocking}), wait for the sweep that "
            "starts, then comment `/stage-results` again.")


def fork_of(pr: dict) -> str | None:
    """The fork a pull request comes from (None: the same repository)."""
    head_repo = (pr.get("head") or {}).get("repo")
    base_repo = (pr.get("base") or {}).get("repo") or {}
    if not isinstance(head_repo, dict):
        return "a deleted repository"
    if head_repo.get("full_name") != base_repo.get("full_name"):
        return str(head_repo.get("full_name"))
    return None
