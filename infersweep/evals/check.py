"""``eval check``: an eval passes only if its numbers hold up.

Passing needs, for every eval folder given: both filters (strict-match and
flexible-extract) at or above the model's threshold; every request answered (a failed
request is named with its failure class, never counted as a wrong answer); every response
non-empty; and the saved samples, re-scored here without lm-eval from the filter and metric
definitions saved with the run, reproducing each sample's extracted answers and verdicts and
both scores exactly. The per-sample audit says, for each question, what was checked.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import orjson

from infersweep.diagnostics import Diagnostic, InputError
from infersweep.evals import rescore, thresholds
from infersweep.evals.run import EVAL_FILE, SAMPLES_FILE

REQUIRED = ("eval-version", "task", "model", "n-samples", "scores", "filters", "metric",
            "requests")
SCORE_TOLERANCE = 1e-9


@dataclass
class EvalReport:
    folder: str
    model: str
    prefix: str | None
    threshold: thresholds.Threshold
    scores: dict[str, float]
    rescored: dict[str, float]
    problems: list[str] = field(default_factory=list)
    audit: list[dict] = field(default_factory=list)
    requests: dict = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return not self.problems


def load_eval(folder: Path) -> dict:
    path = folder / EVAL_FILE
    try:
        data = orjson.loads(path.read_bytes())
    except FileNotFoundError:
        raise InputError(Diagnostic(str(path), 0, 0, "no eval summary here",
                                    "give the output folder of a finished `eval gsm8k`")) from None
    except orjson.JSONDecodeError as exc:
        raise InputError(Diagnostic(str(path), 0, 0, f"not JSON ({exc})")) from None
    except OSError as exc:
        raise InputError(Diagnostic(str(path), 0, 0, f"cannot read ({exc.strerror})")) from None
    if not isinstance(data, dict):
        raise InputError(Diagnostic(str(path), 1, 1, "expected a JSON object"))
    missing = [k for k in REQUIRED if k not in data]
    if missing:
        raise InputError(Diagnostic(str(path), 1, 1, f"missing {', '.join(missing)}",
                                    "was it written by `infersweep eval gsm8k`?"))
    for key in ("scores", "filters"):
        have = data[key] if isinstance(data[key], dict) else {}
        absent = [f for f in rescore.FILTERS if f not in have]
        if absent:
            raise InputError(Diagnostic(
                str(path), 1, 1, f"'{key}' lacks the {' and '.join(absent)} filter"
                f"{'s' if len(absent) > 1 else ''}",
                "a GSM8K eval is scored by both strict-match and flexible-extract"))
    try:
        for f in rescore.FILTERS:
            spec = data["filters"][f]
            if not (isinstance(spec.get("regex"), str) and isinstance(spec.get("group_select"), int)
                    and isinstance(spec.get("fallback"), str)):
                raise TypeError(f)
            float(data["scores"][f]["exact_match"])
        if not isinstance(data["metric"], dict):
            raise TypeError("metric")
    except (TypeError, KeyError, AttributeError, ValueError) as exc:
        raise InputError(Diagnostic(str(path), 1, 1, f"malformed filter, score or metric entry "
                                    f"({exc})")) from None
    return data


def load_samples(folder: Path, name: str) -> list[tuple[int, dict]]:
    path = folder / name
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise InputError(Diagnostic(str(path), 0, 0, "samples file not found",
                                    "the eval's samples are needed to re-score it")) from None
    except OSError as exc:
        raise InputError(Diagnostic(str(path), 0, 0, f"cannot read ({exc.strerror})")) from None
    out = []
    for lineno, line in enumerate(raw.splitlines(), 1):
        if not line.strip():
            continue
        try:
            s = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise InputError(Diagnostic(str(path), lineno, 1, f"not JSON ({exc})")) from None
        if not (isinstance(s, dict) and isinstance(s.get("target"), str)
                and isinstance(s.get("extracted"), dict) and isinstance(s.get("exact_match"), dict)
                and "response" in s):
            raise InputError(Diagnostic(str(path), lineno, 1, "not a sample line",
                                        "expected doc_id, target, response, extracted, "
                                        "exact_match"))
        out.append((lineno, s))
    return out


def check_folder(folder: Path, limits: dict, prefix: str | None) -> EvalReport:
    data = load_eval(folder)
    samples = load_samples(folder, str(data.get("samples-file") or SAMPLES_FILE))
    prefix = prefix or (data.get("provenance") or {}).get("model-prefix")
    th = thresholds.for_model(limits, prefix, data["model"])
    spath = str(folder / str(data.get("samples-file") or SAMPLES_FILE))
    filters, metric = data["filters"], data["metric"]
    scores = {f: float(data["scores"][f]["exact_match"]) for f in rescore.FILTERS}
    rep = EvalReport(str(folder), data["model"], prefix, th, scores, {}, requests=data["requests"])
    sums = dict.fromkeys(rescore.FILTERS, 0.0)
    disagree = 0
    for lineno, s in samples:
        resp = s.get("response")
        req = s.get("request") or {}
        row = {"doc_id": s.get("doc_id"), "line": lineno, "target_answer":
               rescore.extract(r"#### (\-?[0-9\.\,]+)", 0, "", s["target"]),
               "request_ok": req.get("ok", True), "error_class": req.get("error_class") or "",
               "retries": req.get("retries", 0), "non_empty": isinstance(resp, str)
               and bool(resp.strip())}
        if not row["request_ok"]:
            rep.problems.append(f"{spath}:{lineno}: doc {s.get('doc_id')}: request failed "
                                f"({row['error_class']}: {req.get('error', '')[:120]}), "
                                "not a wrong answer")
        elif not row["non_empty"]:
            rep.problems.append(f"{spath}:{lineno}: doc {s.get('doc_id')}: empty response")
        for f in rescore.FILTERS:
            spec = filters[f]
            got = rescore.extract(spec["regex"], spec["group_select"], spec["fallback"],
                                  resp if isinstance(resp, str) else "")
            verdict = rescore.exact_match(got, s["target"], metric)
            sums[f] += verdict
            saved_x, saved_v = s["extracted"].get(f), s["exact_match"].get(f)
            row[f] = {"extracted": got, "correct": bool(verdict), "saved_extracted": saved_x,
                      "saved_correct": None if saved_v is None else bool(saved_v)}
            if got != saved_x or saved_v is None or float(saved_v) != verdict:
                disagree += 1
                if disagree <= 10:
                    rep.problems.append(
                        f"{spath}:{lineno}: doc {s.get('doc_id')}: {f} re-scores as "
                        f"{got!r} ({'correct' if verdict else 'wrong'}), the file says "
                        f"{saved_x!r} ({'correct' if saved_v else 'wrong'})")
        rep.audit.append(row)
    if disagree > 10:
        rep.problems.append(f"{spath}: {disagree - 10} more re-score disagreements")
    n = len(samples)
    if n != data["n-samples"]:
        rep.problems.append(f"{spath}: {n} samples, but {folder / EVAL_FILE} says "
                            f"{data['n-samples']}")
    for f in rescore.FILTERS:
        rep.rescored[f] = sums[f] / n if n else 0.0
        if abs(rep.rescored[f] - scores[f]) > SCORE_TOLERANCE:
            rep.problems.append(f"{folder / EVAL_FILE}: {f} score {scores[f]:.4f} is not "
                                f"reproduced by its samples ({rep.rescored[f]:.4f})")
        if scores[f] < th.value:
            rep.problems.append(f"{folder / EVAL_FILE}: {f} {scores[f]:.4f} is below the "
                                f"threshold {th.value:.2f} ({th.source})")
    if n == 0:
        rep.problems.append(f"{spath}: no samples")
    return rep


def markdown(reports: list[EvalReport]) -> str:
    lines = ["### GSM8K evals", "", "| eval | model | strict-match | flexible-extract | threshold "
             "| retries | failed | result |", "|---|---|---|---|---|---|---|---|"]
    for r in reports:
        q = r.requests
        lines.append(f"| {r.folder} | {r.model} | {r.scores['strict-match']:.4f} | "
                     f"{r.scores['flexible-extract']:.4f} | {r.threshold.value:.2f} "
                     f"({r.threshold.source}) | {q.get('retries', 0)} | {q.get('failed', 0)} | "
                     f"{'pass' if r.passed else 'FAIL'} |")
    return "\n".join(lines) + "\n"
