"""An eval folder as `eval gsm8k` writes it, built without a server: the first ``n``
questions of a GSM8K-format split, answered right except where told, scored by the rules the
folder records (the task's unless a test forges others), with every digest, count and score
made consistent. What a forger who recomputes everything would hand to `eval check`."""

from __future__ import annotations

import json
from pathlib import Path

from infersweep.evals import plan as evalplan
from infersweep.evals import rules, testset
from tests import evalscoring

FILTERS = {name: rule.recorded() for name, rule in rules.FILTERS.items()}


def right(target: str) -> str:
    return f"Adding it up gives #### {target.rsplit('#### ', 1)[1]}"


def write(folder: Path, split: Path, *, n: int, respond=right, filters=None, metric=None,
          test_file: Path | None = None) -> dict:
    """Write ``eval.json`` and ``samples.jsonl`` into ``folder`` for the first ``n`` rows of
    ``split`` (recorded as read from ``test_file``, default ``split``); returns the summary.
    ``respond(target)`` is the model's answer; ``filters``/``metric`` the rules it is scored
    by and records."""
    filters = filters or FILTERS
    metric = metric or rules.METRIC
    rows = testset.read_rows(split, "split")
    folder.mkdir(parents=True, exist_ok=True)
    samples, sums = [], dict.fromkeys(FILTERS, 0.0)
    for doc in range(n):
        target = rows[doc][1]
        resp = respond(target)
        extracted = {f: evalscoring.extract(filters[f], resp) for f in FILTERS}
        verdicts = {f: evalscoring.exact_match(extracted[f], target, metric) for f in FILTERS}
        for f in FILTERS:
            sums[f] += verdicts[f]
        samples.append({"doc_id": doc, "target": target, "response": resp,
                        "extracted": extracted, "exact_match": verdicts,
                        "request": {"ok": True, "retries": 0}})
    (folder / "samples.jsonl").write_text("".join(json.dumps(s) + "\n" for s in samples))
    limit = None if n == len(rows) else n
    summary = {
        "eval-version": 2, "task": "gsm8k", "model": "m", "n-samples": n,
        "scores": {f: {"exact_match": sums[f] / n, "stderr": 0.01} for f in FILTERS},
        "filters": filters, "metric": metric,
        "requests": {"total": n, "ok": n, "failed": 0, "retries": 0}, "limit": limit,
        "samples-file": "samples.jsonl", "provenance": {"model-prefix": "zz"},
        **evalplan.record(len(rows), limit, testset.digest_rows(rows),
                          str((test_file or split).resolve()),
                          testset.digest_targets((s["doc_id"], s["target"]) for s in samples)),
    }
    (folder / "eval.json").write_text(json.dumps(summary, indent=2))
    return summary


def thresholds(path: Path, score: float = 0.5, *, pins: list[dict] | None = None) -> Path:
    """A thresholds file with a lenient ``score`` and the repository's pinned splits (or
    ``pins``)."""
    import yaml

    repo = Path(__file__).resolve().parents[3] / "configs" / "eval-thresholds.yaml"
    doc = {"default": {"gsm8k": score},
           "datasets": {"gsm8k": pins if pins is not None
                        else yaml.safe_load(repo.read_text())["datasets"]["gsm8k"]}}
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def pinned_section() -> str:
    """The repository's ``datasets:`` section, to append to a thresholds file a test writes."""
    import yaml

    repo = Path(__file__).resolve().parents[3] / "configs" / "eval-thresholds.yaml"
    pins = yaml.safe_load(repo.read_text())["datasets"]
    return yaml.safe_dump({"datasets": pins}, sort_keys=False)
