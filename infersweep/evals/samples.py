"""An eval's samples file: found only inside the eval's folder, read line by line.

``eval.json`` names its samples file (``samples-file``). The name is evidence the check does
not take on trust: it must be a relative path that stays inside the folder, with no ``..``
and no symbolic link (of the file or of a folder on its way) leading out, so an eval cannot
be judged on samples that live elsewhere.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

import orjson

from infersweep.diagnostics import Diagnostic, InputError

OUTSIDE_HINT = ("an eval is judged only on the samples its own folder holds: write them to "
                "samples.jsonl beside eval.json, as `eval gsm8k` does")


def inside(folder: Path, name: object, eval_path: str) -> Path:
    """The samples file ``name`` of the eval in ``folder``; ``[eval-samples-outside]`` if it
    is not a relative path inside the folder."""
    def outside(why: str) -> InputError:
        return InputError(Diagnostic(eval_path, 1, 1, f"samples-file {name!r} {why}",
                                     OUTSIDE_HINT, "eval-samples-outside"))

    if not isinstance(name, str) or not name.strip():
        raise outside("is not a file name")
    pure = PurePosixPath(name.replace("\\", "/"))
    if pure.is_absolute() or Path(name).is_absolute():
        raise outside("is an absolute path")
    if ".." in pure.parts:
        raise outside("climbs out of the eval's folder ('..')")
    path = Path(folder, *pure.parts)
    try:
        real, root = path.resolve(), Path(folder).resolve()
    except (OSError, RuntimeError):  # a symlink loop
        raise outside("cannot be resolved (a symbolic link loop)") from None
    if real == root:
        raise outside("is the eval's folder itself")
    if not real.is_relative_to(root):
        raise outside(f"leads out of the eval's folder through a symbolic link (to {real})")
    return path


def _malformed(s) -> str:
    if not isinstance(s, dict):
        return "not a JSON object"
    doc = s.get("doc_id")
    if not isinstance(doc, int) or isinstance(doc, bool) or doc < 0:
        return f"doc_id {doc!r} is not a document number"
    for key, kind in (("target", str), ("extracted", dict), ("exact_match", dict)):
        if not isinstance(s.get(key), kind):
            return f"'{key}' is missing or not a{'n object' if kind is dict else ' string'}"
    if "response" not in s:
        return "'response' is missing"
    return ""


def load(path: Path) -> list[tuple[int, dict]]:
    """``(line, sample)`` of every non-empty line; ``[eval-samples]`` on the first bad one."""
    p = str(path)
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        raise InputError(Diagnostic(p, 0, 0, "samples file not found",
                                    "the eval's samples are needed to re-score it",
                                    "eval-samples")) from None
    except OSError as exc:
        raise InputError(Diagnostic(p, 0, 0, f"cannot read ({exc.strerror})", "",
                                    "eval-samples")) from None
    out = []
    for lineno, line in enumerate(raw.splitlines(), 1):
        if not line.strip():
            continue
        try:
            s = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise InputError(Diagnostic(p, lineno, 1, f"not JSON ({exc})", "",
                                        "eval-samples")) from None
        why = _malformed(s)
        if why:
            raise InputError(Diagnostic(p, lineno, 1, f"not a sample line: {why}",
                                        "expected doc_id, target, response, extracted, "
                                        "exact_match", "eval-samples"))
        out.append((lineno, s))
    return out
