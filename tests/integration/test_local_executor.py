"""The local executor through its interface: a job's states, a deadline in `wait`, cancel by
handle, the recipe's time limit (TIMEOUT) and engines that do not start (FAILED), each with
its reason in the manifest and no process left behind."""

from __future__ import annotations

import copy
import time

import pytest

from infersweep.config.catalog import load_catalog
from infersweep.matrix.generate import Selection, generate_keyed
from infersweep.recipe.render import render_row
from infersweep.rowjobs.executor import JobState, Provenance
from infersweep.rowjobs.local import LocalExecutor
from infersweep.rowjobs.scale import scale
from tests.conftest import FROZEN_MASTER, FROZEN_RUNNERS, REPO
from tests.integration.test_sweep_run import owned_processes

pytestmark = pytest.mark.integration

KEY = "dsv4-fp4-mi355x-atom-disagg"
PROV = Provenance(KEY, "img", None, None, "run-1", 1)


def rendered_for(executor, workdir, conc):
    catalog = load_catalog([FROZEN_MASTER],
                           FROZEN_RUNNERS, strict_runners=False)
    row = next(r for _, r in generate_keyed(catalog, Selection(config_keys=[KEY], conc=[conc],
                                                                evals="none")))
    opts = executor.render_options(workdir)
    r = render_row(row, REPO, client=opts.client, result_dir=opts.result_dir)
    return scale(r, 10, client=opts.client, result_dir=opts.result_dir), row


def test_states_deadline_and_cancel(tmp_path):
    ex = LocalExecutor()
    rendered, row = rendered_for(ex, tmp_path, 2048)
    job = ex.submit(rendered, row, tmp_path, provenance=PROV)
    assert job.state() in (JobState.PENDING, JobState.RUNNING)
    state = job.wait(time.monotonic() + 2)
    assert not state.terminal  # 2,048 streams cannot finish in 2 s
    job.cancel("asked to stop")
    assert job.state() is JobState.CANCELLED
    job.cancel("again")  # harmless
    m = job.collect()
    assert m["provenance"]["job-state"] == "CANCELLED"
    assert m["provenance"]["job-reason"] == "asked to stop"
    # the client may have written what it had when it was stopped: never "present" though
    assert m["points"][0]["status"] in ("missing", "incomplete")
    assert "cancelled before this point finished (asked to stop)" in m["points"][0]["reason"]
    assert owned_processes(tmp_path) == []


def test_the_recipe_time_limit_ends_the_job_as_timeout(tmp_path):
    ex = LocalExecutor(time_limit=2)
    rendered, row = rendered_for(ex, tmp_path, 2048)
    job = ex.submit(rendered, row, tmp_path, provenance=PROV)
    assert job.wait(time.monotonic() + 120) is JobState.TIMEOUT
    m = job.collect()
    assert m["provenance"]["job-reason"] == "time limit of 2 s reached"
    assert "the job ended TIMEOUT" in m["points"][0]["reason"]
    assert owned_processes(tmp_path) == []


def test_engines_that_do_not_start_fail_the_job_with_the_reason(tmp_path):
    ex = LocalExecutor()
    rendered, row = rendered_for(ex, tmp_path, 4)
    broken = copy.deepcopy(rendered.recipe)
    broken["backend"]["atom_config"]["decode"]["max-num-seqs"] = 0  # the simulator refuses it
    rendered = type(rendered)(broken, rendered.template, rendered.config_file,
                              rendered.workload, rendered.points)
    job = ex.submit(rendered, row, tmp_path, provenance=PROV)
    assert job.wait(time.monotonic() + 120) is JobState.FAILED
    m = job.collect()
    reason = m["provenance"]["job-reason"]
    assert reason.startswith("engines did not start: decode-0 exited with code")
    assert "logs/decode-0.log" in reason
    assert (tmp_path / "logs" / "decode-0.log").read_text().strip()
    assert owned_processes(tmp_path) == []
