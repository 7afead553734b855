"""Every broken config in tests/data/bad-configs gives one located error and exit 1."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

CORPUS = Path(__file__).resolve().parent.parent / "data" / "bad-configs"
CASES = sorted(p for p in CORPUS.glob("*.yaml") if p.name != "runners.yaml")


def _expectation(path: Path) -> tuple[int, int, str]:
    first = path.read_text().splitlines()[0]
    match = re.match(r"# expect: (\d+):(\d+) (.+)", first)
    assert match, f"{path.name} needs a '# expect: LINE:COL text' first line"
    return int(match[1]), int(match[2]), match[3]


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_bad_config_reports_location(path, run_cli):
    line, col, text = _expectation(path)
    code, out, err = run_cli("validate", path, "--runner-config", CORPUS / "runners.yaml")
    assert code == 1
    assert "Traceback" not in err
    errors = [e for e in err.splitlines() if e.startswith("error: ")]
    assert len(errors) == 1, err
    where = f"{path}:{line}:" if col == 0 else f"{path}:{line}:{col}:"
    assert errors[0].startswith(f"error: {where}"), err
    assert text in errors[0], err


def test_corpus_is_large_enough():
    assert len(CASES) >= 20


def test_all_errors_are_listed_not_just_the_first(tmp_path, run_cli):
    bad = tmp_path / "x-master.yaml"
    bad.write_text((CORPUS / "negative-tp.yaml").read_text()
                   + (CORPUS / "conc-start-after-end.yaml").read_text().replace("cfg:", "cfg2:"))
    code, _, err = run_cli("validate", bad, "--runner-config", CORPUS / "runners.yaml")
    assert code == 1
    assert "'tp' must be at least 1" in err
    assert "conc-start 64 is greater than conc-end 4" in err
    assert err.strip().endswith("2 errors")


def test_key_defined_in_two_files(tmp_path, run_cli):
    good = (CORPUS / "negative-tp.yaml").read_text().replace("tp: -8", "tp: 8")
    (tmp_path / "a-master.yaml").write_text(good)
    (tmp_path / "b-master.yaml").write_text(good)
    code, _, err = run_cli("validate", tmp_path / "a-master.yaml", tmp_path / "b-master.yaml",
                           "--runner-config", CORPUS / "runners.yaml")
    assert code == 1
    assert f"{tmp_path / 'b-master.yaml'}:2:1:" in err
    assert "already defined in" in err


def test_missing_file(run_cli, tmp_path):
    code, _, err = run_cli("validate", tmp_path / "nope.yaml")
    assert code == 1
    assert "file not found" in err
