"""GitHub event + PR labels -> one sweep decision.

The decision is a pure function of :class:`EventFacts`; :func:`facts_from_event` turns a
GitHub webhook payload into facts. Nothing here reads the environment or the network, so
every branch is covered by table-driven tests; :mod:`infersweep.policy.commands` does the I/O.

Order of the rules (the first that applies gives the reason):

pull_request
  1. an action other than opened / reopened / synchronize / ready_for_review / labeled /
     unlabeled (e.g. edited, closed) -> skip
  2. a labeled/unlabeled event for a label that does not change the sweep -> skip
     (unrelated and scheduling-only labels never restart a running sweep)
  3. draft -> skip (``ready_for_review`` starts it later)
  4. more than one primary label -> error (exit 1)
  5. head branch in a fork -> skip
  6. no primary label -> skip (modifiers alone do nothing)
  7. ``[skip-sweep]`` in the head commit message -> skip
  8. otherwise run, as the primary label and modifiers say
push
  to the default branch -> always run the full changelog matrix (no canary, no fail-fast,
  default evals; ``[skip-sweep]`` is ignored); to any other branch -> skip
workflow_dispatch
  a manual one-off: the ``sweep-label`` input (default: the recommended primary) and the
  ``modifiers`` input act like PR labels; never stageable
anything else -> skip
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

from infersweep.diagnostics import Diagnostic, InputError, did_you_mean
from infersweep.gitexec import FULL_SHA, is_revision
from infersweep.policy import labels as L

PR_EVENTS = ("pull_request",)
# Every event name GitHub Actions sets $GITHUB_EVENT_NAME to: any other --event-name is a typo
# (``pull-request``), refused at once instead of skipping as "an event that does not run".
GITHUB_EVENTS = frozenset({
    "branch_protection_rule", "check_run", "check_suite", "create", "delete", "deployment",
    "deployment_status", "discussion", "discussion_comment", "fork", "gollum", "issue_comment",
    "issues", "label", "merge_group", "milestone", "page_build", "project", "project_card",
    "project_column", "public", "pull_request", "pull_request_review",
    "pull_request_review_comment", "pull_request_target", "push", "registry_package",
    "release", "repository_dispatch", "schedule", "status", "watch", "workflow_call",
    "workflow_dispatch", "workflow_run"})
SWEEP_EVENTS = ("pull_request", "push", "workflow_dispatch")
PR_ACTIONS = ("opened", "reopened", "synchronize", "ready_for_review", "labeled", "unlabeled")
LABEL_ACTIONS = ("labeled", "unlabeled")
ZERO_SHA = "0" * 40


@dataclass(frozen=True)
class EventFacts:
    """What the decision depends on, extracted from one GitHub event."""

    event: str
    action: str = ""
    labels: tuple[str, ...] = ()  # labels on the PR after the event
    acted_label: str = ""  # the label added/removed by a labeled/unlabeled event
    draft: bool = False
    fork: bool = False
    head_repo: str = ""
    repository: str = ""
    pr_number: int | None = None
    head_sha: str = ""
    head_ref: str = ""
    base_ref: str = ""
    base_sha: str = ""
    ref: str = ""  # pushes and dispatches: refs/heads/<branch>
    default_branch: str = "main"
    head_commit_message: str | None = None  # None: not known
    dispatch_inputs: dict[str, Any] = field(default_factory=dict)
    run_id: str = ""


@dataclass
class Decision:
    """The one object a workflow consumes. Keys (kebab-case) are the GITHUB_OUTPUT names."""

    decision: str  # run | skip | error
    run: bool
    reason: str
    event: str
    action: str = ""
    mode: str = L.Mode.NONE.value  # full | trimmed | none
    trim_conc: bool = False
    canary: bool = False
    fail_fast: bool = False
    all_evals: bool = False
    evals_only: bool = False
    agentx_fast: bool = False
    skip_queue: bool = False
    stageable: bool = False
    check_changelog: bool = False
    primary_label: str = ""
    labels: list[str] = field(default_factory=list)
    pr_number: int | None = None
    head_sha: str = ""
    base_ref: str = ""
    base_sha: str = ""
    diff_base: str = ""
    diff_head: str = ""
    fork: bool = False
    draft: bool = False
    skip_sweep_marker: bool = False
    head_commit_message_checked: bool = False
    supersedes_active: bool = False
    concurrency_group: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {k.replace("_", "-"): v for k, v in asdict(self).items()}


FIELDS: tuple[str, ...] = tuple(k.replace("_", "-") for k in Decision.__dataclass_fields__)


# -- event payload -> facts -----------------------------------------------------------------

def _get(obj: Any, *path: str, default: Any = None) -> Any:
    for part in path:
        if not isinstance(obj, dict) or part not in obj:
            return default
        obj = obj[part]
    return default if obj is None else obj


_KIND = {str: "a string", bool: "true or false", int: "an integer", dict: "an object",
         list: "a list"}


def _kind_of(value: Any) -> str:
    if value is None:
        return "null"
    for t in (bool, int, str, dict, list):  # bool before int: True is an int in Python
        if isinstance(value, t):
            return _KIND[t]
    return type(value).__name__


class _Payload:
    """Typed reads from a webhook payload: a field of the wrong type is a located error, not
    a crash later or a silent wrong decision (``"draft": "false"`` is not false)."""

    def __init__(self, payload: dict[str, Any], path: str):
        self.payload, self.path = payload, path
        self.problems: list[Diagnostic] = []

    def get(self, *keys: str, kind: type | tuple[type, ...] = str, default: Any = None) -> Any:
        value = _get(self.payload, *keys, default=None)
        if value is None:
            return default
        kinds = kind if isinstance(kind, tuple) else (kind,)
        wrong = not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds)
        if wrong:
            self.fail(".".join(keys), f"must be {' or '.join(_KIND[k] for k in kinds)}, not "
                                      f"{_kind_of(value)} ({str(value)[:40]!r})")
            return default
        return value

    def sha(self, *keys: str) -> str:
        value = self.get(*keys, default="")
        if value and FULL_SHA.fullmatch(value) is None:
            self.fail(".".join(keys), f"{value[:60]!r} is not a full commit SHA (40 lowercase "
                                      "hexadecimal characters)")
            return ""
        return value

    def fail(self, field: str, message: str) -> None:
        self.problems.append(Diagnostic(self.path, 0, 0, f"event field '{field}' {message}",
                                        "pass the payload GitHub wrote to $GITHUB_EVENT_PATH "
                                        "(and the matching --event-name)", "policy-event"))

    def raise_problems(self) -> None:
        if self.problems:
            raise InputError(self.problems)


def _branch(ref: str) -> str:
    return ref[len("refs/heads/"):] if ref.startswith("refs/heads/") else ref


def facts_from_event(event_name: str, payload: dict[str, Any], *,
                     head_commit_message: str | None = None,
                     repository: str = "", run_id: str = "", sha: str = "",
                     path: str = "<event>") -> EventFacts:
    """Facts from a webhook payload (``$GITHUB_EVENT_PATH``) and ``$GITHUB_EVENT_NAME``.

    ``head_commit_message`` overrides the payload (pull_request payloads do not carry it);
    ``repository``/``sha`` are fallbacks for ``$GITHUB_REPOSITORY``/``$GITHUB_SHA``.
    """
    if not isinstance(payload, dict):
        raise InputError(Diagnostic(path, 0, 0, "the event payload is not a JSON object",
                                    "pass the file GitHub writes to $GITHUB_EVENT_PATH",
                                    "policy-event"))
    ev = _Payload(payload, path)
    repo = ev.get("repository", "full_name", default="") or repository
    default_branch = ev.get("repository", "default_branch", default="") or "main"
    common = {"event": event_name, "action": ev.get("action", default=""),
              "repository": repo, "default_branch": default_branch, "run_id": run_id}

    if event_name in PR_EVENTS:
        pr = _get(payload, "pull_request")
        if not isinstance(pr, dict):
            raise InputError(Diagnostic(path, 0, 0,
                                        f"a {event_name} event without a 'pull_request' object",
                                        "check --event-name matches the payload",
                                        "policy-event"))
        names = []
        for i, lab in enumerate(ev.get("pull_request", "labels", kind=list, default=[])):
            name = _get(lab, "name") if isinstance(lab, dict) else None
            if not isinstance(name, str):
                ev.fail(f"pull_request.labels[{i}]", "must be an object with a string 'name', "
                                                     f"not {_kind_of(lab)}")
                continue
            names.append(name)
        acted = ev.get("label", "name", default="")
        # The payload lists the labels after the event; make that true even if it lags.
        if common["action"] == "labeled" and acted and acted not in names:
            names.append(acted)
        if common["action"] == "unlabeled" and acted:
            names = [n for n in names if n != acted]
        head_repo = ev.get("pull_request", "head", "repo", "full_name", default="")
        number = ev.get("pull_request", "number", kind=int) or ev.get("number", kind=int)
        if number is not None and number < 1:
            ev.fail("pull_request.number", f"must be a positive integer, not {number}")
            number = None
        facts = EventFacts(
            **common,
            labels=tuple(dict.fromkeys(n for n in names if n)),
            acted_label=acted,
            draft=ev.get("pull_request", "draft", kind=bool, default=False),
            # A deleted fork has head.repo null: treat it as a fork (never trusted).
            fork=(not head_repo) or (bool(repo) and head_repo != repo),
            head_repo=head_repo,
            pr_number=number,
            head_sha=ev.sha("pull_request", "head", "sha"),
            head_ref=ev.get("pull_request", "head", "ref", default=""),
            base_ref=_ref(ev, "pull_request", "base", "ref"),
            base_sha=ev.sha("pull_request", "base", "sha"),
            head_commit_message=head_commit_message,
        )
        ev.raise_problems()
        return facts
    if event_name == "push":
        message = head_commit_message
        if message is None:
            message = ev.get("head_commit", "message", default=None)
        facts = EventFacts(
            **common,
            ref=_ref(ev, "ref"),
            head_sha=ev.sha("after") or _checked_sha(sha, path),
            base_sha=ev.sha("before"),
            head_commit_message=message,
        )
        ev.raise_problems()
        return facts
    if event_name == "workflow_dispatch":
        inputs = ev.get("inputs", kind=dict, default={})
        facts = EventFacts(
            **common,
            ref=_ref(ev, "ref"),
            head_sha=_checked_sha(sha, path),
            dispatch_inputs=dict(inputs),
            head_commit_message=head_commit_message,
        )
        ev.raise_problems()
        return facts
    ev.raise_problems()
    return EventFacts(**common, head_sha=_checked_sha(sha, path),
                      head_commit_message=head_commit_message)


def _ref(ev: _Payload, *keys: str) -> str:
    """A ref from the payload that is safe to hand to git (``origin/<base>`` is compared)."""
    value = ev.get(*keys, default="")
    if value and not is_revision(value):
        ev.fail(".".join(keys), f"{value[:60]!r} is not a git ref name")
        return ""
    return value


def _checked_sha(sha: str, path: str) -> str:
    """``--sha`` / ``$GITHUB_SHA``: empty or a full SHA."""
    if sha and FULL_SHA.fullmatch(sha) is None:
        raise InputError(Diagnostic("--sha", 0, 0, f"{sha[:60]!r} is not a full commit SHA",
                                    "pass $GITHUB_SHA (40 lowercase hexadecimal characters)",
                                    "policy-event"))
    return sha


# -- facts -> decision ------------------------------------------------------------------------

def near_miss(label: str) -> str:
    """The sweep label an unrecognised label was probably meant to be, or ''."""
    if label in L.RECOGNIZED_LABELS:
        return ""
    hint = did_you_mean(label, sorted(L.SWEEP_LABELS))
    return hint.split("'")[1] if hint else ""


def _near_misses(labels) -> str:
    """'; label 'x' is not a sweep label: did you mean 'y'?' for each near-miss, or ''."""
    notes = [f"label '{lab}' is not a sweep label: did you mean '{near}'?"
             for lab in labels if (near := near_miss(lab))]
    return "".join(f"; {n}" for n in notes)


def _has_marker(message: str | None) -> bool:
    return message is not None and L.SKIP_SWEEP_MARKER.lower() in message.lower()


def _apply_labels(d: Decision, primary: str, present: set[str]) -> None:
    p = L.PRIMARIES[primary]
    d.primary_label = primary
    d.mode = p.mode.value
    d.trim_conc = p.mode is L.Mode.TRIMMED
    d.canary = p.canary
    d.fail_fast = p.fail_fast
    d.all_evals = L.ALL_EVALS in present
    d.evals_only = L.EVALS_ONLY in present
    d.agentx_fast = L.AGENTX_FAST in present
    d.skip_queue = L.SKIP_QUEUE in present
    d.stageable = p.stageable and not (present & L.NOT_STAGEABLE_MODIFIERS)


def _describe(d: Decision) -> str:
    bits = [f"{d.mode} matrix", "canary first" if d.canary else "no canary",
            "fail-fast" if d.fail_fast else "no fail-fast"]
    if d.all_evals:
        bits.append("evals on every config")
    if d.evals_only:
        bits.append("evals only")
    if d.agentx_fast:
        bits.append("agentx-fast")
    return ", ".join(bits)


def _skip(d: Decision, reason: str) -> Decision:
    d.decision, d.run, d.reason = "skip", False, reason
    return d


def _error(d: Decision, reason: str) -> Decision:
    d.decision, d.run, d.reason = "error", False, reason
    return d


def _run(d: Decision, reason: str) -> Decision:
    d.decision, d.run, d.reason = "run", True, reason
    return d


def _split_words(value: Any) -> list[str]:
    if isinstance(value, list):
        return [str(v).strip() for v in value if str(v).strip()]
    return [w for w in re.split(r"[\s,]+", str(value or "")) if w]


def decide(f: EventFacts) -> Decision:
    """The sweep decision for one event (pure; see the module docstring for the rules)."""
    present = set(f.labels)
    d = Decision(decision="skip", run=False, reason="", event=f.event, action=f.action,
                 labels=sorted(present & L.RECOGNIZED_LABELS), pr_number=f.pr_number,
                 head_sha=f.head_sha, base_ref=f.base_ref, base_sha=f.base_sha,
                 fork=f.fork, draft=f.draft,
                 skip_sweep_marker=_has_marker(f.head_commit_message),
                 head_commit_message_checked=f.head_commit_message is not None)
    run_suffix = f.run_id or "noop"

    if f.event in PR_EVENTS:
        d.diff_base = f"origin/{f.base_ref}" if f.base_ref else f.base_sha
        d.diff_head = f.head_sha
        active_group = f"sweep-pr-{f.pr_number}"
        relevant = f.action in PR_ACTIONS and not (
            f.action in LABEL_ACTIONS and f.acted_label not in L.SWEEP_LABELS)
        d.supersedes_active = relevant
        d.concurrency_group = active_group if relevant else f"{active_group}-{run_suffix}"
        d.check_changelog = relevant and not f.draft

        if f.action not in PR_ACTIONS:
            return _skip(d, f"pull_request '{f.action}' does not start a sweep "
                            f"(only {', '.join(PR_ACTIONS)} do)")
        if not relevant:
            near = near_miss(f.acted_label)
            what = ("only affects scheduling priority" if f.acted_label in L.SCHEDULING_LABELS
                    else f"is not a sweep label (did you mean '{near}'?)" if near
                    else "is not a sweep label")
            return _skip(d, f"label '{f.acted_label}' {what}; a running sweep is left alone")
        if f.draft:
            return _skip(d, "draft PR; marking it ready for review starts the sweep")
        primaries = [p for p in L.PRIMARY_LABELS if p in present]
        if len(primaries) > 1:
            return _error(d, f"PR has {len(primaries)} primary sweep labels "
                             f"({', '.join(sorted(primaries))}); pick exactly one — "
                             f"'{L.RECOMMENDED_PRIMARY}' is recommended")
        if f.fork:
            return _skip(d, f"PR head is in a fork ({f.head_repo or 'deleted repository'}); "
                            "fork PRs never run on the self-hosted GPU runners from this "
                            "workflow")
        if not primaries:
            if f.action == "unlabeled" and f.acted_label in L.PRIMARIES:
                return _skip(d, f"primary label '{f.acted_label}' removed; the running sweep "
                                "is cancelled")
            modifiers = sorted(present & set(L.MODIFIER_LABELS))
            extra = (f" (modifier{'s' if len(modifiers) > 1 else ''} "
                     f"{', '.join(modifiers)} need{'' if len(modifiers) > 1 else 's'} "
                     "a primary label)") if modifiers else ""
            return _skip(d, f"no primary sweep label{extra}{_near_misses(f.labels)}; add "
                            f"'{L.RECOMMENDED_PRIMARY}' (recommended) to run the sweep")
        if d.skip_sweep_marker:
            return _skip(d, f"head commit message contains {L.SKIP_SWEEP_MARKER}")
        _apply_labels(d, primaries[0], present)
        return _run(d, f"'{primaries[0]}' on PR #{f.pr_number}: {_describe(d)}"
                       f"{_near_misses(f.labels)}")

    if f.event == "push":
        branch = _branch(f.ref)
        d.base_ref = branch
        d.diff_base = "" if f.base_sha in ("", ZERO_SHA) else f.base_sha
        d.diff_head = f.head_sha
        d.concurrency_group = f"sweep-push-{f.head_sha or run_suffix}"
        d.supersedes_active = False
        if branch != f.default_branch:
            return _skip(d, f"push to '{branch}'; only pushes to '{f.default_branch}' run the "
                            "sweep")
        d.mode = L.Mode.FULL.value
        d.check_changelog = True
        note = f" ({L.SKIP_SWEEP_MARKER} is ignored on '{branch}')" if d.skip_sweep_marker else ""
        return _run(d, f"push to '{branch}': full changelog matrix, no canary, no fail-fast, "
                       f"default evals{note}")

    if f.event == "workflow_dispatch":
        d.base_ref = f.default_branch
        d.diff_base = str(f.dispatch_inputs.get("base-ref") or f"origin/{f.default_branch}")
        d.diff_head = str(f.dispatch_inputs.get("head-ref") or f.head_sha)
        for name, value in (("base-ref", d.diff_base), ("head-ref", d.diff_head)):
            if value and not is_revision(value):
                return _error(d, f"workflow_dispatch input {name} {value[:60]!r} is not a git "
                                 "revision (a branch, tag or commit SHA)")
        d.concurrency_group = f"sweep-dispatch-{run_suffix}"
        primary = str(f.dispatch_inputs.get("sweep-label") or L.RECOMMENDED_PRIMARY).strip()
        words = _split_words(f.dispatch_inputs.get("modifiers"))
        if primary not in L.PRIMARIES:
            hint = did_you_mean(primary, L.PRIMARY_LABELS)
            return _error(d, f"workflow_dispatch input sweep-label '{primary}' is not a primary "
                             f"label (one of {', '.join(L.PRIMARY_LABELS)})"
                             + (f"; {hint}" if hint else ""))
        unknown = [w for w in words if w not in L.MODIFIER_LABELS and w != L.SKIP_QUEUE]
        if unknown:
            return _error(d, f"workflow_dispatch input modifiers has unknown "
                             f"{', '.join(unknown)} (allowed: "
                             f"{', '.join(L.MODIFIER_LABELS + (L.SKIP_QUEUE,))})")
        d.labels = sorted({primary, *words})
        _apply_labels(d, primary, set(words))
        d.stageable = False  # staging and reuse accept only PR runs
        d.check_changelog = True
        return _run(d, f"manual dispatch with '{primary}': {_describe(d)}")

    d.concurrency_group = f"sweep-{f.event}-{run_suffix}"
    return _skip(d, f"event '{f.event}' does not run the sweep "
                    "(pull_request, push to the default branch and workflow_dispatch do)")


def decide_event(event_name: str, payload: dict[str, Any], **kwargs: Any) -> Decision:
    return decide(facts_from_event(event_name, payload, **kwargs))
