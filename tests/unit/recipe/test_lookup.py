"""Where a row's recipe comes from: our templates first, then the srt-slurm checkout."""

from __future__ import annotations

import shutil

import pytest

from infersweep.diagnostics import InputError
from infersweep.recipe import lookup, refusal, rendered
from infersweep.recipe.render import render_row
from infersweep.recipe.rendered import SRT_SLURM, TEMPLATE
from tests.conftest import REPO
from tests.unit.recipe import srtcheckout
from tests.unit.recipe.conftest import TEMPLATES

OURS = "recipes/atom/deepseek-v4/mi355x/disagg-1p1d-tp8-8k1k.yaml"


@pytest.fixture
def checkout(tmp_path):
    return srtcheckout.make(tmp_path / "srt-slurm")


@pytest.fixture
def base_row(dsv4_rows):
    return dsv4_rows[0]  # 1P1D TP8, naming our template


def test_our_template_wins_over_the_checkouts_recipe_of_the_same_name(base_row, checkout):
    theirs = checkout / "recipes" / "atom" / "deepseek-v4" / "mi355x"
    theirs.mkdir(parents=True)
    shutil.copy(checkout / "recipes" / "qwen" / "plain.yaml", theirs / "disagg-1p1d-tp8-8k1k.yaml")
    found = lookup.find(base_row, REPO, checkout, "<row>")
    assert found.source == TEMPLATE
    assert found.path.resolve() == (TEMPLATES / "disagg-1p1d-tp8-8k1k.yaml").resolve()
    rendered = render_row(base_row, REPO, srt_slurm=checkout)
    assert rendered.source == TEMPLATE and rendered.recipe["backend"]["type"] == "atom"


def test_a_recipe_we_do_not_have_comes_from_the_checkout(base_row, checkout):
    row = srtcheckout.row(base_row, "recipes/qwen/plain.yaml")
    found = lookup.find(row, REPO, checkout, "<row>")
    assert (found.source, found.path, found.selector) == (
        SRT_SLURM, checkout / "recipes" / "qwen" / "plain.yaml", None)
    assert found.checkout == checkout


def test_a_selector_is_kept_apart_from_the_path(base_row, checkout):
    row = srtcheckout.row(base_row, "recipes/ds/8k1k.yaml:zip_override_lowlat[1]")
    found = lookup.find(row, REPO, checkout, "<row>")
    assert found.path == checkout / "recipes" / "ds" / "8k1k.yaml"
    assert found.selector == "zip_override_lowlat[1]"
    assert found.config_file == "recipes/ds/8k1k.yaml:zip_override_lowlat[1]"


def test_a_file_in_neither_place_names_both(base_row, checkout):
    row = srtcheckout.row(base_row, "recipes/nope/x.yaml")
    with pytest.raises(refusal.RowRefused) as exc:
        lookup.find(row, REPO, checkout, "key")
    (d,) = exc.value.diagnostics
    assert d.rule == "row-template" and d.path == "key"
    assert "benchmarks/multi_node/srt-slurm/nope/x.yaml" in d.message
    assert str(checkout / "recipes" / "nope" / "x.yaml") in d.message
    assert (exc.value.reason, exc.value.detail) == (refusal.NOT_FOUND, "recipes/nope/x.yaml")


def test_without_a_checkout_the_message_says_where_one_would_be_looked_in(base_row):
    row = srtcheckout.row(base_row, "recipes/qwen/plain.yaml")
    with pytest.raises(refusal.RowRefused) as exc:
        lookup.find(row, REPO, None, "key")
    assert "no srt-slurm checkout was given to look in (--srt-slurm DIR)" in str(exc.value)


def test_a_template_takes_no_selector(base_row, checkout):
    row = srtcheckout.row(base_row, OURS + ":override_x")
    with pytest.raises(InputError, match="override selectors are not supported on a template") as exc:
        lookup.find(row, REPO, checkout, "<row>")
    assert exc.value.diagnostics[0].rule == "row-template"


def test_a_malformed_selector_is_refused_before_any_lookup(base_row, checkout):
    row = srtcheckout.row(base_row, "recipes/ds/8k1k.yaml:lowlat")
    with pytest.raises(InputError, match="'lowlat' is not an override selector") as exc:
        lookup.find(row, REPO, checkout, "<row>")
    assert exc.value.diagnostics[0].rule == "recipe-selector"


@pytest.mark.parametrize("value", ["dsv4-fp4-gb200-low-latency.yaml",
                                   "benchmarks/multi_node/srt-slurm-recipes/x.yaml",
                                   "recipes/../../etc/passwd"])
def test_config_file_outside_recipes_is_refused(base_row, checkout, value):
    with pytest.raises(refusal.RowRefused) as exc:
        lookup.find(srtcheckout.row(base_row, value), REPO, checkout, "<row>")
    assert (exc.value.reason, exc.value.detail) == (refusal.BAD_CONFIG_FILE, value)


def _single(base_row, **changes) -> dict:
    row = {k: v for k, v in base_row.items() if k not in ("prefill", "decode")}
    row.update({"tp": 8, "framework": "atom", "disagg": False, "conc": 4, **changes})
    return row


def test_a_single_node_row_takes_its_configs_own_template(base_row):
    found = lookup.find(_single(base_row), REPO, None, "<row>")
    assert found.source == rendered.TEMPLATE
    assert found.path.name == "dsv4_fp4_mi355x_atom.yaml"  # InferenceX's script name
    mtp = lookup.find(_single(base_row, **{"spec-decoding": "mtp"}), REPO, None, "<row>")
    assert mtp.path.name == "dsv4_fp4_mi355x_atom_mtp.yaml"


def test_a_single_node_row_without_one_takes_its_frameworks_default(base_row):
    found = lookup.find(_single(base_row, framework="vllm"), REPO, None, "<row>")
    assert found.source == rendered.DEFAULT
    assert found.config_file == "benchmarks/single_node/srt-slurm/defaults/vllm.yaml"


def test_a_framework_with_no_default_is_refused_naming_the_file_to_add(base_row):
    with pytest.raises(refusal.RowRefused) as exc:
        lookup.find(_single(base_row, framework="tilert"), REPO, None, "<row>")
    assert (exc.value.reason, exc.value.detail) == (refusal.SINGLE_NODE, "tilert")
    assert "dsv4_fp4_mi355x_tilert.yaml" in str(exc.value)
    assert "defaults exist for atom, sglang, trt, vllm" in str(exc.value)


def test_a_multi_node_row_without_config_file(base_row):
    row = srtcheckout.row(base_row, None)
    found = lookup.find(row, REPO, None, "<row>")  # its framework's disaggregated default
    assert found.source == lookup.DEFAULT
    assert found.config_file == f"benchmarks/multi_node/srt-slurm/defaults/{row['framework']}.yaml"
    with pytest.raises(refusal.RowRefused) as exc:  # a framework with none is refused
        lookup.find({**row, "framework": "tilert"}, REPO, None, "<row>")
    assert exc.value.reason == refusal.NO_CONFIG_FILE


def test_two_config_files_are_one_too_many(base_row):
    row = srtcheckout.row(base_row, "recipes/a.yaml")
    row["decode"]["additional-settings"].append("CONFIG_FILE=recipes/b.yaml")
    with pytest.raises(InputError, match="names two templates"):
        lookup.find(row, REPO, None, "<row>")


def test_a_folder_without_recipes_is_not_a_checkout(tmp_path):
    with pytest.raises(InputError) as exc:
        lookup.check_checkout(tmp_path)
    assert exc.value.diagnostics[0].rule == "srt-slurm-dir"


def test_a_launch_renders_a_recipe_of_the_pinned_checkout(dsv4_rows, tmp_path):
    from infersweep.recipe.rendered import SRT_SLURM
    from infersweep.rowjobs.fleetrows import recipe_in_checkout
    from infersweep.rowjobs.recipes import render_for_launch
    checkout = srtcheckout.make(tmp_path / "srt-slurm")
    theirs = srtcheckout.row(dsv4_rows[0], "recipes/qwen/plain.yaml")
    assert recipe_in_checkout(theirs, REPO, None)
    assert not recipe_in_checkout(dsv4_rows[0], REPO, None)  # our template
    assert not recipe_in_checkout(theirs, REPO, tmp_path / "t.yaml")  # --template wins
    single = {k: v for k, v in dsv4_rows[0].items() if k not in ("prefill", "decode")}
    assert not recipe_in_checkout({**single, "tp": 8}, REPO, None)
    rendered = render_for_launch(theirs, REPO, template_path=None, source="<row>",
                                 client="infersweep", result_dir="/logs/fixed-seq",
                                 srt_slurm=checkout)
    assert rendered.source == SRT_SLURM and rendered.name == "qwen-1p1d"
