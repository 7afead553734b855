"""The package's layers, checked on every import (top level or inside a function).

The results side: the store below the report, both below staging. A module may import its own
layer and the layers below it, never one above: the store knows nothing of the report or of
GitHub, and the report knows nothing of the staging flow.

The running side: ``rowjobs`` (matrix rows run as jobs on an executor, manifests, reruns) below
the two commands built on it, ``sweep`` (``sweep run``) and ``launch`` (the CI entry point);
neither command imports the other.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "infersweep"
ABOVE = {"store": ("infersweep.report", "infersweep.stage"),
         "report": ("infersweep.stage",),
         "rowjobs": ("infersweep.sweep", "infersweep.launch"),
         "sweep": ("infersweep.launch",),
         "launch": ("infersweep.sweep",)}


def _imports(path: Path) -> list[tuple[int, str]]:
    """Every module ``path`` imports (top level or inside a function), with its line."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
            found += [(node.lineno, f"{node.module}.{a.name}") for a in node.names]
    return found


@pytest.mark.parametrize("layer", sorted(ABOVE))
def test_no_module_imports_a_layer_it_may_not(layer):
    files = sorted((PACKAGE / layer).rglob("*.py"))
    assert files, f"no modules under infersweep/{layer}"
    wrong = [f"{p.relative_to(PACKAGE.parent)}:{line}: {name}"
             for p in files for line, name in _imports(p)
             if any(name == a or name.startswith(a + ".") for a in ABOVE[layer])]
    assert wrong == []


def test_the_layering_test_sees_an_upward_import(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from infersweep.stage import flow\n")
    assert (2, "infersweep.stage") in _imports(bad)
