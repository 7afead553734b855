"""``eval check``: an eval passes only on evidence the check establishes itself.

The eval's own account of itself is not trusted. From the test split's file (``--dataset``,
else the local file the eval recorded at run time) and the plan recorded at run time
(:mod:`infersweep.evals.plan`), the check derives which questions must have been asked, and
passes an eval folder only if:

- the split is one the thresholds file pins by content digest (never one the eval vouches
  for), and the split's and targets' digests recorded at run time match it;
- the eval recorded the scoring rules of the task this checkout runs
  (:mod:`infersweep.evals.rules`): they are compared as text, never compiled;
- there is exactly one sample per planned question (none missing, none twice, none
  unplanned) and each sample's target is the split's answer for its doc id;
- the samples file is inside the eval's folder (:mod:`infersweep.evals.samples`);
- every request says it was answered (``"ok": true``; a record without the flag is a
  failure) with a non-empty response, and the summary's request counts are the samples';
- re-scoring the samples without lm-eval, by the pinned rules and against the split's
  targets, reproduces every
  saved extraction and verdict and both scores (a planned question without a sample counts
  as wrong);
- both re-scored filters reach the model's threshold; and, judged for staging
  (:attr:`Scope.FULL`, the default), the eval asked at least the thresholds file's minimum
  number of questions for the model.

Each refusal is a :class:`~infersweep.diagnostics.Diagnostic` under a named rule
(``[eval-...]``), pointing at ``eval.json`` or the sample's line.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from infersweep.diagnostics import Diagnostic, InputError
from infersweep.evals import coverage, rescore, rules, testset, thresholds
from infersweep.evals import dataset as evaldata
from infersweep.evals import plan as planmod
from infersweep.evals import samples as samplesmod
from infersweep.evals.coverage import RERUN
from infersweep.evals.findings import Findings
from infersweep.evals.run import EVAL_FILE, SAMPLES_FILE
from infersweep.evals.scope import Scope
from infersweep.evals.summary import load_eval

__all__ = ["EvalReport", "Scope", "check_folder", "load_eval", "locate_dataset", "markdown"]

SCORE_TOLERANCE = 1e-9


@dataclass
class EvalReport:
    folder: str
    model: str
    prefix: str | None
    threshold: thresholds.Threshold
    scores: dict[str, float]
    rescored: dict[str, float]
    scope: Scope = Scope.FULL
    questions: int = 0       # the questions the plan asks of the split
    dataset_rows: int = 0
    min_questions: thresholds.MinQuestions | None = None
    dataset: str = ""        # the split judged against, and where it came from
    diagnostics: list[Diagnostic] = field(default_factory=list)
    audit: list[dict] = field(default_factory=list)
    requests: dict = field(default_factory=dict)

    @property
    def problems(self) -> list[str]:
        return [str(d) for d in self.diagnostics]

    @property
    def passed(self) -> bool:
        return not self.diagnostics

    @property
    def coverage(self) -> str:
        if self.questions == self.dataset_rows:
            return f"{self.questions:,} questions"
        return f"{self.questions:,} of {self.dataset_rows:,} questions (scaled down)"


def locate_dataset(folder: Path, plan: planmod.Plan, eval_path: str,
                   given: str | os.PathLike | None) -> tuple[Path, str]:
    """The test split to judge against and where it came from: ``given`` (``--dataset``);
    else the project's built-in split (what local jobs run), regenerated here, when the eval
    recorded its digest; else the local file the eval recorded, if it is on this machine and
    outside the eval's own folder (a folder cannot vouch for its own questions)."""
    if given is not None:
        return Path(given), "--dataset"
    builtin = evaldata.builtin_test_file()
    if plan.dataset_sha256 == testset.digest_rows(testset.read_rows(builtin, "built-in split")):
        return builtin, "the built-in split, regenerated"
    rec = plan.test_file
    if rec is None:
        why = "the eval loaded it from the Hugging Face hub"
    elif not Path(rec).is_absolute():
        why = f"the recorded test file {rec!r} is not an absolute path"
    elif Path(rec).resolve().is_relative_to(Path(folder).resolve()):
        why = f"the recorded test file {rec} is inside the eval's own folder"
    elif not Path(rec).is_file():
        why = f"the recorded test file {rec} is not on this machine"
    else:
        return Path(rec), "recorded by the eval"
    raise InputError(Diagnostic(
        eval_path, 1, 1, f"the test split to check this eval against is not here: {why}",
        "give the GSM8K test split the eval ran on (JSONL) with --dataset FILE or "
        f"INFERSWEEP_EVAL_DATASET=FILE; its rows have sha256 {plan.dataset_sha256}",
        "eval-dataset-missing"))


def check_folder(folder: Path, limits: dict, prefix: str | None, *, scope: Scope = Scope.FULL,
                 dataset: str | os.PathLike | None = None) -> EvalReport:
    """Judge one eval folder. ``limits``: the loaded thresholds file; ``prefix``: the model
    prefix picking the threshold (default: the eval's own row's); ``dataset``: the test split
    to judge against (default: the local file the eval recorded). Raises InputError when the
    folder cannot be judged at all (no summary, no plan, samples outside it, no split)."""
    folder, scope = Path(folder), Scope(scope)
    epath = str(folder / EVAL_FILE)
    data = load_eval(folder)
    plan = planmod.from_summary(data, epath)
    spath = samplesmod.inside(folder, data.get("samples-file", SAMPLES_FILE), epath)
    ds_path, ds_source = locate_dataset(folder, plan, epath, dataset)
    rows = testset.read_rows(ds_path, "test split")
    lines = samplesmod.load(spath)
    prefix = prefix or (data.get("provenance") or {}).get("model-prefix")
    expected = plan.doc_ids(len(rows))
    rep = EvalReport(str(folder), data["model"], prefix,
                     thresholds.for_model(limits, prefix, data["model"]),
                     {f: float(data["scores"][f]["exact_match"]) for f in rescore.FILTERS}, {},
                     scope=scope, questions=len(expected), dataset_rows=len(rows),
                     min_questions=thresholds.min_questions(limits, prefix, data["model"]),
                     dataset=f"{ds_path} ({ds_source})", requests=data["requests"])
    found = Findings()
    _rules(found, epath, data)
    _pinned(found, epath, rows, limits, ds_path)
    _split(found, epath, plan, rows, expected, data, ds_path)
    sums, counts = coverage.samples(found, str(spath), lines, rows, expected, data, rep.audit)
    coverage.totals(found, epath, lines, expected, data, counts)
    _scores(found, epath, rep, sums)
    if scope is Scope.FULL and rep.min_questions.value > len(expected):
        mq = rep.min_questions
        found.refuse(epath, 1, "eval-too-few-questions",
                     f"the eval asked {plan.describe(len(rows))}; judged for staging, an eval "
                     f"of {prefix or data['model']} needs at least {mq.value:,} ({mq.source})",
                     "run the whole test split (no --limit); a scaled-down run is judged with "
                     "`eval check --scope local` and is never staged")
    rep.diagnostics = found.done()
    return rep


def _rules(found: Findings, epath: str, data: dict) -> None:
    """The eval was scored by the rules of the task this checkout runs."""
    for why in rules.differences(data["filters"], data["metric"]):
        key = "metric" if why.startswith("metric") else "filters"
        found.refuse(epath, _key_line(epath, key), "eval-rules",
                     f"{why}: the eval records other scoring rules than the GSM8K task this "
                     "checkout runs", "an eval is scored only by the task's own rules (lm-eval "
                     f"{rules.LM_EVAL_VERSION} gsm8k, infersweep/evals/rules.py), never by "
                     "rules it brings; run `eval gsm8k` again with this checkout")


def _pinned(found: Findings, epath: str, rows: list, limits: dict, ds_path: Path) -> None:
    """The split judged against is one the thresholds file pins, whoever named it."""
    got = testset.digest_rows(rows)
    pins = thresholds.pinned_splits(limits)
    if any(p.sha256 == got for p in pins):
        return
    known = "; ".join(f"{p.name}: {p.rows:,} rows, sha256 {p.sha256}" for p in pins)
    found.refuse(epath, 1, "eval-dataset-unpinned",
                 f"the test split {ds_path} ({len(rows):,} rows, sha256 {got}) is none of the "
                 f"splits the thresholds file pins ({known or 'it pins none'})",
                 "an eval is judged only against a pinned split, whatever digests it recorded: "
                 "give the real GSM8K test split with --dataset FILE, or pin a new split under "
                 "datasets.gsm8k in the thresholds file (a reviewed change)")


def _key_line(path: str, key: str) -> int:
    """The line of ``"key":`` in a JSON file (1 when it cannot be found)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return 1
    at = text.find(f'"{key}"')
    return 1 if at < 0 else text.count("\n", 0, at) + 1


def _split(found: Findings, epath: str, plan: planmod.Plan, rows: list, expected: range,
           data: dict, ds_path: Path) -> None:
    """The split is the one the eval ran on, and the plan and targets are the split's."""
    got = testset.digest_rows(rows)
    if got != plan.dataset_sha256:
        found.refuse(epath, 1, "eval-dataset-digest",
                     f"the test split {ds_path} ({len(rows):,} rows, sha256 {got}) is not the "
                     f"one the eval ran on ({plan.rows:,} rows, sha256 {plan.dataset_sha256})",
                     "check the eval against the split it ran on (--dataset FILE); an eval run "
                     "on another split is not this GSM8K eval")
    if plan.questions != len(expected) or data.get("limit") != plan.limit:
        found.refuse(epath, 1, "eval-plan",
                     f"the plan records {plan.questions:,} questions with limit "
                     f"{plan.limit!r} (summary limit {data.get('limit')!r}); the split and the "
                     f"limit give {len(expected):,}", RERUN)
    want = testset.digest_targets((i, rows[i][1]) for i in expected)
    if want != plan.targets_sha256:
        found.refuse(epath, 1, "eval-targets-digest",
                     f"the targets recorded at run time (sha256 {plan.targets_sha256}) are not "
                     f"the split's answers to {plan.describe(len(rows))} (sha256 {want})",
                     "the eval was scored against other answers than the split's; " + RERUN)


def _scores(found: Findings, epath: str, rep: EvalReport, sums: dict) -> None:
    n = rep.questions
    th = rep.threshold
    for f in rescore.FILTERS:
        rep.rescored[f] = sums[f] / n if n else 0.0
        if abs(rep.rescored[f] - rep.scores[f]) > SCORE_TOLERANCE:
            found.refuse(epath, 1, "eval-score-mismatch",
                         f"{f} score {rep.scores[f]:.4f} is not reproduced by its samples "
                         f"({rep.rescored[f]:.4f} over {n:,} planned questions)", RERUN)
        low = min(rep.rescored[f], rep.scores[f])
        if low < th.value:
            found.refuse(epath, 1, "eval-below-threshold",
                         f"{f} {low:.4f} is below the threshold {th.value:.2f} ({th.source})",
                         "the model does not reach its accuracy threshold on GSM8K")


def markdown(reports: list[EvalReport]) -> str:
    lines = ["### GSM8K evals", "", "| eval | model | questions | strict-match | flexible-extract "
             "| threshold | retries | failed | result |", "|---|---|---|---|---|---|---|---|---|"]
    for r in reports:
        q = r.requests
        lines.append(f"| {r.folder} | {r.model} | {r.coverage}, {r.scope} | "
                     f"{r.scores['strict-match']:.4f} | {r.scores['flexible-extract']:.4f} | "
                     f"{r.threshold.value:.2f} ({r.threshold.source}) | {q.get('retries', 0)} | "
                     f"{q.get('failed', 0)} | {'pass' if r.passed else 'FAIL'} |")
    return "\n".join(lines) + "\n"
