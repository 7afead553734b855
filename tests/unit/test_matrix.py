"""Matrix expansion on a frozen copy of the catalog (tests/data/catalog) and on small
hand-written ones. Counts and rows are asserted only on the frozen copy: the live
configs/ files change with every new configuration (tests/unit/test_live_catalog.py checks
what must hold for any valid content there)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from infersweep.config.catalog import load_catalog
from infersweep.config.schema import validate_data
from infersweep.diagnostics import InputError
from infersweep.matrix.conc import conc_points, within
from infersweep.matrix.generate import Selection, generate, generate_keyed
from infersweep.matrix.keys import expand_keys
from infersweep.matrix.rows import seq_name

FROZEN = Path(__file__).resolve().parent.parent / "data" / "catalog"
FROZEN_ARGS = ("--config-files", FROZEN / "amd-master.yaml",
               "--runner-config", FROZEN / "runners.yaml")


@pytest.fixture(scope="module")
def catalog():
    return load_catalog([FROZEN / "amd-master.yaml"], FROZEN / "runners.yaml")


@pytest.mark.parametrize(("ss", "step", "expected"), [
    ({"conc-start": 1, "conc-end": 64}, 2, [1, 2, 4, 8, 16, 32, 64]),
    ({"conc-start": 4, "conc-end": 48}, 2, [4, 8, 16, 32, 48]),
    ({"conc-start": 16, "conc-end": 128}, 2, [16, 32, 64, 128]),
    ({"conc-start": 8, "conc-end": 8}, 2, [8]),
    ({"conc-start": 1, "conc-end": 64}, 4, [1, 4, 16, 64]),
    ({"conc-start": 1, "conc-end": 100}, 4, [1, 4, 16, 64, 100]),
    ({"conc-list": [256, 512, 768]}, 2, [256, 512, 768]),
])
def test_conc_points(ss, step, expected):
    assert conc_points(ss, step) == expected


def test_within_keeps_only_declared_points():
    assert within([1, 2, 4, 8, 16], 3, 10) == [4, 8]
    assert within([1, 2, 4, 8, 16], None, None, {2, 16, 99}) == [2, 16]
    assert within([256, 512], None, 64) == []  # no invented [max-conc] point


def test_expand_keys_globs_in_catalog_order():
    keys = ["a-x", "b-x", "a-y", "c"]
    assert expand_keys(["a-*"], keys) == (["a-x", "a-y"], [])
    assert expand_keys(["?-x", "a-x", "c"], keys) == (["a-x", "b-x", "c"], [])
    assert expand_keys(["z*", "nope"], keys) == ([], ["z*", "nope"])


def test_seq_names():
    assert seq_name(8192, 1024) == "8k1k"
    assert seq_name(1024, 1024) == "1k1k"
    assert seq_name(2048, 128) == "2048_128"


def test_disagg_entry_expands_to_1p1d_and_2p1d(catalog):
    rows = generate(catalog, Selection(config_keys=["dsv4-fp4-mi355x-atom-disagg"]))
    assert len(rows) == 2
    one, two = rows
    assert one["conc"] == [4, 8, 16, 32, 64, 128]
    assert (one["prefill"]["num-worker"], one["decode"]["num-worker"]) == (1, 1)
    assert two["conc"] == [256, 512, 768, 1024, 2048]
    assert (two["prefill"]["num-worker"], two["decode"]["num-worker"]) == (2, 1)
    assert two["prefill"]["dp-attn"] and two["decode"]["dp-attn"]
    for row in rows:
        assert row["max-model-len"] == 9472
        assert row["image"] == "rocm/atom-dev:nightly_202609031453"
        assert row["router"]["name"] == "atomesh"
        assert row["kv-p2p-transfer"] == "mooncake"
        assert row["disagg"] is True
        assert row["exp-name"] == "dsv4_8k1k"
    assert (one["eval-conc"], two["eval-conc"]) == (128, 2048)


def test_every_row_matches_the_row_schema(catalog):
    for mode in ("default", "none", "only"):
        for row in generate(catalog, Selection(evals=mode)):
            assert validate_data(row, "matrix-row") == []


def test_eval_selection_upper_median_and_max(catalog):
    """dp-attn=false concs >= 16 are {16, 32, 64}: median 32 and max 64 on both TPs;
    dp-attn=true tp4 and tp8 pool {16..2048}: median 256 and max 2048."""
    rows = generate(catalog, Selection(config_keys=["dsv4-fp4-mi355x-atom"], seq_lens=["8k1k"]))
    marked = sorted((r["tp"], r["dp-attn"], r["conc"]) for r in rows if r["run-eval"])
    assert marked == [(4, False, 32), (4, False, 64), (8, False, 32), (8, False, 64),
                      (8, True, 256), (8, True, 2048)]


def test_evals_only_and_all_evals(catalog):
    only = generate(catalog, Selection(config_keys=["dsv4-fp4-mi355x-atom-disagg"],
                                       evals="only"))
    assert all(r["eval-only"] and r["run-eval"] for r in only)
    everything = generate(catalog, Selection(config_keys=["dsv4-fp4-mi355x-atom*"],
                                             evals="only", all_evals=True))
    multi = [r for r in everything if "prefill" in r]
    assert all(r["eval-all-concs"] and "eval-conc" not in r for r in multi)
    single = [r for r in everything if "prefill" not in r]
    assert {r["isl"] for r in single} == {8192}  # 1k1k never evaluates
    assert len(single) == 7 + 4 + 7 + 6 + 7 + 5  # every 8k1k point of atom and atom-mtp


def test_no_evals_marks_nothing(catalog):
    rows = generate(catalog, Selection(evals="none"))
    assert rows and not any(r["run-eval"] for r in rows)


def test_filters(catalog):
    def count(**kw):
        return len(generate(catalog, Selection(**kw)))

    total = count()
    assert count(single_node=False) == 2
    assert count(multi_node=False) == total - 2
    assert count(seq_lens=["1k1k"]) == 7
    assert count(max_tp=4) == 7 + 4 + 2  # tp4 rows plus the two multi-node rows
    assert count(runner_types=["mi355x-disagg"]) == 2
    assert count(precisions=["fp4"]) == total
    assert count(frameworks=["sglang"]) == 5 + 4
    rows = generate(catalog, Selection(config_keys=["dsv4-fp4-mi355x-atom-disagg"],
                                       min_conc=100, max_conc=600))
    assert [r["conc"] for r in rows] == [[128], [256, 512]]


def test_runner_node_filter(catalog):
    rows = generate(catalog, Selection(config_keys=["dsv4-fp4-mi355x-atom-disagg"],
                                       runner_node_filter="_07"))
    assert [r["runner"] for r in rows] == ["mi355x-amds_07", "mi355x-amds_07"]
    # a runner that exists but not under these keys' labels: an empty selection, no error
    assert generate(catalog, Selection(config_keys=["dsv4-fp4-mi355x-atom-disagg"],
                                       runner_node_filter="_00")) == []


def test_conc_filter_keeps_only_listed_points(catalog):
    rows = generate(catalog, Selection(config_keys=["dsv4-fp4-mi355x-atom-disagg"],
                                       conc=[8, 2048, 3]))
    assert [r["conc"] for r in rows] == [[8], [2048]]


@pytest.mark.parametrize(("kw", "text"), [
    ({"step_size": 1}, "--step-size must be greater than 1"),
    ({"min_conc": 64, "max_conc": 8}, "--min-conc 64 is greater than --max-conc 8"),
    ({"max_tp": 0}, "--max-tp must be positive"),
    ({"runner_types": ["h100"]}, "--runner-type 'h100' is not a label"),
    ({"config_keys": ["dsv4-fp4-mi355x-atom-disag"]}, "matches nothing"),
    ({"config_keys": ["llama*"]}, "matches nothing"),
    ({"precisions": ["fp3"]}, "--precision 'fp3' matches no config in the catalog (did you "
                              "mean 'fp4'?); valid: fp4"),
    ({"frameworks": ["sglan"]}, "valid: atom, atom-disagg, sglang"),
    ({"key_prefixes": ["llama"]}, "--model-prefix 'llama' matches no config"),
    ({"runner_node_filter": "nomatch"}, "--runner-node-filter 'nomatch' is part of no runner"),
])
def test_bad_selection(catalog, kw, text):
    with pytest.raises(InputError) as exc:
        generate(catalog, Selection(**kw))
    assert text in str(exc.value)


def test_keyed_rows_name_their_config(catalog):
    pairs = generate_keyed(catalog, Selection(config_keys=["dsv4-fp4-mi355x-sglang"]))
    assert {k for k, _ in pairs} == {"dsv4-fp4-mi355x-sglang"}


def test_cli_json_table_and_explain(run_cli):
    code, out, err = run_cli("matrix", "test-config", "--config-keys", "dsv4-*-disagg",
                             *FROZEN_ARGS)
    assert code == 0, err
    assert len(json.loads(out)) == 2
    code, out, _ = run_cli("matrix", "full-sweep", "--format", "table", "--multi-node",
                           *FROZEN_ARGS)
    assert code == 0
    assert "2P(TP8 DPA)+1D(TP8 DPA)" in out and "256 512 768 1024 2048" in out
    code, out, _ = run_cli("explain", "dsv4-fp4-mi355x-atom-disagg", *FROZEN_ARGS)
    assert code == 0
    assert "11 point(s) in 2 job(s)" in out
    assert "allocates 5 node(s)" in out


def test_cli_accepts_argparse_style_lists(run_cli):
    code, out, err = run_cli("matrix", "test-config", "--config-keys",
                             "dsv4-fp4-mi355x-sglang", "dsv4-fp4-mi355x-atom-disagg",
                             "--conc", "8", "64", "--no-evals", *FROZEN_ARGS)
    assert code == 0, err
    rows = json.loads(out)
    assert [r["conc"] for r in rows] == [8, 64, 64, [8, 64]]


def test_cli_usage_errors(run_cli):
    code, _, err = run_cli("matrix", "full-sweep", "--no-evals", "--all-evals", *FROZEN_ARGS)
    assert code == 2 and "--all-evals cannot be combined with --no-evals" in err
    code, _, err = run_cli("matrix", "test-config", "--config-keys", "x*", *FROZEN_ARGS)
    assert code == 1 and "matches nothing" in err


def test_explain_a_glob_explains_every_matching_key_as_if_named_alone(run_cli):
    code, out, err = run_cli("explain", "dsv4*atom*", *FROZEN_ARGS)
    assert code == 0, err
    keys = ["dsv4-fp4-mi355x-atom", "dsv4-fp4-mi355x-atom-mtp", "dsv4-fp4-mi355x-atom-disagg"]
    assert out.startswith(f"3 config keys match 'dsv4*atom*': {', '.join(keys)}\n")
    for key in keys:
        _, alone, _ = run_cli("explain", key, *FROZEN_ARGS)
        assert alone.strip() in out
    code, _, err = run_cli("explain", "llama*", *FROZEN_ARGS)
    assert code == 1 and "config key 'llama*' matches nothing" in err


@pytest.mark.parametrize(("args", "text"), [
    (["full-sweep", "--max-conc", "0"], "'--max-conc': 0 is not in the range x>=1"),
    (["full-sweep", "--min-conc", "-4"], "'--min-conc': -4 is not in the range x>=1"),
    (["full-sweep", "--max-tp", "0"], "'--max-tp': 0 is not in the range x>=1"),
    (["full-sweep", "--max-ep", "0"], "'--max-ep': 0 is not in the range x>=1"),
    (["full-sweep", "--step-size", "1"], "'--step-size': 1 is not in the range x>=2"),
    (["full-sweep", "--seq-lens", "8k"], "'8k' is not a sequence family: use 1k1k, 8k1k"),
    (["full-sweep", "--seq-lens", "0_1024"], "'0_1024' is not a sequence family"),
    (["test-config", "--config-keys", "dsv4*", "--conc", "0"], "'--conc': 0 is not in the range"),
])
def test_option_ranges_are_checked_when_parsed(run_cli, args, text):
    code, out, err = run_cli("matrix", *args, *FROZEN_ARGS)
    assert code == 2, err
    assert text in err and not out


def test_a_valid_family_absent_from_the_catalog_is_not_an_error(run_cli):
    code, out, err = run_cli("matrix", "full-sweep", "--seq-lens", "2048_1024", *FROZEN_ARGS)
    assert code == 0 and json.loads(out) == [] and "no rows" in err
