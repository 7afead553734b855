"""What the client runs on: the fast libraries where installed, stdlib fallbacks otherwise.

The client must also run on an engine container's bare interpreter (see
docs/bench-and-sim.md, "Running inside the engine's container"). Each optional library has one
stand-in: json for orjson, asyncio's default event loop for uvloop, pure-Python statistics and
generator (:mod:`infersweep.bench.purestats`, :mod:`infersweep.bench.seeded`) for numpy, plain
progress lines for rich. :func:`describe` names what is in use; the result carries it in
``infersweep.runtime``. With every library present nothing here changes the fast path.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import os
import platform

try:
    import orjson
except ImportError:  # pragma: no cover - exercised by the bundle tests on a bare interpreter
    orjson = None

try:
    import numpy
except ImportError:  # pragma: no cover - exercised by the bundle tests on a bare interpreter
    numpy = None

JSON = "orjson" if orjson is not None else "stdlib"
STATS = "numpy" if numpy is not None else "pure-python"


def _has(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _finite(obj):
    """orjson writes NaN and infinities as null; the stdlib would write invalid JSON."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


def _tolist(obj):
    if hasattr(obj, "tolist"):  # numpy arrays and scalars, when numpy is there but orjson not
        return obj.tolist()
    raise TypeError(f"Type is not JSON serializable: {type(obj).__name__}")


if orjson is not None:
    JSONDecodeError = orjson.JSONDecodeError
    loads = orjson.loads

    def dumps(obj) -> bytes:
        """Compact JSON bytes (numpy arrays allowed)."""
        return orjson.dumps(obj, option=orjson.OPT_SERIALIZE_NUMPY)

    def dumps_indented(obj) -> bytes:
        return orjson.dumps(obj, option=orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY)
else:
    JSONDecodeError = json.JSONDecodeError
    _decoder = json.JSONDecoder(parse_constant=lambda name: _reject(name))
    _encoder = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False,
                                default=_tolist)

    def _reject(name: str):
        raise ValueError(f"{name} is not JSON")

    def loads(data):
        """As strict as orjson: bytes must be UTF-8; NaN and Infinity are not JSON."""
        try:
            text = data.decode() if isinstance(data, (bytes, bytearray, memoryview)) else data
            return _decoder.decode(text)
        except UnicodeDecodeError as exc:
            raise json.JSONDecodeError(f"not UTF-8: {exc.reason}", "", 0) from None
        except ValueError as exc:
            if isinstance(exc, json.JSONDecodeError):
                raise
            raise json.JSONDecodeError(str(exc), "", 0) from None

    def dumps(obj) -> bytes:
        """Compact JSON bytes, as orjson writes them (no spaces, UTF-8, NaN as null)."""
        try:
            return _encoder.encode(obj).encode()
        except ValueError:
            return _encoder.encode(_finite(obj)).encode()

    def dumps_indented(obj) -> bytes:
        return json.dumps(_finite(obj), indent=2, ensure_ascii=False, default=_tolist).encode()


def install_event_loop() -> str:
    """Use uvloop where installed; return the loop's name."""
    try:
        import uvloop
    except ImportError:
        return "asyncio"
    uvloop.install()
    return "uvloop"


_BUILD: dict | None = None


def build() -> dict:
    """Which client build this is: an installed package, or a bundle and its file's sha256."""
    global _BUILD
    if _BUILD is None:
        archive = getattr(globals().get("__loader__"), "archive", None)  # zipimport
        if archive and os.path.isfile(archive):
            digest = hashlib.sha256()
            with open(archive, "rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    digest.update(block)
            _BUILD = {"kind": "bundle", "file": os.path.basename(archive),
                      "sha256": digest.hexdigest()}
        else:
            _BUILD = {"kind": "installed"}
    return _BUILD


def describe() -> dict:
    """The interpreter and the implementation behind each optional library."""
    return {
        "python": platform.python_version(),
        "json": JSON,
        "loop": "uvloop" if _has("uvloop") else "asyncio",
        "stats": STATS,
        "progress": "rich" if _has("rich") else "plain",
    }
