"""/stage-results on an eval that brings its own scoring rules: a pattern that would take
minutes to run (``^(a+)+$``) or cannot compile is never run. The run is refused at once as
defective evidence, with the eval's file and line, and never told to comment again (no retry
fixes an artifact)."""

from __future__ import annotations

import io
import json
import time
import zipfile

import pytest

from tests.integration.stage import stagerun as sr

pytestmark = pytest.mark.integration


def _with_filter_regex(bmk: bytes, regex: str) -> bytes:
    """The collect job's zip with the eval's strict-match pattern replaced, and a response
    on which that pattern backtracks for minutes."""
    members = []
    with zipfile.ZipFile(io.BytesIO(bmk)) as zf:
        for name in zf.namelist():
            data = zf.read(name)
            if name.endswith("/eval.json"):
                summary = json.loads(data)
                summary["filters"]["strict-match"]["regex"] = regex
                data = json.dumps(summary, indent=2).encode()
            elif name.endswith("/samples.jsonl"):
                lines = data.decode().splitlines()
                first = json.loads(lines[0])
                first["response"] = "a" * 32 + "!"
                data = ("\n".join([json.dumps(first), *lines[1:]]) + "\n").encode()
            members.append((name, data))
    return sr.zip_members(members)


@pytest.mark.parametrize("regex", ["^(a+)+$", "(["])
def test_an_eval_with_its_own_pattern_is_refused_as_defective_evidence(gh, tmp_path, run_cli,
                                                                        regex):
    s = sr.sweep(gh, tmp_path)
    bmk = _with_filter_regex(sr.results_bmk(tmp_path, s.row), regex)
    s.add_run(artifacts={"results_bmk": bmk, "changelog-metadata": sr.changelog_zip(),
                         "sweep-rows": sr.rows_zip([s.row])})
    t0 = time.monotonic()
    code, out, err = sr.stage(run_cli, gh, tmp_path, f"/stage-results {sr.RUN}")
    assert time.monotonic() - t0 < 60
    assert code == 1 and "Traceback" not in out + err
    (note,) = gh.comments_on(sr.PR)
    for text in (note["body"], (tmp_path / "summary.md").read_text()):
        assert "is not stageable" in text, text
        assert "eval.json:" in text and "[eval-rules] filters.strict-match is {'regex': " \
            in text, text
        assert "again to retry" not in text
    assert "Fix them (re-run the failed jobs or the sweep)" in note["body"]
