"""A small GSM8K-format problem set the project writes itself (for tests and smoke runs).

Each problem is a two-step sum with a unique wording, its answer in GSM8K's form
(reasoning, then ``#### N``), so lm-eval's prompts, filters and metric run unchanged.
"""

from __future__ import annotations

import atexit
import functools
import json
import random
import shutil
import tempfile
from pathlib import Path

from infersweep.atomic import write_atomic

_NAMES = ["Ava", "Ben", "Chloe", "Dev", "Elif", "Femi", "Goran", "Hana", "Ivo", "Jun"]
_ITEMS = ["apples", "stamps", "marbles", "books", "shells", "coins", "pencils", "cards"]


def problems(n: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        name, item = rng.choice(_NAMES), rng.choice(_ITEMS)
        a, b, c = rng.randint(2, 90), rng.randint(2, 90), rng.randint(1, 40)
        total = a + b - c
        q = (f"{name} has {a} {item} and buys {b} more on day {seed}-{i}. "
             f"{name} then gives away {c}. How many {item} does {name} have now?")
        ans = (f"{name} has {a} + {b} = <<{a}+{b}={a + b}>>{a + b} {item}.\n"
               f"After giving away {c}: {a + b} - {c} = <<{a + b}-{c}={total}>>{total}.\n"
               f"#### {total:,}")
        rows.append({"question": q, "answer": ans})
    return rows


# the set a local job's eval runs when no GSM8K files are given (infersweep/rowjobs/localeval.py)
BUILTIN_TEST, BUILTIN_TRAIN, BUILTIN_SEED = 200, 50, 7


@functools.cache
def builtin_test_file() -> Path:
    """The built-in test split, regenerated into a temporary file: evidence ``eval check``
    can trust wherever it runs, since this code, not the run, writes it."""
    folder = Path(tempfile.mkdtemp(prefix="infersweep-builtin-gsm8k-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    test, _ = write(folder, n_test=BUILTIN_TEST, n_train=BUILTIN_TRAIN, seed=BUILTIN_SEED)
    return test


def write(folder: Path, n_test: int = 40, n_train: int = 20, seed: int = 7) -> tuple[Path, Path]:
    """``test.jsonl`` and ``train.jsonl`` in ``folder``; returns their paths."""
    folder = Path(folder)
    out = []
    for name, n, s in (("test", n_test, seed), ("train", n_train, seed + 1)):
        path = folder / f"{name}.jsonl"
        write_atomic(path, "".join(json.dumps(r) + "\n" for r in problems(n, s)), "data set")
        out.append(path)
    return out[0], out[1]
