"""`infersweep recipe render` as a process: a row on stdin, piped from `infersweep matrix`."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml

from tests.livecatalog import frozen_checkout

pytestmark = pytest.mark.integration


def _infersweep(*args, stdin=None, cwd=None):
    cwd = cwd or frozen_checkout()  # the frozen catalog as the default one
    return subprocess.run([sys.executable, "-m", "infersweep", *map(str, args)], cwd=cwd,
                          input=stdin, capture_output=True, text=True, timeout=120)


def test_row_on_stdin_from_a_file_and_as_text_render_the_same(tmp_path):
    rows = _infersweep("matrix", "test-config", "--config-keys", "dsv4-fp4-mi355x-atom-disagg",
                       "--conc", "4", "8").stdout
    (row,) = json.loads(rows)
    (tmp_path / "row.json").write_text(json.dumps(row))
    outputs = [_infersweep("recipe", "render", "--row", "-", stdin=rows),
               _infersweep("recipe", "render", "--row", tmp_path / "row.json"),
               _infersweep("recipe", "render", "--row", json.dumps(row))]
    assert [p.returncode for p in outputs] == [0, 0, 0], [p.stderr for p in outputs]
    assert outputs[0].stdout == outputs[1].stdout == outputs[2].stdout
    recipe = yaml.safe_load(outputs[0].stdout)
    assert recipe["resources"]["prefill_workers"] == 1
    assert "--max-concurrency 8 " in recipe["benchmark"]["command"]
    assert "--num-prompts 40 " in recipe["benchmark"]["command"]


def test_bad_row_on_stdin_is_reported_not_raised():
    proc = _infersweep("recipe", "render", "--row", "-", stdin="{not json")
    assert proc.returncode == 1
    assert proc.stderr.startswith("error: <stdin>:1:2: [row-json] invalid JSON")
    assert "Traceback" not in proc.stderr
