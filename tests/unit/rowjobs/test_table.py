"""The end-of-run table and the step summary: every expected point, present or not."""

from __future__ import annotations

from infersweep.recipe.workload import Point
from infersweep.rowjobs.executor import JobState, Provenance
from infersweep.rowjobs.manifest import collect
from infersweep.rowjobs.table import HEADERS, counts, markdown, point_row, text_table

NAME = "t-1p1d"
RECIPE = {"name": NAME, "resources": {"gpus_per_node": 8, "prefill_nodes": 1, "decode_nodes": 1,
                                      "prefill_workers": 1, "decode_workers": 1}}
PROV = Provenance("key-a", "img", None, None, "r", 1)


def manifest(tmp_path):
    d = tmp_path / "res"
    d.mkdir()
    (d / f"{NAME}-c4.json").write_text(
        '{"num_prompts": 40, "max_concurrency": 4, "completed": 40, "failed": 0,'
        ' "total_token_throughput": 3200.0, "median_tpot_ms": 25.0, "median_ttft_ms": 10.25,'
        ' "p99_ttft_ms": 31.0}')
    pts = [Point(4, 40, 8, f"{NAME}-c4.json"), Point(8, 80, 16, f"{NAME}-c8.json")]
    return collect(recipe=RECIPE, points=pts, isl=8192, osl=1024, result_dir=d,
                   manifest_dir=tmp_path, provenance=PROV, executor="local", job_id="j1",
                   job_state=JobState.CANCELLED, job_reason="the sweep received SIGTERM")


def test_point_rows(tmp_path):
    m = manifest(tmp_path)
    present, missing = (point_row(m, p) for p in m["points"])
    row = dict(zip(HEADERS, present, strict=True))
    assert row["tput/GPU (tok/s)"] == "200.0"  # 3200 tok/s over 16 GPUs (prefill + decode)
    assert row["interactivity (tok/s/user)"] == "40.0"  # 1000 / 25 ms
    assert (row["TTFT p50 (ms)"], row["TTFT p99 (ms)"]) == ("10.2", "31.0")
    assert row["completed/requested"] == "40/40" and row["status"] == "present"
    row = dict(zip(HEADERS, missing, strict=True))
    assert row["tput/GPU (tok/s)"] == "-" and row["completed/requested"] == "-/80"
    assert row["status"].startswith("missing: not written: the job was cancelled")
    assert counts([m]) == (1, 2)


def test_text_and_markdown(tmp_path):
    m = manifest(tmp_path)
    text = text_table([m])
    assert text.splitlines()[-1] == "1 of 2 point(s) present"
    assert "interactivity (tok/s/user)" in text.splitlines()[0]
    md = markdown([m], title="Sweep r")
    assert md.startswith("### Sweep r\n")
    assert "| key-a " in md and "**Problems**" in md
    assert "- key-a t-1p1d (job j1): job ended CANCELLED: the sweep received SIGTERM" in md
    assert "point c=8 missing" in md
