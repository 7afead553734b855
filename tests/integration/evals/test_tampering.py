"""`eval check` on honest eval folders edited to pass: each edit is one a checker that trusts
the eval's own account would pass (``naive_problems`` is that checker: counts, re-scoring the
samples against their own targets, the request flags as written), and each is refused by
the rule that names what was done."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from infersweep.evals import rescore, testset
from tests import evalscoring
from tests.integration.evals.conftest import SCALED
from tests.unit.evals import evalfolder

pytestmark = pytest.mark.integration

STRICT = "strict-match"


def load(folder: Path) -> tuple[dict, list[dict]]:
    summary = json.loads((folder / "eval.json").read_text())
    lines = (folder / summary["samples-file"]).read_text().splitlines()
    return summary, [json.loads(x) for x in lines if x.strip()]


def save(folder: Path, summary: dict, samples: list[dict], name: str = "samples.jsonl") -> None:
    (folder / "eval.json").write_text(json.dumps(summary, indent=2))
    (folder / name).write_text("".join(json.dumps(s) + "\n" for s in samples))


def refit(summary: dict, samples: list[dict]) -> None:
    """What a forger does after editing samples: every saved extraction, verdict, score and
    count made consistent with the samples as they now are (scored on their own targets)."""
    sums = dict.fromkeys(rescore.FILTERS, 0.0)
    for s in samples:
        for f in rescore.FILTERS:
            got = evalscoring.extract(summary["filters"][f], s["response"])
            s["extracted"][f] = got
            s["exact_match"][f] = evalscoring.exact_match(got, s["target"], summary["metric"])
            sums[f] += s["exact_match"][f]
    for f in rescore.FILTERS:
        summary["scores"][f]["exact_match"] = sums[f] / len(samples)
    summary["n-samples"] = len(samples)


def naive_problems(folder: Path, threshold: float) -> list[str]:
    """The checks of an `eval check` that believes the folder: what the tampering must pass."""
    summary, samples = load(folder)
    problems = []
    if summary["n-samples"] != len(samples):
        problems.append("n-samples")
    if summary["requests"].get("failed"):
        problems.append("failed requests")
    sums = dict.fromkeys(rescore.FILTERS, 0.0)
    for s in samples:
        if not (s.get("request") or {}).get("ok", True) or not str(s["response"]).strip():
            problems.append(f"doc {s['doc_id']}: request")
        for f in rescore.FILTERS:
            got = evalscoring.extract(summary["filters"][f], s["response"])
            verdict = evalscoring.exact_match(got, s["target"], summary["metric"])
            sums[f] += verdict
            if got != s["extracted"][f] or verdict != s["exact_match"][f]:
                problems.append(f"doc {s['doc_id']}: re-score")
    for f in rescore.FILTERS:
        score = summary["scores"][f]["exact_match"]
        if abs(sums[f] / len(samples) - score) > 1e-9 or score < threshold:
            problems.append(f"{f} score")
    return problems


@pytest.fixture
def check(run_cli, tmp_path):
    """`eval check` with a lenient threshold (0.5), --scope local unless told otherwise."""
    limits = evalfolder.thresholds(tmp_path / "thresholds.yaml", 0.5)

    def run(folder: Path, *args: str, scope: str | None = "local"):
        scoped = ("--scope", scope) if scope else ()
        return run_cli("eval", "check", folder, "--thresholds", limits, *scoped, *args)

    return run


def wrong(samples: list[dict]) -> list[dict]:
    return [s for s in samples if not s["exact_match"][STRICT]]


def test_the_honest_eval_passes_as_a_scaled_down_run(honest, check):
    assert naive_problems(honest, 0.5) == []
    code, out, _ = check(honest)
    assert code == 0, out
    assert f"over {SCALED} of 1,319 questions (scaled down) (--scope local)" in out
    _, samples = load(honest)
    assert wrong(samples), "the simulator at 90 % should answer some questions wrongly"


@pytest.mark.parametrize("shrink_plan", [False, True])
def test_deleting_the_wrong_samples_is_refused(honest, copy_of, check, shrink_plan):
    folder = copy_of(honest)
    summary, samples = load(folder)
    kept = [s for s in samples if s["exact_match"][STRICT]]
    refit(summary, kept)
    if shrink_plan:  # the limit, the plan and the request total say 63 too
        n = len(kept)
        summary["limit"] = summary["plan"]["limit"] = summary["plan"]["questions"] = n
        summary["requests"].update(total=n, ok=n)
    save(folder, summary, kept)
    assert naive_problems(folder, 0.5) == []
    code, out, _ = check(folder)
    assert code == 1
    missing = len(samples) - len(kept)
    if shrink_plan:
        assert "[eval-unexpected-doc]" in out or "[eval-samples-missing]" in out, out
    else:
        assert (f"ev/samples.jsonl: [eval-samples-missing] {missing} of the {SCALED} planned "
                "questions have no sample") in out, out
        assert "[eval-request-count] requests total 66" in out


def test_a_correct_sample_duplicated_in_place_of_a_wrong_one_is_refused(honest, copy_of, check):
    folder = copy_of(honest)
    summary, samples = load(folder)
    good = next(s for s in samples if s["exact_match"][STRICT])
    forged = [json.loads(json.dumps(good)) if not s["exact_match"][STRICT] else s
              for s in samples]
    refit(summary, forged)
    save(folder, summary, forged)
    assert naive_problems(folder, 0.5) == []
    code, out, _ = check(folder)
    assert code == 1
    line = next(i for i, s in enumerate(forged, 1) if s is not good and s["doc_id"] ==
                good["doc_id"])
    assert (f"samples.jsonl:{line}:1: [eval-duplicate-doc] doc {good['doc_id']} again "
            f"(first on line {forged.index(good) + 1})") in out, out
    assert "[eval-samples-missing]" in out


def test_a_three_question_eval_is_refused_for_staging(honest, copy_of, check, gsm8k):
    """Even made whole (limit, plan, request counts, targets digest all for 3 questions)."""
    folder = copy_of(honest)
    summary, samples = load(folder)
    three = samples[:3]
    refit(summary, three)
    summary["limit"] = summary["plan"]["limit"] = summary["plan"]["questions"] = 3
    summary["requests"].update(total=3, ok=3, failed=0)
    summary["targets-sha256"] = testset.digest_targets((s["doc_id"], s["target"]) for s in three)
    save(folder, summary, three)
    assert naive_problems(folder, 0.0) == []
    code, out, _ = check(folder, scope=None)  # the default: judged for staging
    assert code == 1
    assert ("ev/eval.json:1:1: [eval-too-few-questions] the eval asked the first 3 of 1,319 "
            "questions (--limit 3); judged for staging, an eval of m needs at least 1,319 "
            "(the full test split)") in out, out
    assert "`eval check --scope local`" in out


@pytest.mark.parametrize("recompute_digest", [False, True])
def test_targets_rewritten_to_the_models_answers_are_refused(honest, copy_of, check,
                                                            recompute_digest):
    folder = copy_of(honest)
    summary, samples = load(folder)
    bad = wrong(samples)
    for s in bad:
        answer = s["extracted"][STRICT]
        if answer == "[invalid]":
            answer = s["extracted"]["flexible-extract"]
        s["target"] = f"#### {answer}"
    refit(summary, samples)
    if recompute_digest:
        summary["targets-sha256"] = testset.digest_targets(
            (s["doc_id"], s["target"]) for s in samples)
    save(folder, summary, samples)
    assert naive_problems(folder, 0.5) == []
    assert summary["scores"][STRICT]["exact_match"] == 1.0
    code, out, _ = check(folder)
    assert code == 1
    first = samples.index(bad[0]) + 1
    assert (f"samples.jsonl:{first}:1: [eval-target-mismatch] doc {bad[0]['doc_id']}: target "
            f"'{bad[0]['target']}' is not the split's answer") in out, out
    assert ("[eval-targets-digest]" in out) is recompute_digest
    assert "[eval-score-mismatch] strict-match score 1.0000 is not reproduced" in out


def _forged_elsewhere(honest: Path, where: Path) -> Path:
    """All-correct samples for the honest eval's questions, written at ``where``."""
    summary, samples = load(honest)
    for s in samples:
        s["response"] = "So the answer is " + s["target"].rsplit("#### ", 1)[1] + ".\n" + \
            s["target"][s["target"].rindex("####"):]
    refit(summary, samples)
    where.parent.mkdir(parents=True, exist_ok=True)
    where.write_text("".join(json.dumps(s) + "\n" for s in samples))
    return where


@pytest.mark.parametrize("how", ["dotdot", "absolute", "symlink", "symlinked-folder"])
def test_samples_outside_the_folder_are_refused(honest, copy_of, check, tmp_path, how):
    folder = copy_of(honest)
    forged = _forged_elsewhere(honest, tmp_path / "elsewhere" / "samples.jsonl")
    summary, _ = load(folder)
    for f in rescore.FILTERS:
        summary["scores"][f]["exact_match"] = 1.0
    if how == "dotdot":
        summary["samples-file"] = os.path.relpath(forged, folder)
    elif how == "absolute":
        summary["samples-file"] = str(forged)
    elif how == "symlink":
        (folder / "samples.jsonl").unlink()
        (folder / "samples.jsonl").symlink_to(forged)
    else:
        (folder / "sub").symlink_to(forged.parent, target_is_directory=True)
        summary["samples-file"] = "sub/samples.jsonl"
    (folder / "eval.json").write_text(json.dumps(summary))
    assert naive_problems(folder, 0.5) == []
    code, _, err = check(folder)
    assert code == 1
    assert "ev/eval.json:1:1: [eval-samples-outside] samples-file" in err, err
    assert "as `eval gsm8k` does" in err


def test_failed_requests_without_the_ok_flag_are_refused(with_failures, copy_of, check):
    code, out, _ = check(with_failures)
    summary, samples = load(with_failures)
    failed = [s for s in samples if s["request"]["ok"] is False]
    assert code == 1 and failed
    assert "[eval-request-failed]" in out and "not a wrong answer" in out

    folder = copy_of(with_failures)
    for s in samples:
        if s["request"]["ok"] is False:
            del s["request"]["ok"]
            s["response"] = s["target"][s["target"].rindex("####"):]
    refit(summary, samples)
    q = summary["requests"]
    q.update(ok=q["total"], failed=0, failures={})
    save(folder, summary, samples)
    assert naive_problems(folder, 0.5) == []
    code, out, _ = check(folder)
    assert code == 1
    assert "0 failed requests" in out  # what the summary claims
    first = next(i for i, s in enumerate(samples, 1) if "ok" not in s["request"])
    assert (f"samples.jsonl:{first}:1: [eval-request-unflagged] doc {samples[first - 1]['doc_id']}"
            ": the request's record does not say it was answered (ok is None)") in out, out
    assert (f"[eval-request-count] requests total {SCALED}, ok {SCALED}, failed 0, but the plan "
            f"and the samples give total {SCALED}, ok {SCALED - len(failed)}, "
            f"failed {len(failed)}") in out, out


def test_a_forged_split_is_caught_by_the_dataset_given(honest, copy_of, check, tmp_path, gsm8k):
    """The recorded test file points at a split whose answers are the model's: consistent in
    itself (digests recomputed), refused as a split the thresholds file does not pin, and
    against the split the checker names."""
    folder = copy_of(honest)
    summary, samples = load(folder)
    rows = testset.read_rows(gsm8k[0], "split")
    for s in wrong(samples):
        answer = s["extracted"]["flexible-extract"]
        s["target"] = rows[s["doc_id"]][1].rsplit("#### ", 1)[0] + f"#### {answer}"
        rows[s["doc_id"]] = (rows[s["doc_id"]][0], s["target"])
    fake = tmp_path / "fake" / "test.jsonl"
    fake.parent.mkdir()
    fake.write_text("".join(json.dumps({"question": q, "answer": a}) + "\n" for q, a in rows))
    refit(summary, samples)
    summary["dataset"].update({"test-file": str(fake), "sha256": testset.digest_rows(rows)})
    summary["targets-sha256"] = testset.digest_targets((s["doc_id"], s["target"]) for s in samples)
    save(folder, summary, samples)
    assert naive_problems(folder, 0.5) == []
    code, out, _ = check(folder)  # judged against its own split, it is consistent ...
    assert code == 1  # ... but that split is not the one the repository pins
    assert f"[eval-dataset-unpinned] the test split {fake} (1,319 rows" in out, out
    assert "[eval-target-mismatch]" not in out and "[eval-dataset-digest]" not in out
    code, out, _ = check(folder, "--dataset", gsm8k[0])
    assert code == 1
    assert "[eval-dataset-digest] the test split" in out and "(--dataset)" in out, out
    assert "[eval-target-mismatch]" in out and "[eval-targets-digest]" in out


def test_a_missing_split_is_refused_with_how_to_give_it(honest, copy_of, check, gsm8k,
                                                       monkeypatch):
    folder = copy_of(honest)
    summary, samples = load(folder)
    summary["dataset"]["test-file"] = "/nonexistent/gsm8k/test.jsonl"
    save(folder, summary, samples)
    code, out, err = check(folder)
    assert code == 1
    assert ("ev/eval.json:1:1: [eval-dataset-missing] the test split to check this eval "
            "against is not here: the recorded test file /nonexistent/gsm8k/test.jsonl is not "
            "on this machine (give the GSM8K test split the eval ran on (JSONL) with --dataset "
            f"FILE or INFERSWEEP_EVAL_DATASET=FILE; its rows have sha256 "
            f"{summary['dataset']['sha256']})") in err, err
    monkeypatch.setenv("INFERSWEEP_EVAL_DATASET", str(gsm8k[0]))
    code, out, _ = check(folder)
    assert code == 0, out
    assert f"test split: {gsm8k[0]} (--dataset)" in out
