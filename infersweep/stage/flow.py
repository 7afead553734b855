"""``/stage-results``, from the ``issue_comment`` event to the edited reply.

The order, and what each step answers on the pull request:

1. the comment: not the command -> nothing (exit 0); malformed -> a usage reply;
2. the thread is a pull request, the commenter may stage (write, maintain, admin), the pull
   request is not from a fork and carries a full-sweep label -> else a reply saying why;
3. the run: the given id, or the newest completed ``pull_request`` run of run-sweep.yml for
   the head commit, validated (:mod:`infersweep.stage.runs`) -> else a reply with the reasons;
4. an acknowledgement comment (what will happen, "this comment will be updated"); from here
   every outcome edits that comment;
5. artifacts: ``changelog-metadata``, ``results_bmk`` and ``sweep-rows`` (the matrix the run
   was asked for) present and unexpired, each downloaded and unpacked safely
   (:mod:`infersweep.stage.artifacts`); each agentic job's ``bmk_agentic_<name>`` and
   ``agentic_<name>`` into one folder (:mod:`infersweep.stage.agenticarts`);
6. the gates: ``results check`` and ``eval check`` on the job folders, against the matrix
   (:mod:`infersweep.stage.gates`), which also give exactly what may be stored;
7. the store and the report (:class:`Backend`, the one place they are called): ingest what
   the gates checked, in one transaction; compare with the newest earlier staged run of each
   config; rebuild the report;
8. the acknowledgement edited to the outcome: the report page and the comparison table, or
   the reason and what to do. A success is posted only after the ingest committed.

Every outcome but "not the command" is recorded as a staging event in the store and written
to the step summary. Refusals and failures exit 1; staged and ignored exit 0.
"""

from __future__ import annotations

import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from infersweep import report
from infersweep import store as storemod
from infersweep.diagnostics import InputError
from infersweep.report.fromstore import rebuild
from infersweep.results import compare
from infersweep.stage import agenticarts, authorize, comment, gates, runs
from infersweep.stage import artifacts as arts
from infersweep.stage.github import GitHub, GitHubError
from infersweep.store.agentic import is_publishable

CHANGELOG_ARTIFACT = "changelog-metadata"
RESULTS_ARTIFACT = "results_bmk"
ROWS_ARTIFACT = "sweep-rows"
REQUIRED_ARTIFACTS = (CHANGELOG_ARTIFACT, RESULTS_ARTIFACT, ROWS_ARTIFACT)
MAX_BODY = 60_000          # GitHub refuses comments above 65,536 characters
MAX_LISTED = 20            # problems listed in a reply

IGNORED, REFUSED, FAILED, STAGED = "ignored", "refused", "failed", "staged"
SITE_URL_ENV = "INFERSWEEP_SITE_URL"


class Refused(Exception):
    """The request is not carried out: ``reason`` and ``todo`` become the reply."""

    def __init__(self, reason: str, todo: str = ""):
        self.reason, self.todo = reason, todo
        super().__init__(reason)


@dataclass
class Request:
    """What the event says (all from the payload GitHub wrote, never from a shell)."""

    number: int
    is_pr: bool
    actor: str
    body: str
    comment_url: str = ""


@dataclass
class Settings:
    repository: str
    site_url: str | None = None       # where the report is published (GitHub Pages)
    site_dir: Path = Path("site")     # where the report is built
    db: str | None = None             # None: INFERSWEEP_DB_URL, else the default SQLite file
    thresholds: Path = Path("configs", "eval-thresholds.yaml")
    workdir: Path | None = None       # where artifacts are unpacked (default: a temp folder)
    eval_dataset: Path | None = None  # the GSM8K test split evals are checked against
    limits: arts.Limits = field(default_factory=arts.Limits)


@dataclass
class Outcome:
    status: str
    exit_code: int
    reply: str | None = None
    comment_id: int | None = None
    run_id: int | None = None
    attempt: int | None = None
    page_url: str | None = None
    detail: str = ""


def request_from_event(event_name: str | None, payload, path: str = "<event>") -> Request | None:
    """The request in an ``issue_comment`` ``created`` payload (None: another event)."""
    from infersweep.diagnostics import Diagnostic

    if event_name not in (None, "", "issue_comment"):
        return None
    if not isinstance(payload, dict):
        raise InputError(Diagnostic(path, 0, 0, "the event payload is not a JSON object",
                                    "pass the file GitHub writes to $GITHUB_EVENT_PATH"))
    if payload.get("action") != "created":
        return None
    issue, note = payload.get("issue"), payload.get("comment")
    if not isinstance(issue, dict) or not isinstance(note, dict):
        raise InputError(Diagnostic(path, 0, 0, "not an issue_comment payload (no 'issue' or "
                                    "'comment' object)", "pass the file GitHub writes to "
                                    "$GITHUB_EVENT_PATH for an issue_comment event"))
    number, login = issue.get("number"), (note.get("user") or {}).get("login")
    if not isinstance(number, int) or isinstance(number, bool) or not isinstance(login, str):
        raise InputError(Diagnostic(path, 0, 0, "the payload lacks issue.number or "
                                    "comment.user.login", "pass an issue_comment payload"))
    body = note.get("body")
    return Request(number=number, is_pr=isinstance(issue.get("pull_request"), dict),
                   actor=login, body=body if isinstance(body, str) else "",
                   comment_url=str(note.get("html_url") or ""))


def _debug() -> bool:
    from infersweep.cli import _debug as debug

    return debug()


def _bullets(lines: list[str]) -> str:
    shown = [f"- {line}" for line in lines[:MAX_LISTED]]
    if len(lines) > MAX_LISTED:
        shown.append(f"- … and {len(lines) - MAX_LISTED} more (see the job's log)")
    return "\n".join(shown)


def _fit(text: str) -> str:
    if len(text) <= MAX_BODY:
        return text
    return text[:MAX_BODY] + "\n\n… (cut to fit a comment; the report has everything)\n"


class Backend:
    """The results store and the report: every call into them is here."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self._store = None

    def store(self):
        if self._store is None:
            self._store = storemod.open_store(self.settings.db)
        return self._store

    def record(self, outcome: Outcome, req: Request, comment_url: str | None) -> None:
        """A staging event for every outcome, under the run's id (``pr-<number>`` when no run
        was named or found) with the reply's link; a store that cannot take it is only a
        warning here (the reply has been given, and a failed ingest already says so)."""
        run_id = str(outcome.run_id) if outcome.run_id else f"pr-{req.number}"
        try:
            self.store().record_event(run_id, outcome.attempt, req.actor, outcome.status,
                                      outcome.detail[:2000], comment_url=comment_url)
        except Exception as exc:  # noqa: BLE001 - the outcome stands whatever the store says
            print(f"warning: the staging event was not recorded: {exc}", file=sys.stderr)

    def stage(self, cand: runs.Candidate, verdict: gates.GateResult, changelog: dict | None,
              pr_number: int) -> dict:
        """Ingest the gated points and evals (one transaction), compare, rebuild the report;
        what the reply shows. Anything failing after the ingest committed raises
        :class:`AfterIngest`."""
        points, evals, agentic = verdict.points, verdict.evals, verdict.agentic
        run = cand.run
        info = storemod.RunInfo(
            run_id=str(cand.run_id), attempt=cand.attempt, source="github",
            created_at=run.get("created_at"), head_sha=run.get("head_sha"),
            pr_number=pr_number, labels=cand.labels, url=cand.url, changelog=changelog,
            workflow=runs.WORKFLOW_PATH)
        summary = self.store().ingest(info, points, evals, agentic, verdict.recipes)
        try:
            comparison = self.comparison(str(cand.run_id), points)
            page = self.report(str(cand.run_id), cand.attempt)
        except Exception as exc:  # noqa: BLE001 - the ingest stands; the reply must say so
            if _debug():
                raise
            raise AfterIngest(summary, exc) from None
        return {"summary": summary, "points": points, "evals": evals, "agentic": agentic,
                "comparison": comparison, "page": page}

    def comparison(self, run_id: str, points: list[dict]) -> str:
        """Per config, a `results compare` table against the newest other staged run."""
        store = self.store()
        limits = {m: d for m, (_, _, d) in compare.METRICS.items()}
        parts = []
        for key in sorted({p["config_key"] for p in points}):
            mine = [p for p in points if p["config_key"] == key]
            prev = store.previous_run(key, run_id, None)
            if prev is None:
                parts.append(f"**{key}**: the first staged run of this config, nothing to "
                             "compare with.")
                continue
            base = [p for p in prev.points if p.get("config_key") == key]
            changes, only_base, only_new = compare.compare({"rows": base}, {"rows": mine})
            table, regressions = compare.markdown(changes, only_base, only_new, limits)
            flag = f" — **{regressions} regression(s)**" if regressions else ""
            against = f"[{prev.label}]({prev.url})" if prev.url else prev.label
            parts.append(f"**{key}** against run {against}{flag}\n\n{table}")
        return "\n\n".join(parts)

    def report(self, run_id: str, attempt: int) -> str:
        """Rebuild the whole site from the store; the staged run's page, as a link under
        the site URL when there is one."""
        thresholds = Path(self.settings.thresholds)
        staged, _ = rebuild(self.store(), self.settings.site_dir,
                            thresholds_file=thresholds if thresholds.is_file() else None)
        mine = next((r for r in staged if r.run_id == run_id and r.attempt == attempt), None)
        if mine is None:
            raise RuntimeError(f"run {run_id} attempt {attempt} is not in the store after "
                               "its ingest")
        page = report.run_page_path(mine)
        if self.settings.site_url:
            return self.settings.site_url.rstrip("/") + "/" + page
        return f"`{page}` in the report (set {SITE_URL_ENV} to link it)"


class AfterIngest(Exception):
    """The run was stored, then something after the ingest failed."""

    def __init__(self, summary, cause: Exception):
        self.summary, self.cause = summary, cause
        super().__init__(f"{type(cause).__name__}: {cause}")


class Stager:
    def __init__(self, gh: GitHub, settings: Settings, backend: Backend | None = None):
        self.gh, self.settings = gh, settings
        self.backend = backend or Backend(settings)
        self.ack_id: int | None = None
        self.reply_url: str | None = None

    # -- replies ----------------------------------------------------------------------------
    def _say(self, req: Request, text: str) -> int:
        """Post ``text`` to the commenter, or edit the acknowledgement once there is one."""
        body = _fit(f"@{req.actor} {text}")
        if self.ack_id is not None:
            note = self.gh.update_comment(self.ack_id, body)
        else:
            note = self.gh.create_comment(req.number, body)
        self.reply_url = str(note.get("html_url") or "") or None
        return int(note["id"])

    # -- the steps --------------------------------------------------------------------------
    def run(self, req: Request) -> Outcome:
        parsed = comment.parse(req.body)
        if parsed.kind == comment.IGNORE:
            return Outcome(IGNORED, 0, detail="the comment is not /stage-results")
        cand: runs.Candidate | None = None
        try:
            if parsed.kind == comment.USAGE_ERROR:
                raise Refused(f"{parsed.problem}.", comment.USAGE)
            cand = self._authorise_and_find(req, parsed.run_id)
            self.ack_id = self._say(req, self._ack(cand))
            result = self._stage(req, cand)
        except Refused as exc:
            text = exc.reason + (f"\n\n{exc.todo}" if exc.todo else "")
            out = Outcome(REFUSED, 1, text, detail=exc.reason)
        except GitHubError as exc:
            text = (f"staging stopped: {exc}. Nothing was stored. Comment the same command "
                    "again to retry.")
            out = Outcome(FAILED, 1, text, detail=str(exc))
        except InputError as exc:
            lines = [str(d) for d in exc.diagnostics]
            text = ("staging failed, nothing was stored:\n\n" + _bullets(lines)
                    + "\n\nRe-run the sweep if its artifacts are broken, then stage the new run.")
            out = Outcome(FAILED, 1, text, detail="; ".join(lines))
        except AfterIngest as exc:
            text = (f"run {cand.run_id} was stored ({exc.summary.line}), but then "
                    f"{str(exc)[:300]}. Comment the same command again: staging a run again "
                    "updates its rows and rebuilds the report.")
            out = Outcome(FAILED, 1, text, detail=f"stored; then {exc}"[:2000])
        except Exception as exc:  # noqa: BLE001 - a promise in the thread must be kept
            if _debug():
                raise
            text = (f"staging failed: {type(exc).__name__}: {str(exc)[:300]}. Nothing was "
                    "stored (the ingest is one transaction). Comment the same command again "
                    "to retry; if it fails again, the job's log says where.")
            out = Outcome(FAILED, 1, text, detail=f"{type(exc).__name__}: {exc}"[:2000])
        else:
            out = result
        if cand is not None:
            out.run_id, out.attempt = cand.run_id, cand.attempt
        elif parsed.kind == comment.STAGE:
            out.run_id = parsed.run_id  # the run asked for, even when it was refused
        try:
            out.comment_id = self._say(req, out.reply)
        except GitHubError as exc:
            print(f"error: the reply was not posted: {exc}", file=sys.stderr)
            out.exit_code = 1
        self.backend.record(out, req, self.reply_url or req.comment_url or None)
        return out

    def _authorise_and_find(self, req: Request, run_id: int | None) -> runs.Candidate:
        if not req.is_pr:
            raise Refused("`/stage-results` works only on a pull request: it stages one of "
                          "that pull request's sweeps.", "Comment it on the pull request whose "
                          "sweep you want staged.")
        permission = self.gh.permission(req.actor)
        if not authorize.may_stage(permission):
            raise Refused(f"`/stage-results` needs write, maintain or admin access to this "
                          f"repository (you have {permission}).",
                          "Ask someone with write access to stage the run.")
        pr = self.gh.pull(req.number)
        fork = authorize.fork_of(pr)
        if fork:
            raise Refused(f"this pull request comes from {fork}. Sweeps of fork pull requests "
                          "are not run here, and a fork's run is built from the fork's own "
                          "workflow, so it is never staged.",
                          "Push the branch to this repository and open the pull request "
                          "from there.")
        current = [lb.get("name") for lb in pr.get("labels") or [] if isinstance(lb, dict)]
        why = authorize.label_problem(current)
        if why:
            raise Refused(f"this pull request {why}.", authorize.label_todo())
        commits = set(self.gh.pull_commits(req.number))
        timeline = self.gh.timeline(req.number)
        check = {"repository": self.settings.repository, "commits": commits,
                 "timeline": timeline}
        if run_id is not None:
            try:
                run = self.gh.run(run_id)
            except GitHubError as exc:
                if exc.status == 404:
                    raise Refused(f"there is no workflow run {run_id} in this repository.",
                                  "Copy the id from the run's URL (…/actions/runs/<id>), or "
                                  "comment `/stage-results` alone for the newest sweep of "
                                  "this pull request.") from None
                raise
            found = runs.problems(run, **check)
            if found:
                raise Refused(f"run {run_id} cannot be staged for this pull request:\n\n"
                              + _bullets(found), "Stage a completed `pull_request` run of "
                              f"{runs.WORKFLOW_FILE} for one of this pull request's commits, "
                              "created while it had a full-sweep label.")
            return runs.candidate(run, timeline)
        head = (pr.get("head") or {}).get("sha")
        listed = self.gh.workflow_runs(runs.WORKFLOW_FILE, event=runs.EVENT, status="completed",
                                       head_sha=head)
        listed.sort(key=lambda r: (str(r.get("created_at") or ""), int(r.get("id") or 0)),
                    reverse=True)
        seen = []
        for run in listed:
            found = runs.problems(run, **check)
            if not found:
                return runs.candidate(run, timeline)
            seen.append(f"run {run.get('id')}: " + "; ".join(found))
        detail = ("\n\nRuns looked at:\n\n" + _bullets(seen)) if seen else ""
        raise Refused(f"no completed `pull_request` run of {runs.WORKFLOW_FILE} for the head "
                      f"commit {str(head)[:12]} can be staged.{detail}",
                      "Wait for the sweep of the head commit to finish, or name a run: "
                      "`/stage-results <run-id>`.")

    def _ack(self, cand: runs.Candidate) -> str:
        attempt = f" (attempt {cand.attempt})" if cand.attempt > 1 else ""
        return (f"staging [run {cand.run_id}]({cand.url}){attempt}: downloading its artifacts, "
                "checking them with `results check` and `eval check`, storing them and "
                "rebuilding the report. Runs staged before stay staged. This comment will be "
                "updated with the outcome.")

    def _stage(self, req: Request, cand: runs.Candidate) -> Outcome:
        listed = self.gh.artifacts(cand.run_id)
        picked = {}
        for name in REQUIRED_ARTIFACTS:
            art = arts.newest(listed, name)
            if art is None:
                what = ("no matrix of what it was asked for, and the matrix decides the "
                        "points it must hold" if name == ROWS_ARTIFACT
                        else "nothing complete to stage")
                raise Refused(f"run {cand.run_id} has no `{name}` artifact, so there is "
                              f"{what}.", "Re-run the sweep (its setup and collect jobs upload "
                              "it), then stage the new run.")
            if art.get("expired"):
                raise Refused(f"the `{name}` artifact of run {cand.run_id} has expired "
                              "(GitHub keeps artifacts for a limited time).",
                              "Re-run the sweep, then stage the new run.")
            picked[name] = art
        agentic = agenticarts.pairs(listed)
        for pair in agentic:
            for name, art in ((agenticarts.RESULTS_PREFIX + pair.name, pair.results),
                              (agenticarts.EXPORTS_PREFIX + pair.name, pair.exports)):
                if art is not None and art.get("expired"):
                    raise Refused(f"the `{name}` artifact of run {cand.run_id} has expired "
                                  "(GitHub keeps artifacts for a limited time).",
                                  "Re-run the sweep, then stage the new run.")
        picked[AGENTIC] = agentic
        if self.settings.workdir is not None:
            return self._download_and_stage(req, cand, picked, Path(self.settings.workdir))
        with tempfile.TemporaryDirectory(prefix="infersweep-stage-") as tmp:
            return self._download_and_stage(req, cand, picked, Path(tmp))

    def _download_and_stage(self, req, cand, picked, workdir: Path) -> Outcome:
        limits = self.settings.limits
        folders = {}
        for name, art in picked.items():
            if name == AGENTIC:
                continue
            target = workdir / name
            with _unpacking(name, cand):  # streamed under the byte cap, then unpacked
                arts.download(self.gh, art, target, limits)
            folders[name] = target
        agentic_dirs = []
        for pair in picked.get(AGENTIC, []):
            with _unpacking(" and ".join(f"`{n}`" for n in agenticarts.artifact_names(pair))
                            .strip("`"), cand):
                agentic_dirs.append(agenticarts.download(self.gh, pair, workdir, limits))
        rows = gates.matrix_rows(folders[ROWS_ARTIFACT])
        verdict = gates.judge(folders[RESULTS_ARTIFACT], rows, self.settings.thresholds,
                              str(cand.run_id), eval_dataset=self.settings.eval_dataset,
                              agentic_dirs=agentic_dirs)
        if not verdict.passed:
            raise Refused(f"run {cand.run_id} is not stageable ({verdict.line()}), "
                          f"{len(verdict.problems)} problem(s):\n\n" + _bullets(verdict.problems),
                          "Fix them (re-run the failed jobs or the sweep), then stage the new "
                          "attempt. The run's conclusion does not matter; these checks do.")
        changelog = storemod.read_changelog(folders[CHANGELOG_ARTIFACT])
        staged = self.backend.stage(cand, verdict, changelog, req.number)
        n_agentic = len(staged["agentic"])
        agentic = f", {n_agentic} agentic result(s)" if n_agentic else ""
        text = (f"staged [run {cand.run_id}]({cand.url}){self._attempt(cand)}: "
                f"{len(staged['points'])} point(s){agentic}, {len(staged['evals'])} eval(s); "
                f"{verdict.line()}.\n\nReport: {staged['page']}\n\n"
                f"### Compared with the newest earlier staged run of each config\n\n"
                f"{staged['comparison'] or 'No fixed-sequence-length points.'}\n\n"
                f"{agentic_table(staged['agentic'])}"
                "Staging the same run again updates its rows; other staged runs are kept.")
        return Outcome(STAGED, 0, text, page_url=staged["page"],
                       detail=f"{len(staged['points'])} points, {n_agentic} agentic, "
                              f"{len(staged['evals'])} evals" if n_agentic else
                              f"{len(staged['points'])} points, {len(staged['evals'])} evals")

    @staticmethod
    def _attempt(cand: runs.Candidate) -> str:
        return f" (attempt {cand.attempt})" if cand.attempt > 1 else ""


AGENTIC = "agentic"  # the key of the agentic artifact pairs among the picked artifacts


class _unpacking:
    """Downloading artifact ``name``: an expired one (410) or one the extractor refuses
    becomes the reply that says so."""

    def __init__(self, name: str, cand: runs.Candidate):
        self.name, self.cand = name, cand

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, tb):
        if isinstance(exc, GitHubError) and exc.status == 410:
            raise Refused(f"the `{self.name}` artifact of run {self.cand.run_id} has expired "
                          "(GitHub answered 410 Gone).", "Re-run the sweep, then stage "
                          "the new run.") from None
        if isinstance(exc, arts.UnsafeArchive):
            raise Refused(f"the `{self.name}` artifact of run {self.cand.run_id} was not "
                          f"unpacked: {exc}.", "Artifacts of a sweep are written by its own "
                          "jobs; re-run the sweep and stage the new run.") from None
        return False


def _pct(v) -> str:
    return "–" if v is None else f"{v * 100:.1f}%"


def _num(v, fmt: str) -> str:
    return "–" if v is None else format(v, fmt)


def agentic_table(entries: list[dict]) -> str:
    """The staged agentic results for the reply: one line per point, its headline numbers
    and whether it may be published (a scaled-down local run never may)."""
    if not entries:
        return ""
    from infersweep.results.agenticagg import offload_mode
    from infersweep.store.agentic import columns

    lines = ["### Agentic coding", "",
             "| config | KV offload | conc | tok/s/GPU | tok/s/user p50 | TTFT p50 | "
             "GPU / CPU / theoretical hit | errors | publishable |",
             "|---|---|---:|---:|---:|---:|---|---:|---|"]
    for e in entries:
        c, r = columns(e), e["result"]
        ttft = c["median_ttft"]
        pub = ("yes" if is_publishable(r) else
               "**no — local, not publishable**" if c["scaled"] else "no")
        lines.append(f"| `{e['config_key']}` | {offload_mode(r)} | {c['conc']} | "
                     f"{_num(c['tput_per_gpu'], ',.1f')} | {_num(c['median_intvty'], ',.2f')} | "
                     f"{'–' if ttft is None else f'{ttft * 1000:,.0f} ms'} | "
                     f"{_pct(c['server_gpu_cache_hit_rate'])} / "
                     f"{_pct(c['server_cpu_cache_hit_rate'])} / "
                     f"{_pct(c['theoretical_cache_hit_rate'])} | {_pct(c['error_rate'])} | "
                     f"{pub} |")
    return "\n".join(lines) + "\n\n"


def summary_markdown(out: Outcome) -> str:
    head = {STAGED: "staged", REFUSED: "refused", FAILED: "failed", IGNORED: "ignored"}
    lines = ["## /stage-results", "", f"Outcome: **{head[out.status]}**"
             + (f" — run {out.run_id}" if out.run_id else "")]
    if out.reply:
        lines += ["", out.reply]
    return "\n".join(lines) + "\n"
