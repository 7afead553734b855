"""The compare page's logic (templates/compare-core.js) run by node over the explorer's data
of four staged runs (tests/compareruns.py): matching, the noise band and its fallback, the
regression verdict, added and removed points, a date as a side, the changelog between two
sides, the recipe diff rendered as `infersweep recipe diff` prints it, the fragment, CSV.
Skips without node, unless the browser is required (CI installs node)."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
import statistics
from pathlib import Path

import pytest
import yaml

from infersweep.recipe import diff as differ
from infersweep.report import comparedata, costs, explorerdata
from tests import compareruns, nodejs, reportruns

REPO = Path(__file__).resolve().parents[3]
CORE = REPO / "infersweep" / "report" / "templates" / "compare-core.js"
EXPLORER = REPO / "infersweep" / "report" / "templates" / "explorer-core.js"
ONE_C4 = "\n".join([reportruns.KEY, "1p-tp8+1d-tp8", "8k/1k", "4"])


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return compareruns.write(tmp_path_factory.mktemp("runs"))


def _data(runs) -> tuple[dict, dict]:
    return (explorerdata.arrange(runs, costs.load(REPO / "configs" / "gpu-costs.yaml")),
            comparedata.arrange(runs))


@pytest.fixture(scope="module")
def data(runs):
    return _data(runs)


def _run(data, body: str):
    """``body`` evaluated with C (compare-core), X (explorer-core), D (decoded points), CD
    (the compare data); prints its JSON value."""
    explorer, compare = data
    return nodejs.evaluate(f"const X = require({json.dumps(str(EXPLORER))});\n"
                           f"const C = require({json.dumps(str(CORE))});\n"
                           f"const D = X.decode({json.dumps(explorer)});\n"
                           f"const CD = {json.dumps(compare)};", body)


COMPARED = """
  const r = C.compare(D, CD, st);
  const one = (p) => [p.s.config, p.s.topology, p.s.seq, p.conc].join(" ");
  return {matched: r.matched.map((m) => ({key: m.key, verdict: m.verdict, changes: m.changes})),
          removed: r.removed.map(one), added: r.added.map(one)};"""


def _tput(run, conc, name=reportruns.ONE):
    return next(p["tput_per_gpu"] for p in run.points
                if p["recipe_name"] == name and p["conc"] == conc)


def test_the_newest_two_runs_by_default_a_regression_beyond_the_noise_band(data, runs):
    out = _run(data, "const st = C.parseState('', D);" + COMPARED)
    assert out["removed"] == [f"{reportruns.KEY} 1p-tp8+1d-tp8 8k/1k 32"]
    assert out["added"] == [f"{reportruns.KEY} 2p-tp8-dpa+1d-tp8-dpa 8k/1k 512"]
    by_key = {m["key"]: m for m in out["matched"]}
    assert len(by_key) == 6
    slow = by_key[ONE_C4]["changes"]["tput"]
    repeats = [_tput(r, 4) for r in runs[:3]]  # 101-103: the same recipe, measured thrice
    band = 2 * math.sqrt(2) * statistics.stdev(repeats)
    assert slow["basis"] == "noise" and slow["n"] == 3
    assert slow["band"] == pytest.approx(band, rel=1e-3)
    assert slow["delta"] == pytest.approx(_tput(runs[3], 4) - _tput(runs[2], 4), rel=1e-3)
    assert slow["pct"] == pytest.approx(-100 * (1 - compareruns.SLOW) * 9000 / 9074, rel=1e-2)
    assert slow["verdict"] == "regression" and by_key[ONE_C4]["verdict"] == "regression"
    # the output throughputs of the three repeats agree: no band from them, the threshold
    same = by_key[ONE_C4.replace("\n4", "\n8")]["changes"]["tput_out"]
    assert (same["basis"], same["n"], same["band"]) == ("threshold", 3, None)
    # every other point moved by one seed's step: inside the band
    for key, m in by_key.items():
        if key != ONE_C4:
            assert m["changes"]["tput"]["verdict"] == "within noise", key


def test_a_copied_point_and_the_new_run_are_no_repeats_and_two_fall_back_to_the_threshold(
        data, runs):
    rerun = dataclasses.replace(runs[2], attempt=2, staged_at="2026-12-03T12:00:00Z")
    copied = _data([*runs[:3], rerun, runs[3]])
    out = _run(copied, "const st = {base: '103-2', new: '104-1'};" + COMPARED)
    tput = {m["key"]: m["changes"]["tput"] for m in out["matched"]}[ONE_C4]
    assert tput["n"] == 3  # attempt 2 carries attempt 1's measurement: counted once
    out = _run(data, "const st = {base: '101-1', new: '102-1'};" + COMPARED)
    tput = {m["key"]: m["changes"]["tput"] for m in out["matched"]}[ONE_C4]
    assert (tput["basis"], tput["n"], tput["band"]) == ("threshold", 2, None)  # 101 and 103
    assert tput["verdict"] == "within threshold"  # +0.4 % against 5 %


def test_a_date_stands_for_each_points_newest_run_up_to_that_day(data):
    out = _run(data, "const st = {base: 'date:2026-12-03', new: 'date:2026-12-04'};" + COMPARED)
    assert out["removed"] == []  # 103's concurrency 32 is still the newest up to the 4th
    c32 = {m["key"]: m for m in out["matched"]}[ONE_C4.replace("\n4", "\n32")]
    assert c32["changes"]["tput"]["delta"] == 0


def test_the_changelog_between_two_sides_names_each_new_entry_once(data):
    out = _run(data, """
      const f = (base, now) => { const c = C.changelogBetween(D, CD, {base: base, new: now});
        return {d: c.entries.map((e) => [e.entry.description[0], e.runs]), runs: c.runs,
                meta: c.withMeta, rev: c.reversed}; };
      return [f('103-1', '104-1'), f('101-1', '104-1'), f('104-1', '103-1'),
              f('date:2026-12-01', '102-1'), f('103-1', '103-1')];""")
    mooncake, bump = "Mooncake over TCP for 1P1D.", "Bump the ATOM image."
    assert out[0] == {"d": [[mooncake, [3]]], "runs": 1, "meta": 1, "rev": False}
    assert out[1] == {"d": [[bump, [1, 3]], [mooncake, [3]]], "runs": 3, "meta": 2,
                      "rev": False}
    assert out[2] == {**out[0], "rev": True}
    assert out[3]["d"] == [[bump, [1]]]
    assert out[4] == {"d": [], "runs": 0, "meta": 0, "rev": False}


def test_the_recipe_change_is_rendered_as_recipe_diff_prints_it(data, runs):
    out = _run(data, """
      const r = C.compare(D, CD, {base: '103-1', new: '104-1'});
      const g = C.recipeChanges(D, CD, r.matched);
      const back = C.recipeChanges(D, CD, C.compare(D, CD, {base: '104-1', new: '103-1'}).matched);
      return {n: g.length, fp: g[0].fpA !== g[0].fpB, points: g[0].points.length,
              text: C.diffText(g[0].lines, 'A', 'B'), back: C.diffText(back[0].lines, 'B', 'A')};""")
    old, new = (yaml.safe_load(comparedata.job_folder_free(r.recipes[0]["text"], reportruns.KEY,
                                                           reportruns.ONE)) for r in runs[2:])
    assert (out["n"], out["fp"], out["points"]) == (1, True, 3)  # 1P1D at 4, 8 and 16
    assert out["text"] == differ.text_report(differ.differences(old, new), "A", "B")
    assert out["back"] == differ.text_report(differ.differences(new, old), "B", "A")
    assert "max-num-seqs: 128 -> 256" in out["text"] and "job folder" not in out["text"]


def test_no_recipe_change_when_only_the_numbers_moved(data):
    out = _run(data, "return C.recipeChanges(D, CD, C.compare(D, CD, "
                     "{base: '102-1', new: '103-1'}).matched).length;")
    assert out == 0


def test_the_view_round_trips_through_the_fragment_and_defaults_are_left_out(data):
    out = _run(data, """
      const d = C.parseState('', D), st = {base: 'date:2026-12-02', new: '101-1'};
      const h = C.stateHash(st, D);
      return {d: d, dh: C.stateHash(d, D), h: h, back: C.parseState(h, D),
              junk: C.parseState('#zzz=1&base=103-1', D)};""")
    assert out["d"] == {"base": "103-1", "new": "104-1"} and out["dh"] == ""
    assert out["back"] == {"base": "date:2026-12-02", "new": "101-1"}
    assert out["h"] == "#base=date%3A2026-12-02&new=101-1"
    assert out["junk"] == {"base": "103-1", "new": "104-1"}


def test_the_csv_has_every_point_with_runs_recipes_and_verdicts(data):
    text = _run(data, "return C.csv(C.compare(D, CD, C.parseState('', D)), D);")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [r["status"] for r in rows].count("removed") == 1
    assert [r["status"] for r in rows].count("added") == 1
    slow = next(r for r in rows if r["conc"] == "4" and r["topology"] == "1p-tp8+1d-tp8")
    assert (slow["status"], slow["tput_verdict"], slow["base_run_id"], slow["new_run_id"]) == (
        "regression", "regression", "103", "104")
    assert slow["base_fingerprint"] != slow["new_fingerprint"]
    assert float(slow["tput_change_pct"]) < -25 and slow["tput_repeats"] == "3"
