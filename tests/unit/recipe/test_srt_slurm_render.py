"""Rendering a row from a recipe of the srt-slurm checkout: one variant, the row's benchmark,
the row's topology checked, unknown settings refused, errors at the recipe's line."""

from __future__ import annotations

import pytest
import yaml

from infersweep.diagnostics import InputError
from infersweep.recipe import command, refusal
from infersweep.recipe.render import render_row
from infersweep.recipe.rendered import SRT_SLURM
from tests.conftest import REPO
from tests.unit.recipe import srtcheckout


@pytest.fixture
def checkout(tmp_path):
    return srtcheckout.make(tmp_path / "srt-slurm")


@pytest.fixture
def base_row(dsv4_rows):
    return dsv4_rows[0]


def _render(row, checkout):
    return render_row(row, REPO, source="key", srt_slurm=checkout)


def test_the_recipe_is_kept_and_only_the_benchmark_comes_from_the_row(base_row, checkout):
    row = srtcheckout.row(base_row, "recipes/qwen/plain.yaml")
    r = _render(row, checkout)
    assert r.source == SRT_SLURM and r.name == "qwen-1p1d"
    original = yaml.safe_load((checkout / "recipes/qwen/plain.yaml").read_text())
    assert {k: v for k, v in r.recipe.items() if k != "benchmark"} == {
        k: v for k, v in original.items() if k != "benchmark"}
    bench = r.recipe["benchmark"]
    # sa-bench's workload keys give way to the row's; placement and environment stay
    assert bench["type"] == "custom"
    assert {k: bench[k] for k in ("client_placement", "env")} == {
        "client_placement": "head", "env": {"BENCH_NOTE": "kept"}}
    assert not {"isl", "osl", "concurrencies", "req_rate"} & set(bench)
    assert command.parse(bench["command"]).points == [str(c) for c in base_row["conc"]]
    assert [p.result_file for p in r.points] == [f"qwen-1p1d-c{c}.json" for c in base_row["conc"]]
    assert list(r.recipe)[-1] == "benchmark"  # where the recipe had it


def test_the_header_names_the_file_selector_and_checkout(base_row, checkout):
    row = srtcheckout.row(base_row, "recipes/ds/8k1k.yaml:zip_override_lowlat[0]",
                          prefill=(1, 4), decode=(1, 8))
    r = _render(row, checkout)
    first = r.text().splitlines()[0]
    assert first == ("# Rendered by `infersweep recipe render` from recipes/ds/8k1k.yaml:"
                     f"zip_override_lowlat[0] in the srt-slurm checkout {checkout};")
    assert r.as_json()["source"] == "srt-slurm"
    assert yaml.safe_load(r.text())["name"] == "ds-a"


@pytest.mark.parametrize("selector,prefill,decode,name", [
    ("override_wide", (2, 4), (1, 16), "ds_wide"),
    ("zip_override_lowlat[1]", (2, 4), (1, 8), "ds-b"),
    ("base", (2, 4), (1, 8), "ds"),
    ("*wide*", (2, 4), (1, 16), "ds_wide"),
])
def test_selectors_pick_one_variant(base_row, checkout, selector, prefill, decode, name):
    row = srtcheckout.row(base_row, f"recipes/ds/8k1k.yaml:{selector}", prefill=prefill,
                          decode=decode)
    assert _render(row, checkout).name == name


def test_an_override_file_without_a_selector_is_several_jobs(base_row, checkout):
    row = srtcheckout.row(base_row, "recipes/ds/8k1k.yaml", prefill=(2, 4))
    with pytest.raises(InputError) as exc:
        _render(row, checkout)
    (d,) = exc.value.diagnostics
    assert d.rule == "recipe-selector" and d.path.endswith("recipes/ds/8k1k.yaml")
    assert "selects 3 variants of the override file (wide, lowlat_0, lowlat_1)" in d.message


def test_a_selector_that_names_no_section_is_refused_at_the_file(base_row, checkout):
    row = srtcheckout.row(base_row, "recipes/ds/8k1k.yaml:zip_override_lowlat[5]")
    with pytest.raises(InputError) as exc:
        _render(row, checkout)
    (d,) = exc.value.diagnostics
    assert (d.rule, d.line) == ("recipe-selector", 17)  # the zip_override_lowlat key
    assert "has 2 variant(s)" in d.message


def test_a_selector_on_a_plain_recipe_is_refused(base_row, checkout):
    row = srtcheckout.row(base_row, "recipes/qwen/plain.yaml:override_x")
    with pytest.raises(InputError, match="needs an override file") as exc:
        _render(row, checkout)
    assert exc.value.diagnostics[0].rule == "recipe-selector"


def test_a_sweep_is_several_jobs(base_row, checkout):
    with pytest.raises(InputError) as exc:
        _render(srtcheckout.row(base_row, "recipes/qwen/sweep.yaml"), checkout)
    (d,) = exc.value.diagnostics
    assert (d.rule, d.line) == ("recipe-sweep", 5)


def test_topology_mismatches_are_located_in_the_section_that_sets_them(base_row, checkout):
    # override_wide: 2 prefill workers on 2 nodes (base), 1 decode worker on 4 nodes
    # (override_wide) of 4 GPUs: 16 GPUs
    row = srtcheckout.row(base_row, "recipes/ds/8k1k.yaml:override_wide", prefill=(1, 4),
                          decode=(1, 8), settings=["PREFILL_NODES=1"],
                          decode_settings=["DECODE_NODES=2"])
    with pytest.raises(InputError) as exc:
        _render(row, checkout)
    found = sorted((d.line, d.message.split("does not fit: ", 1)[1])
                   for d in exc.value.diagnostics)
    assert {d.rule for d in exc.value.diagnostics} == {"row-fit"}
    assert found == [
        (7, "PREFILL_NODES=1, the recipe has prefill_nodes: 2"),
        (8, "the row has 1 prefill worker(s), the recipe 2"),
        (10, "the row's decode workers are TP8, the recipe's have 16 GPUs"),
        (16, "DECODE_NODES=2, the recipe has decode_nodes: 4"),  # in override_wide
    ]


def test_gpus_per_node_and_workers_settings_must_agree(base_row, checkout):
    row = srtcheckout.row(base_row, "recipes/qwen/plain.yaml",
                          settings=["GPUS_PER_NODE=4", "PREFILL_WORKERS=x"])
    with pytest.raises(InputError) as exc:
        _render(row, checkout)
    rules = sorted(d.rule for d in exc.value.diagnostics)
    assert rules == ["row-fit", "row-settings"]
    assert "GPUS_PER_NODE=4, the recipe has 8 GPUs per node" in str(exc.value)


def test_an_aggregated_row_does_not_fit_a_disaggregated_recipe(base_row, checkout):
    row = srtcheckout.row(base_row, "recipes/qwen/plain.yaml")
    row["disagg"] = False
    with pytest.raises(InputError, match="the row is aggregated, the recipe disaggregated"):
        _render(row, checkout)


def test_an_unknown_setting_is_refused_by_name(base_row, checkout):
    row = srtcheckout.row(base_row, "recipes/qwen/plain.yaml",
                          settings=["SYNTHETIC_ACCEPTANCE=true", "PREFILL_IMAGE=x"])
    with pytest.raises(refusal.RowRefused) as exc:
        _render(row, checkout)
    assert exc.value.reason == refusal.UNKNOWN_SETTING
    assert exc.value.detail == "PREFILL_IMAGE, SYNTHETIC_ACCEPTANCE"
    assert {d.rule for d in exc.value.diagnostics} == {"row-unknown-setting"}


def test_a_template_row_knows_only_the_settings_its_fit_check_reads(base_row):
    row = srtcheckout.row(base_row, "recipes/atom/deepseek-v4/mi355x/disagg-1p1d-tp8-8k1k.yaml",
                          settings=["PREFILL_NODES=1", "GPUS_PER_NODE=8"])
    with pytest.raises(refusal.RowRefused, match="GPUS_PER_NODE"):
        render_row(row, REPO)


def test_recipe_render_cli_takes_the_checkout(base_row, checkout, run_cli, tmp_path):
    import json

    row = srtcheckout.row(base_row, "recipes/qwen/plain.yaml")
    code, out, err = run_cli("recipe", "render", "--row", json.dumps(row), "--repo", REPO,
                             "--srt-slurm", checkout, "--format", "json")
    assert code == 0, err
    assert json.loads(out)["source"] == "srt-slurm"
    code, out, err = run_cli("recipe", "render", "--row", json.dumps(row), "--repo", REPO)
    assert code == 1
    assert "[row-template]" in err and "--srt-slurm DIR" in err
    code, out, err = run_cli("recipe", "render", "--row", json.dumps(row), "--repo", REPO,
                             "--srt-slurm", tmp_path)
    assert code == 1 and "[srt-slurm-dir]" in err and "no recipes/ folder" in err
