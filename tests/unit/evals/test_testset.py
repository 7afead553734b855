from __future__ import annotations

import json

import pytest

from infersweep.diagnostics import InputError
from infersweep.evals import dataset, testset


def test_the_split_digest_is_of_content_not_of_bytes(tmp_path):
    rows = [(r["question"], r["answer"]) for r in dataset.problems(5, 1)]
    compact = tmp_path / "a.jsonl"
    compact.write_text("".join(json.dumps({"question": q, "answer": a}, separators=(",", ":"))
                               + "\n" for q, a in rows))
    spaced = tmp_path / "b.jsonl"  # other key order, spacing, a blank line, extra fields
    spaced.write_text("\n".join(json.dumps({"answer": a, "x": 1, "question": q}, indent=None)
                                for q, a in rows) + "\n\n")
    assert testset.read_rows(compact, "s") == testset.read_rows(spaced, "s") == rows
    digest = testset.digest_rows(rows)
    docs = [{"question": q, "answer": a} for q, a in rows]  # lm-eval's documents
    assert testset.digest_rows(testset.from_docs(docs)) == digest
    assert testset.digest_rows(rows[::-1]) != digest
    assert testset.digest_rows(rows[:-1] + [(rows[-1][0], rows[-1][1] + " ")]) != digest


def test_the_targets_digest_is_in_doc_id_order():
    a = testset.digest_targets([(0, "#### 1"), (1, "#### 2")])
    assert a == testset.digest_targets([(1, "#### 2"), (0, "#### 1")])
    assert a != testset.digest_targets([(0, "#### 2"), (1, "#### 1")])


@pytest.mark.parametrize(("text", "said", "rule"), [
    ('{"question": "q", "answer": "a #### 1"}\n{"question": 1}\n', ":2:1: [eval-dataset] s: not "
     "a GSM8K row", "eval-dataset"),
    ('{"question": "q", "answer": "a #### 1"}\nnot json\n', ":2:1: [eval-dataset] s: not JSON",
     "eval-dataset"),
    ("\n\n", ": [eval-dataset] s: no rows", "eval-dataset"),
])
def test_a_split_that_is_not_gsm8k_is_a_located_error(tmp_path, text, said, rule):
    path = tmp_path / "t.jsonl"
    path.write_text(text)
    with pytest.raises(InputError) as exc:
        testset.read_rows(path, "s")
    assert exc.value.diagnostics[0].rule == rule and f"{path}{said}" in str(exc.value)


def test_a_split_that_is_not_there_says_so(tmp_path):
    with pytest.raises(InputError) as exc:
        testset.read_rows(tmp_path / "none.jsonl", "s")
    assert "[eval-dataset-missing] s: file not found" in str(exc.value)
    with pytest.raises(InputError) as exc:
        testset.read_rows(tmp_path, "s")
    assert "[eval-dataset] s: a folder, not a file" in str(exc.value)
