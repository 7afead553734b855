"""A finished sweep as GitHub holds it, for the staging tests: the pull request, the run and
the zips its jobs upload (``results_bmk``, ``changelog-metadata``, ``sweep-rows``), put into
the GitHub API double; and ``infersweep stage`` run on an ``issue_comment`` payload."""

from __future__ import annotations

import io
import json
import zipfile
from dataclasses import dataclass
from pathlib import Path

from infersweep.changelog.buckets import recipe_fingerprint
from infersweep.evals import dataset as evaldata
from infersweep.evals import plan as evalplan
from infersweep.evals import rescore, testset
from infersweep.evals.thresholds import GSM8K_TEST_QUESTIONS
from infersweep.results import collect as collecting
from tests import resultsrun
from tests.ghdouble import GitHubDouble

HEAD = "a1" * 20
OLD = "b2" * 20
PR = 17
RUN = 33825304569
FULL = "full-sweep-fail-fast"
LABELED_AT = "2026-11-30T09:00:00Z"
CREATED = "2026-12-01T10:00:00Z"


def zip_folder(folder: Path) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for p in sorted(folder.rglob("*")):
            if p.is_file():
                zf.write(p, p.relative_to(folder).as_posix())
    return buf.getvalue()


def zip_members(members: list[tuple[zipfile.ZipInfo | str, bytes]]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in members:
            zf.writestr(name, data)
    return buf.getvalue()


def matrix_row(concs=(4, 8), run_eval=True) -> dict:
    row = resultsrun.disagg_row(list(concs))
    if run_eval:
        row.update({"run-eval": True, "eval-conc": max(concs)})
    return row


def write_eval(folder: Path, row: dict, run_id: str, score_ok: bool = True, *,
               dataset: Path, wrong: int = 0, provenance: dict | None = None) -> None:
    """An eval folder that `eval check` judges for staging: all 1,319 questions of a
    GSM8K-format test split written at ``dataset`` (outside the artifact), re-scored exactly,
    with the split's and targets' digests and the question plan an `eval gsm8k` records.
    ``wrong``: that many first answers are wrong; ``provenance``: fields that replace the
    row's in the eval's provenance (everything else recomputed as the eval writes it)."""
    if not dataset.is_file():
        dataset.parent.mkdir(parents=True, exist_ok=True)
        dataset.write_text("".join(json.dumps(r) + "\n"
                                   for r in evaldata.problems(GSM8K_TEST_QUESTIONS, 7)))
    split = testset.read_rows(dataset, "test split")
    folder.mkdir(parents=True)
    filters = {"strict-match": {"regex": r"#### (\-?[0-9\.\,]+)", "group_select": 0,
                                "fallback": "[invalid]"},
               "flexible-extract": {"regex": r"(-?[$0-9.,]{2,})|(-?[0-9]+)",
                                    "group_select": -1, "fallback": "[invalid]"}}
    metric = {"ignore_case": True, "ignore_punctuation": False,
              "regexes_to_ignore": [",", r"\$", "(?s).*#### ", r"\.$"]}
    lines, sums = [], dict.fromkeys(rescore.FILTERS, 0.0)
    for i, (_question, target) in enumerate(split):
        answer = int(target.rsplit("#### ", 1)[1].replace(",", ""))
        miss = (not score_ok and i % 2 == 0) or i < wrong
        resp = f"Adding up gives #### {answer + (1 if miss else 0)}"
        extracted, verdicts = {}, {}
        for f in filters:
            got = rescore.extract(f, resp)  # the task's rules, which `filters` records
            extracted[f] = got
            verdicts[f] = rescore.exact_match(got, target)
            sums[f] += verdicts[f]
        lines.append(json.dumps({"doc_id": i, "target": target, "response": resp,
                                 "extracted": extracted, "exact_match": verdicts,
                                 "request": {"ok": True, "retries": 0}}))
    (folder / "samples.jsonl").write_text("\n".join(lines) + "\n")
    n = len(split)
    scores = {f: {"exact_match": sums[f] / n, "stderr": 0.01} for f in rescore.FILTERS}
    (folder / "eval.json").write_text(json.dumps({
        "eval-version": 2, "task": "gsm8k", "model": row["model"], "n-samples": n,
        "concurrency": row.get("eval-conc"), "scores": scores, "filters": filters,
        "metric": metric, "requests": {"total": n, "ok": n, "failed": 0, "retries": 0},
        "limit": None, "samples-file": "samples.jsonl",
        **evalplan.record(n, None, testset.digest_rows(split), str(dataset.resolve()),
                          testset.digest_targets((i, a) for i, (_, a) in enumerate(split))),
        "provenance": {"config-key": "dsv4-fp4-mi355x-atom-disagg",
                       "recipe-fingerprint": recipe_fingerprint(row),
                       "model-prefix": row["model-prefix"], "image": row["image"],
                       "run-id": run_id, "attempt": 1, **(provenance or {})}}))


def results_bmk(tmp: Path, row: dict, *, run_id: str = str(RUN), with_eval: bool = True,
                eval_ok: bool = True, eval_wrong: int = 0, eval_provenance: dict | None = None,
                extra_job: tuple[str, dict] | None = None, **job) -> bytes:
    """The collect job's upload: results/ (job folders, the first with the recipe.yaml it
    ran), evals/ and aggregate/, the aggregates rebuilt from what is there. ``extra_job``:
    (folder below results/, its client results by concurrency), a second job folder for the
    same points."""
    root = tmp / f"bmk-{run_id}-{len(list(tmp.glob('bmk-*')))}"
    manifest = resultsrun.write_job(root / "results", row, run_id=run_id, **job)
    (manifest.parent / "recipe.yaml").write_text(f"name: {manifest.parent.name}\n")
    if extra_job is not None:
        where, results = extra_job
        resultsrun.write_job(root / "results" / where, row, run_id=run_id, results=results,
                             **job)
    agg = collecting.aggregate(collecting.gather([str(root / "results")], allow_incomplete=True))
    (root / "aggregate").mkdir(parents=True)
    (root / "aggregate" / "results.json").write_bytes(collecting.to_json(agg))
    if with_eval:
        write_eval(root / "evals" / "eval_r1_1" / "eval", row, run_id, eval_ok,
                   dataset=tmp / "gsm8k" / "test.jsonl", wrong=eval_wrong,
                   provenance=eval_provenance)
        from infersweep.evals import collect as evalcollect

        rows = evalcollect.collect([str(root / "evals")])
        (root / "aggregate" / "evals.json").write_text(json.dumps(rows))
    return zip_folder(root)


def changelog_zip() -> bytes:
    meta = {"base_ref": "b" * 40, "head_ref": HEAD, "entries": [
        {"config-keys": ["dsv4-fp4-mi355x-atom-disagg"], "description": ["new recipe"],
         "pr-link": f"https://github.com/octo-org/infersweep/pull/{PR}"}]}
    return zip_members([("changelog_metadata.json", json.dumps(meta).encode())])


def rows_zip(rows: list[dict]) -> bytes:
    return zip_members([("sweep-rows.json", json.dumps(
        {"rows": {f"r{i}": r for i, r in enumerate(rows, 1)}}).encode())])


@dataclass
class Sweep:
    """A pull request with a finished, stageable sweep, in the double."""

    gh: GitHubDouble
    tmp: Path
    row: dict

    def add_run(self, run_id: int = RUN, *, artifacts: dict[str, bytes] | None = None,
                **run) -> dict:
        created = run.pop("created_at", CREATED)
        made = self.gh.add_run(run_id, head_sha=run.pop("head_sha", HEAD), created_at=created,
                               **run)
        if artifacts is None:
            artifacts = {"results_bmk": results_bmk(self.tmp, self.row, run_id=str(run_id)),
                         "changelog-metadata": changelog_zip(),
                         "sweep-rows": rows_zip([self.row])}
        for name, data in artifacts.items():
            self.gh.add_artifact(run_id, name, data)
        return made


def sweep(gh: GitHubDouble, tmp: Path, *, labels=(FULL,), fork: str | None = None,
          label_events=None) -> Sweep:
    events = label_events if label_events is not None else [
        ("labeled", name, LABELED_AT) for name in labels]
    gh.add_pull(PR, head_sha=HEAD, commits=[OLD, HEAD], labels=labels, fork=fork,
                label_events=events)
    gh.state.permissions.update({"maya": "maintain", "wendy": "write", "adam": "admin",
                                 "rita": "read", "tom": "triage"})
    return Sweep(gh, tmp, matrix_row())


def stage(run_cli, gh: GitHubDouble, tmp: Path, body: str, *, login: str = "maya",
          number: int = PR, extra=(), event: dict | None = None):
    """``infersweep stage`` on an issue_comment payload; (exit code, stdout, stderr)."""
    payload = event or gh.event(number, login, body)
    path = tmp / f"event-{len(list(tmp.glob('event-*')))}.json"
    path.write_text(json.dumps(payload))
    return run_cli("stage", "--event", path, "--event-name", "issue_comment",
                   "--repository", gh.state.repository, "--api-url", gh.url,
                   "--site-url", "https://octo-org.github.io/infersweep",
                   "--site-dir", tmp / "site", "--db", f"sqlite:///{tmp / 'store.db'}",
                   "--thresholds", thresholds_file(tmp),
                   "--step-summary", tmp / "summary.md", *extra)


def resultsrun_repo() -> Path:
    return Path(__file__).resolve().parents[3]


def thresholds_file(tmp: Path) -> Path:
    """The repository's thresholds file, with the split :func:`write_eval` generates pinned
    beside the real ones (`eval check` judges only against pinned splits)."""
    import yaml

    doc = yaml.safe_load((resultsrun_repo() / "configs" / "eval-thresholds.yaml").read_text())
    rows = [(r["question"], r["answer"]) for r in evaldata.problems(GSM8K_TEST_QUESTIONS, 7)]
    doc["datasets"]["gsm8k"].append({"name": "the staging tests' generated problems",
                                     "rows": len(rows), "sha256": testset.digest_rows(rows)})
    path = tmp / "eval-thresholds.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path
