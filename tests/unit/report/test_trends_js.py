"""The trends page's logic (templates/trends-core.js) under node's own test runner: the
monotone interpolation against PCHIP's known values, monotonicity, no overshoot, clamping,
no extrapolation; trends, the calculator, the ratio, the fragment and the evals over a built
site's data. Skips without node, unless CI requires it (it installs node for act)."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

from infersweep.evals import thresholds
from infersweep.report import costs, evalsdata, explorerdata, views
from tests import nodejs, reportruns

REPO = Path(__file__).resolve().parents[3]
TESTS = Path(__file__).parent / "js" / "trends-core.test.js"
TARGET = 80.0  # tok/s/user: inside every frontier of runs_with_evals (71 to 111)


def test_trends_core_under_node_test(tmp_path):
    node = nodejs.node()
    runs = reportruns.runs_with_evals(tmp_path)
    limits = thresholds.load(str(REPO / "configs" / "eval-thresholds.yaml"))
    site = {"explorer": explorerdata.arrange(runs, costs.load(REPO / "configs/gpu-costs.yaml")),
            "evals": evalsdata.arrange(views.arrange(runs, limits), judged=True),
            "target": TARGET}
    (tmp_path / "site.json").write_text(json.dumps(site))
    proc = subprocess.run([node, "--test", "--test-reporter=tap", str(TESTS)],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "TRENDS_TEST_DATA": str(tmp_path / "site.json")})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    counts = dict(re.findall(r"^# (pass|fail|skipped|todo) (\d+)$", proc.stdout, re.M))
    assert counts == {"pass": "9", "fail": "0", "skipped": "0", "todo": "0"}, proc.stdout
