"""`bench bundle`: deterministic bytes, only the client's modules, 3.10-compatible sources."""

from __future__ import annotations

import zipfile

import pytest

from infersweep.bench import bundle


def test_same_sources_same_bytes(tmp_path):
    a = bundle.build(tmp_path / "a" / "infersweep-bench.pyz")
    b = bundle.build(tmp_path / "b.pyz")
    assert a.path.read_bytes() == b.path.read_bytes() and a.sha256 == b.sha256
    assert (tmp_path / "b.pyz.sha256").read_text() == f"{b.sha256}  b.pyz\n"
    with zipfile.ZipFile(a.path) as zf:
        assert {i.date_time for i in zf.infolist()} == {bundle.FIXED_TIME}
        names = zf.namelist()
    assert names == sorted(names)
    assert a.path.read_bytes().startswith(b"#!/usr/bin/env python3\n")


def test_holds_only_what_serve_and_recompute_import():
    files, manifest = bundle.contents()
    ours = sorted(f for f in files if f.startswith("infersweep/"))
    assert "infersweep/bench/bundle.py" not in ours
    assert not [f for f in ours if f.split("/")[1] in ("launch", "matrix", "sim", "recipe",
                                                        "sweep", "config", "pins")]
    assert {"infersweep/bench/runner.py", "infersweep/bench/zipmain.py",
            "infersweep/atomic.py", "infersweep/clitypes.py", "infersweep/lifeline.py",
            "infersweep/diagnostics.py", "infersweep/progress.py"} <= set(ours)
    assert "click/__init__.py" in files and "licenses/click-LICENSE.txt" in files
    assert manifest["vendored"]["click"]["license"] == "BSD-3-Clause"
    assert set(manifest["files"]) == set(files) - {"BUNDLE.json"}


def test_every_bundled_source_parses_as_python_310():
    files, _ = bundle.contents()  # contents() itself refuses; this names any offender
    problems = [p for rel, data in files.items() if rel.endswith(".py")
                for p in bundle.py310_problems(data, rel)]
    assert problems == []


@pytest.mark.parametrize("source,fragment", [
    ("from enum import StrEnum\n", "enum.StrEnum is newer than Python 3.10"),
    ("import tomllib\n", "tomllib is newer"),
    ("from typing import Self\n", "typing.Self is newer"),
    ("import datetime\nx = datetime.UTC\n", "datetime.UTC is newer"),
    ("import asyncio\nasync def f():\n    async with asyncio.timeout(1):\n        pass\n",
     "asyncio.timeout is newer"),
    ("try:\n    pass\nexcept* ValueError:\n    pass\n", "only supported in Python 3.11"),
    ("raise ExceptionGroup('x', [ValueError()])\n", "ExceptionGroup is newer"),
    ("def f[T](x: T) -> T:\n    return x\n", "m.py:1:"),
])
def test_newer_than_310_is_named_with_its_place(source, fragment):
    problems = bundle.py310_problems(source.encode(), "m.py")
    assert problems and any(fragment in p for p in problems), problems


@pytest.mark.parametrize("source", [
    "try:\n    from enum import StrEnum\nexcept ImportError:\n    StrEnum = None\n",
    "import asyncio\ntry:\n    t = asyncio.timeout_at\nexcept AttributeError:\n    t = None\n",
    "match 1:\n    case 1:\n        pass\n",
    "from dataclasses import dataclass\n@dataclass(slots=True)\nclass A:\n    x: int | None\n",
])
def test_guarded_or_310_features_pass(source):
    assert bundle.py310_problems(source.encode(), "m.py") == []
