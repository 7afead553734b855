"""`recipe coverage` on a catalog without srtctl, and reading srtctl's dry-run output."""

from __future__ import annotations

import json

import pytest

from infersweep.recipe import coverage, coveragereport
from infersweep.recipe.srtctl import Srtctl, Verdict, backend_of, parse
from tests.conftest import FROZEN_MASTER, FROZEN_RUNNERS, REPO
from tests.unit.recipe import srtcheckout

# what `srtctl dry-run -f DIR` (v1.0.68) prints at 80 columns, abridged: a recipe that loads
# gets panels, one that does not an error paragraph, wrapped
DRY_RUN = """\
📁 Found 3 YAML file(s) in: /tmp/x/batch0
                Configs to validate
(1/3) Processing: r00000.yaml
╭────────────────────────────── disagg-kv-sglang ──────────────────────────────╮
│ Error: not an error, a line of the sbatch script                             │
╰──────────────────────────────────────────────────────────────────────────────╯

(2/3) Processing: r00001.yaml
  ❌ Error: Invalid config in /tmp/x/batch0/r00001.yaml: {'benchmark': {'bogus': ['Unknown
field.']}}

(3/3) Processing: r00002.yaml
  ❌ Error: Invalid config in /tmp/x/batch0/r00002.yaml: {'backend': ["Unknown backend
type: 'atom'. Supported types: sglang, trtllm, vllm, mocker"]}

✅ Validated 1 config(s) (2 failed)
"""


def test_dry_run_output_gives_a_verdict_per_recipe_with_srtctls_words():
    got = parse(DRY_RUN.splitlines(keepends=True), ["r00000.yaml", "r00001.yaml",
                                                     "r00002.yaml", "r00009.yaml"])
    assert got == {
        "r00000.yaml": Verdict(True),
        "r00001.yaml": Verdict(False, "{'benchmark': {'bogus': ['Unknown field.']}}"),
        "r00002.yaml": Verdict(False, "{'backend': [\"Unknown backend type: 'atom'. "
                                      "Supported types: sglang, trtllm, vllm, mocker\"]}"),
    }  # a recipe srtctl said nothing about has no verdict (the caller reports it)


def test_the_backend_of_a_recipe_is_srtctls_default_when_unnamed():
    assert backend_of({"backend": {"type": "trtllm"}}) == "trtllm"
    assert backend_of({}) == backend_of({"backend": {}}) == "sglang"


@pytest.fixture(scope="module")
def frozen():
    pairs, skipped = coverage.catalog_rows([FROZEN_MASTER], FROZEN_RUNNERS)
    return pairs, skipped


def test_our_catalog_renders_every_row_with_its_configs_templates(frozen):
    pairs, skipped = frozen
    cov = coverage.run(pairs, REPO, srt_slurm=None, skipped=skipped, show_progress=False)
    s = cov.summary()
    singles = [r for _, r in pairs if "prefill" not in r]
    assert s["rendered"] == s["rows"] == len(pairs) and s["refused"] == {}
    assert s["rendered-by-source"] == {"template": len(pairs)}
    assert s["accepted"] is None  # no srtctl asked
    assert {o.rendered.config_file for o in cov.rendered} == {
        "recipes/atom/deepseek-v4/mi355x/disagg-1p1d-tp8-8k1k.yaml",
        "recipes/atom/deepseek-v4/mi355x/disagg-2p1d-dpa-tp8-8k1k.yaml",
        "benchmarks/single_node/srt-slurm/dsv4_fp4_mi355x_atom.yaml",
        "benchmarks/single_node/srt-slurm/dsv4_fp4_mi355x_atom_mtp.yaml",
        "benchmarks/single_node/srt-slurm/dsv4_fp4_mi355x_sglang.yaml"}
    assert len(singles) == len(pairs) - 2


def test_a_row_without_its_own_template_takes_the_framework_default(frozen):
    pairs, _ = frozen
    key, row = next((k, r) for k, r in pairs if r["framework"] == "sglang")
    other = dict(row, **{"model-prefix": "qwen3"})  # no qwen3_fp4_mi355x_sglang.yaml
    cov = coverage.run([(key, other)], REPO, srt_slurm=None, show_progress=False)
    assert cov.summary()["rendered-by-source"] == {"framework-default": 1}
    assert cov.rendered[0].rendered.recipe["backend"]["type"] == "sglang"


def test_a_backend_srtctl_lacks_is_not_dry_run(frozen):
    pairs, _ = frozen
    atom = [(k, r) for k, r in pairs if r["framework"].startswith("atom")]
    outcomes = coverage.render_all(atom, REPO, None)
    judge = Srtctl(REPO / "no-srtctl", REPO, None, frozenset({"sglang", "vllm", "trtllm"}))
    coverage.judge(outcomes, judge, show_progress=False)  # nothing to run: atom only
    rendered = [o for o in outcomes if o.rendered is not None]
    assert len(rendered) == len(atom)
    assert {o.dry_run for o in rendered} == {coverage.NOT_RUN}
    assert rendered[0].srtctl_message == ("backend 'atom' is not in this srtctl (it has "
                                          "sglang, trtllm, vllm)")


def test_rows_from_the_checkout_and_refusals_by_reason(dsv4_rows, tmp_path):
    checkout = srtcheckout.make(tmp_path / "srt-slurm")
    base = dsv4_rows[0]
    pairs = [("a", srtcheckout.row(base, "recipes/qwen/plain.yaml")),
             ("b", srtcheckout.row(base, "recipes/qwen/missing.yaml")),
             ("c", srtcheckout.row(base, "recipes/qwen/missing.yaml")),
             ("d", srtcheckout.row(base, "recipes/qwen/plain.yaml",
                                   settings=["SYNTHETIC_ACCEPTANCE=true"])),
             ("e", base)]
    cov = coverage.run(pairs, REPO, srt_slurm=checkout, show_progress=False)
    assert cov.summary()["rendered-by-source"] == {"srt-slurm": 1, "template": 1}
    assert cov.refusals() == {"recipe file not found": {"recipes/qwen/missing.yaml": 2},
                              "unknown setting": {"SYNTHETIC_ACCEPTANCE": 1}}
    doc = coveragereport.as_json(cov, catalogs=[FROZEN_MASTER], runner_config=FROZEN_RUNNERS,
                                 srt_slurm=checkout, srt_slurm_commit=None)
    assert doc["summary"]["refused"] == {"recipe file not found": 2, "unknown setting": 1}
    by_key = {r["config-key"]: r for r in doc["rows"]}
    assert by_key["a"]["outcome"] == "rendered" and by_key["a"]["source"] == "srt-slurm"
    assert by_key["b"]["reason"] == "recipe file not found"
    assert "[row-template]" in by_key["b"]["message"]
    text = coveragereport.table(cov, catalogs=[FROZEN_MASTER], srt_slurm=checkout,
                                srt_slurm_commit=None)
    assert "  from the srt-slurm checkout          1" in text
    assert "recipes/qwen/missing.yaml (2)" in text


def test_coverage_command_on_a_catalog(run_cli, frozen_repo):
    code, out, err = run_cli("recipe", "coverage", "--repo", frozen_repo, "--format", "json",
                             "--no-progress")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["srtctl"] is None and doc["srt-slurm"] is None
    assert doc["summary"]["rendered"] == doc["summary"]["rows"] == 54
    assert set(doc["summary"]) == {"rows", "rendered", "rendered-by-source", "accepted",
                                   "rejected", "not-dry-run", "refused"}
    code, out, err = run_cli("recipe", "coverage", "--repo", frozen_repo, "--no-progress")
    assert code == 0, err
    assert out.splitlines()[3].startswith("fixed-seq-len rows")
    assert "benchmarks/single_node/srt-slurm/dsv4_fp4_mi355x_sglang.yaml" not in out  # no refusal


def test_coverage_command_refuses_a_folder_that_is_no_checkout(run_cli, frozen_repo, tmp_path):
    code, out, err = run_cli("recipe", "coverage", "--repo", frozen_repo, "--srtctl", tmp_path)
    assert code == 1
    assert "[srt-slurm-dir]" in err and "--srtctl" in err
