import json
from pathlib import Path

import pytest

from infersweep.diagnostics import InputError
from infersweep.sim.evalmode import AnswerKey
from infersweep.sim.faults import FaultConfig, decide

GSM8K = Path(__file__).resolve().parents[3].parent / "shared" / "data" / "gsm8k" / "test.jsonl"


def test_fault_decisions_are_seeded_and_near_rate():
    cfg = FaultConfig(fail_rate=0.2, seed=5)
    a = [decide(cfg, i)[0] for i in range(2000)]
    assert a == [decide(cfg, i)[0] for i in range(2000)]
    assert 0.15 < sum(a) / 2000 < 0.25
    assert decide(FaultConfig(), 1) == (False, None)


def _key(tmp_path, n=40):
    rows = [{"question": f"How many apples does person {i} have?", "answer": f"So.\n#### {i * 3}"}
            for i in range(n)]
    p = tmp_path / "key.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in rows))
    return p, rows


def test_eval_mode_exact_accuracy_and_last_question(tmp_path):
    p, rows = _key(tmp_path)
    key = AnswerKey(str(p), accuracy=0.75, seed=1)
    right = 0
    for r in rows:
        prompt = f"Question: {rows[0]['question']}\nAnswer: #### 0\n\nQuestion: {r['question']}\nAnswer:"
        words = key.respond(prompt)
        got = " ".join(words).rsplit("#### ", 1)[1]
        right += got == r["answer"].rsplit("#### ", 1)[1]
    assert right == 30
    assert key.respond("Question: something else entirely") is None


def test_answer_key_errors(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "q"}\n')
    with pytest.raises(InputError, match="bad.jsonl:1"):
        AnswerKey(str(bad), 0.9)
    with pytest.raises(InputError, match="eval-accuracy"):
        AnswerKey(str(bad), 1.5)


@pytest.mark.skipif(not GSM8K.is_file(), reason="GSM8K data (../shared/data/gsm8k) not present")
def test_eval_mode_on_gsm8k_test_split():
    key = AnswerKey(str(GSM8K), accuracy=0.9, seed=0)
    assert len(key.answers) == 1319
    assert len(key.correct) == round(0.9 * 1319)
