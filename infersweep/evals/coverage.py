"""Each sample of an eval against its plan, the test split and its request record.

One sample per planned question (none twice, none unplanned, none missing), each with the
split's own target; a request counts as answered only when its record says ``"ok": true``;
every saved extraction and verdict is re-scored against the split's target; and the
summary's counts are those the samples give. Refusals go to a :class:`Findings`.
"""

from __future__ import annotations

from infersweep.evals import rescore
from infersweep.evals.findings import Findings

RERUN = "run the same `eval gsm8k` command again; a folder edited after the run is not evidence"


def request(found: Findings, spath: str, lineno: int, doc: int, s: dict) -> str:
    """``ok``, ``failed`` or ``unflagged``: only an explicit ``"ok": true`` is an answer."""
    req = s.get("request")
    ok = req.get("ok") if isinstance(req, dict) else None
    if ok is True:
        return "ok"
    if ok is False:
        found.refuse(spath, lineno, "eval-request-failed",
                     f"doc {doc}: request failed ({req.get('error_class') or '?'}: "
                     f"{str(req.get('error') or '')[:120]}), not a wrong answer",
                     "fix the server, then run the same `eval gsm8k` command again: it "
                     "resends only the failed requests")
        return "failed"
    found.refuse(spath, lineno, "eval-request-unflagged",
                 f"doc {doc}: the request's record does not say it was answered "
                 f"({'no request record' if not isinstance(req, dict) else 'ok is ' + repr(ok)})",
                 "a request counts as answered only with \"ok\": true in its record; " + RERUN)
    return "unflagged"


def samples(found: Findings, spath: str, lines: list[tuple[int, dict]], rows: list,
            expected: range, data: dict, audit: list[dict]) -> tuple[dict, dict]:
    """Each sample against the plan, the split's target, its request and its re-score (by
    the pinned rules, :mod:`infersweep.evals.rules`);
    returns the re-scored verdicts' sums per filter and the requests' outcomes, and appends
    one audit row per planned question to ``audit``."""
    sums = dict.fromkeys(rescore.FILTERS, 0.0)
    counts = {"ok": 0, "failed": 0, "unflagged": 0}
    seen: dict[int, int] = {}
    for lineno, s in lines:
        doc = s["doc_id"]
        if doc in seen:
            found.refuse(spath, lineno, "eval-duplicate-doc",
                         f"doc {doc} again (first on line {seen[doc]}); counted once",
                         "one sample per question: a question answered twice does not "
                         "replace another; " + RERUN)
            continue
        if doc not in expected:
            found.refuse(spath, lineno, "eval-unexpected-doc",
                         f"doc {doc} was not asked: the plan asks doc ids {expected.start} to "
                         f"{expected.stop - 1}", RERUN)
            continue
        seen[doc] = lineno
        target = rows[doc][1]
        if s["target"] != target:
            found.refuse(spath, lineno, "eval-target-mismatch",
                         f"doc {doc}: target {_tail(s['target'])!r} is not the split's answer "
                         f"{_tail(target)!r}", "a sample is scored against the test split's "
                         "answer, never its own; " + RERUN)
        outcome = request(found, spath, lineno, doc, s)
        counts[outcome] += 1
        resp = s.get("response")
        non_empty = isinstance(resp, str) and bool(resp.strip())
        if outcome == "ok" and not non_empty:
            found.refuse(spath, lineno, "eval-empty-response", f"doc {doc}: empty response",
                         "an answered request needs answer text; " + RERUN)
        req = s.get("request") if isinstance(s.get("request"), dict) else {}
        row = {"doc_id": doc, "line": lineno,
               "target_answer": rescore.target_answer(target),
               "request_ok": outcome == "ok", "error_class": req.get("error_class") or "",
               "retries": req.get("retries", 0), "non_empty": non_empty}
        for f in rescore.FILTERS:
            got = rescore.extract(f, resp)
            verdict = rescore.exact_match(got, target)
            sums[f] += verdict
            saved_x, saved_v = s["extracted"].get(f), s["exact_match"].get(f)
            row[f] = {"extracted": got, "correct": bool(verdict), "saved_extracted": saved_x,
                      "saved_correct": None if saved_v is None else bool(saved_v)}
            if got != saved_x or not isinstance(saved_v, (int, float)) \
                    or float(saved_v) != verdict:
                found.refuse(spath, lineno, "eval-rescore",
                             f"doc {doc}: {f} re-scores as {got!r} "
                             f"({'correct' if verdict else 'wrong'}), the file says "
                             f"{saved_x!r} ({'correct' if saved_v else 'wrong'})", RERUN)
        audit.append(row)
    missing = [i for i in expected if i not in seen]
    if missing:
        found.refuse(spath, 0, "eval-samples-missing",
                     f"{len(missing):,} of the {len(expected):,} planned questions have no "
                     f"sample (doc {_ids(missing)}); each counts as wrong",
                     "every question asked needs its sample; " + RERUN)
        audit += [{"doc_id": i, "line": None, "missing": True, "target_answer":
                       rescore.target_answer(rows[i][1]), "request_ok": False}
                      for i in missing]
        audit.sort(key=lambda r: r["doc_id"])
    return sums, counts


def totals(found: Findings, epath: str, lines: list, expected: range, data: dict,
            counts: dict) -> None:
    """The summary's counts are those of the plan and the samples (a planned question
    without a sample has no request record: neither answered nor failed)."""
    if data["n-samples"] != len(lines):
        found.refuse(epath, 1, "eval-sample-count",
                     f"n-samples {data['n-samples']!r}, but the samples file has "
                     f"{len(lines):,} samples", RERUN)
    q = data["requests"]
    want = {"total": len(expected), "ok": counts["ok"],
            "failed": counts["failed"] + counts["unflagged"]}
    have = {k: q.get(k) for k in want}
    unrecorded = len(expected) - sum(counts.values())
    if have != want:
        found.refuse(epath, 1, "eval-request-count",
                     "requests " + ", ".join(f"{k} {v!r}" for k, v in have.items())
                     + ", but the plan and the samples give "
                     + ", ".join(f"{k} {v}" for k, v in want.items())
                     + (f" ({unrecorded:,} without a record)" if unrecorded else ""),
                     "a request is answered only when its record says \"ok\": true; " + RERUN)


def _tail(text: str, n: int = 40) -> str:
    return text if len(text) <= n else "…" + text[-n:]


def _ids(ids: list[int], shown: int = 10) -> str:
    head = ", ".join(str(i) for i in ids[:shown])
    return head + (f" and {len(ids) - shown:,} more" if len(ids) > shown else "")
