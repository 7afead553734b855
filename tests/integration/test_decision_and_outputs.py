"""``--decision`` as a file, ``-`` or JSON text, and output paths that cannot be written, on
the real changelog gate of a real repository."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.integration.test_sweep_wiring import pr_checkout  # noqa: F401 - a fixture

pytestmark = pytest.mark.integration


def decision_for(head: str) -> dict:
    return {"decision": "run", "run": True, "diff-base": "origin/main", "diff-head": head,
            "trim-conc": True, "canary": False, "pr-number": None}


@pytest.mark.parametrize("form", ["text", "file", "stdin"])
def test_decision_as_text_file_or_stdin(pr_checkout, tmp_path, form):  # noqa: F811
    work, head, extra = pr_checkout
    text = json.dumps(decision_for(head))
    value, stdin = text, None
    if form == "file":
        (tmp_path / "decision.json").write_text(text)
        value = str(tmp_path / "decision.json")
    elif form == "stdin":
        value, stdin = "-", text
    proc = subprocess.run([sys.executable, "-m", "infersweep", "changelog", "matrix",
                           "--decision", value, *extra], cwd=work.path, input=stdin,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    assert rows["changelog_metadata"]


@pytest.mark.parametrize(("target", "status", "words"), [
    ("blocker/meta.json", 1, "cannot write --metadata-out: blocker is not a directory"),
    ("adir", 2, "is a directory"),  # a usage error, from the option's type
])
def test_unwritable_metadata_out_is_a_message_and_no_file(
        pr_checkout, run_cli, target, status, words):  # noqa: F811
    work, head, extra = pr_checkout
    (work.path / "blocker").write_text("a file\n")
    (work.path / "adir").mkdir()
    before = sorted(p.name for p in work.path.iterdir())
    code, out, err = run_cli("changelog", "matrix", "--decision", json.dumps(decision_for(head)),
                             "--metadata-out", target, *extra, cwd=work.path)
    assert code == status
    assert words in err
    assert sorted(p.name for p in work.path.iterdir()) == before
    assert not list((work.path / "adir").iterdir())
