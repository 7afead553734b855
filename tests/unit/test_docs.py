"""The documentation stays true to the code."""

from __future__ import annotations

import importlib.util
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_cli_reference_is_current():
    spec = importlib.util.spec_from_file_location("cli_reference",
                                                  REPO / "scripts" / "cli_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert (REPO / "docs" / "cli.md").read_text() == module.render(), (
        "docs/cli.md is stale: run `python scripts/cli_reference.py > docs/cli.md`")


def test_readme_quick_start_commands_exist():
    readme = (REPO / "README.md").read_text()
    quick = readme.split("## Quick start", 1)[1].split("##", 1)[0]
    makefile = (REPO / "Makefile").read_text()
    for target in ("run", "test"):
        assert f"make {target}" in quick
        assert f"\n{target}:" in makefile
    assert "make test" in (REPO / ".ci" / "run").read_text()


def test_docs_links_resolve():
    for doc in [REPO / "README.md", *(REPO / "docs").glob("*.md")]:
        for target in __import__("re").findall(r"\]\(((?:docs/)?[\w./-]+\.md)\)", doc.read_text()):
            base = REPO if doc.name == "README.md" else doc.parent
            assert (base / target).exists(), f"{doc.name} links to missing {target}"
