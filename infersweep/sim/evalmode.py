"""Eval mode: answer GSM8K-format questions from an answer key with a set accuracy.

This exercises an accuracy pipeline end to end (request -> answer -> extraction -> score);
it is a pipeline test, not a model. The prompt's *last* ``Question:`` (the one being asked,
after any few-shot exemplars) is looked up in the key. Exactly ``round(accuracy * N)`` of the
key's N questions, chosen by a seeded hash, are answered correctly; the rest get a wrong number.
"""

from __future__ import annotations

import hashlib
import json
import re

from infersweep.diagnostics import InputError

_ANS = re.compile(r"####\s*([-\d.,$]+)")


def _norm(text: str) -> str:
    return " ".join(text.split())


class AnswerKey:
    def __init__(self, path: str, accuracy: float, seed: int = 0):
        if not (0.0 <= accuracy <= 1.0):
            raise InputError(f"--eval-accuracy must be in [0, 1] (got {accuracy})")
        self.answers: dict[str, str] = {}
        try:
            with open(path, encoding="utf-8") as f:
                for n, line in enumerate(f, 1):
                    if not line.strip():
                        continue
                    try:
                        row = json.loads(line)
                        m = _ANS.search(row["answer"])
                        self.answers[_norm(row["question"])] = m.group(1).replace(",", "").rstrip(".")
                    except (ValueError, KeyError, AttributeError, TypeError) as exc:
                        raise InputError(f"{path}:{n}: not a GSM8K row with 'question' and an "
                                         f"'answer' ending in '#### N' ({exc})") from exc
        except OSError as exc:
            raise InputError(f"--eval-answer-key {path}: {exc.strerror}") from exc
        except UnicodeDecodeError as exc:
            raise InputError(f"--eval-answer-key {path}: not UTF-8 text (byte {exc.start} "
                             "cannot be decoded; expected GSM8K-format JSONL)") from exc
        if not self.answers:
            raise InputError(f"{path}: the answer key is empty")
        ranked = sorted(self.answers, key=lambda q: hashlib.sha256(f"{seed}:{q}".encode()).digest())
        k = round(accuracy * len(ranked))
        self.correct = set(ranked[:k])
        # longest questions first so a question that is a prefix of another cannot shadow it
        self._by_len = sorted(self.answers, key=len, reverse=True)

    def find(self, prompt: str) -> str | None:
        text = _norm(prompt)
        idx = text.rfind("Question:")
        tail = text[idx + len("Question:"):] if idx >= 0 else text
        for q in self._by_len:
            if q in tail:
                return q
        return None

    def respond(self, prompt: str) -> list[str] | None:
        """Answer words (one per token), or None when the prompt holds no known question."""
        q = self.find(prompt)
        if q is None:
            return None
        ans = self.answers[q]
        if q not in self.correct:
            try:
                ans = str(int(float(ans)) + 1)
            except ValueError:
                ans = ans + "1"
        return f"Let me work through this step by step. The result is {ans}.\n#### {ans}".split(" ")
