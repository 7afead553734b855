"""The benchmark command a rendered recipe carries, run by bash as srt-slurm's custom
benchmark step runs it: against the simulated 1P1D cluster, with the real client, one result
file per point of the row; a failing point does not stop the others but fails the step."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from infersweep.config.catalog import load_catalog
from infersweep.matrix.generate import Selection, generate_keyed
from infersweep.recipe.render import render_row
from tests.conftest import FROZEN_MASTER, FROZEN_RUNNERS, REPO
from tests.integration.simharness import FAST, Sim

pytestmark = pytest.mark.integration

MODEL = "deepseek-ai/DeepSeek-V4-Pro"


@pytest.fixture(scope="module")
def small_row() -> dict:
    """The catalog's 1P1D row, two points, with short sequences so the test takes seconds."""
    catalog = load_catalog([FROZEN_MASTER],
                           FROZEN_RUNNERS, strict_runners=False)
    rows = [r for _, r in generate_keyed(catalog, Selection(
        config_keys=["dsv4-fp4-mi355x-atom-disagg"], conc=[4, 8], evals="none"))]
    assert len(rows) == 1
    return dict(rows[0], isl=256, osl=32, **{"max-model-len": 256 + 32 + 256})


@pytest.fixture(scope="module")
def cluster():
    sim = Sim("--topology", "1p1d", "--served-model-name", MODEL, *FAST, cmd="cluster")
    yield sim
    sim.stop()


def _run(command: str, cluster, tmp_path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SRT_")}
    env.update(SRT_FRONTEND_HOST="127.0.0.1", SRT_FRONTEND_PORT=str(cluster.port))
    return subprocess.run(["bash", "-lc", command], env=env, cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)


def test_every_point_runs_and_lands_as_name_c_conc(small_row, cluster, tmp_path):
    out = tmp_path / "logs"
    r = render_row(small_row, REPO, client=f"{sys.executable} -m infersweep",
                   result_dir=str(out))
    proc = _run(r.recipe["benchmark"]["command"], cluster, tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for point in r.points:
        data = json.loads((out / point.result_file).read_text())
        assert data["max_concurrency"] == point.conc
        assert data["num_prompts"] == data["completed"] == 10 * point.conc
    assert sorted(p.name for p in out.glob("*.json")) == sorted(
        f"{r.name}-c{c}.json" for c in (4, 8))


def test_a_failing_point_fails_the_step_and_the_rest_still_run(small_row, cluster, tmp_path):
    # Test double for a client that fails at one point: exits 3 at concurrency 4.
    client = tmp_path / "client-failing-at-c4"
    client.write_text("#!/bin/sh\n"
                      'case " $* " in *" --max-concurrency 4 "*) exit 3;; esac\n'
                      f'exec "{sys.executable}" -m infersweep "$@"\n')
    client.chmod(0o755)
    out = tmp_path / "logs"
    r = render_row(small_row, REPO, client=str(client), result_dir=str(out))
    proc = _run(r.recipe["benchmark"]["command"], cluster, tmp_path)
    assert proc.returncode == 1
    assert not (out / f"{r.name}-c4.json").exists()
    assert json.loads((out / f"{r.name}-c8.json").read_text())["completed"] == 80


def test_the_bundle_as_client_on_a_bare_interpreter(small_row, cluster, tmp_path):
    """`--client 'python3 /path/infersweep-bench.pyz'`: the rendered command runs the bundle
    (``... .pyz serve``) on a Python with no site packages, as inside an engine container."""
    from infersweep.bench.bundle import build
    from tests.integration import bundleharness as bh

    pyz = build(tmp_path / "ws" / "infersweep-bench.pyz").path
    py = bh.bare_python(sys.executable, tmp_path / "venv")
    out = tmp_path / "logs"
    r = render_row(small_row, REPO, client=f"{py} -I {pyz}", result_dir=str(out))
    command = r.recipe["benchmark"]["command"]
    assert f"{py} -I {pyz} serve \\" in command and "bench serve" not in command
    proc = _run(command, cluster, tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for point in r.points:
        data = json.loads((out / point.result_file).read_text())
        assert data["num_prompts"] == data["completed"] == 10 * point.conc
        assert data["infersweep"]["runtime"]["stats"] == "pure-python"
        assert data["infersweep"]["build"]["kind"] == "bundle"
