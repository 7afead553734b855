"""An eval's summary (``eval.json``), read with the fields ``eval collect`` and ``eval check``
both need; a file that lacks one is a located ``[eval-summary]`` error."""

from __future__ import annotations

from pathlib import Path

import orjson

from infersweep.diagnostics import Diagnostic, InputError
from infersweep.evals import rescore
from infersweep.evals.run import EVAL_FILE

REQUIRED = ("eval-version", "task", "model", "n-samples", "scores", "filters", "metric",
            "requests")


def load_eval(folder: Path) -> dict:
    """``eval.json`` with the fields ``eval collect`` and ``eval check`` both read."""
    path = str(Path(folder) / EVAL_FILE)

    def bad(line: int, message: str, hint: str = "") -> InputError:
        return InputError(Diagnostic(path, line, 1 if line else 0, message, hint, "eval-summary"))

    try:
        data = orjson.loads(Path(path).read_bytes())
    except FileNotFoundError:
        raise bad(0, "no eval summary here", "give the output folder of a finished `eval "
                  "gsm8k`") from None
    except orjson.JSONDecodeError as exc:
        raise bad(0, f"not JSON ({exc})") from None
    except OSError as exc:
        raise bad(0, f"cannot read ({exc.strerror})") from None
    if not isinstance(data, dict):
        raise bad(1, "expected a JSON object")
    missing = [k for k in REQUIRED if k not in data]
    if missing:
        raise bad(1, f"missing {', '.join(missing)}", "was it written by `infersweep eval gsm8k`?")
    for key in ("scores", "filters"):
        have = data[key] if isinstance(data[key], dict) else {}
        absent = [f for f in rescore.FILTERS if f not in have]
        if absent:
            raise bad(1, f"'{key}' lacks the {' and '.join(absent)} filter"
                      f"{'s' if len(absent) > 1 else ''}",
                      "a GSM8K eval is scored by both strict-match and flexible-extract")
    try:
        for f in rescore.FILTERS:
            spec = data["filters"][f]
            if not (isinstance(spec.get("regex"), str) and isinstance(spec.get("group_select"), int)
                    and isinstance(spec.get("fallback"), str)):
                raise TypeError(f)
            float(data["scores"][f]["exact_match"])
        for key, kind in (("metric", dict), ("requests", dict), ("model", str)):
            if not isinstance(data[key], kind):
                raise TypeError(key)
    except (TypeError, KeyError, AttributeError, ValueError) as exc:
        raise bad(1, f"malformed filter, score, metric, requests or model entry ({exc})") \
            from None
    return data
