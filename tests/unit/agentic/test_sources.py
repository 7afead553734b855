"""Which corpus a row replays: InferenceX's choice by model prefix, overrides, the table."""

from __future__ import annotations

import pytest

from infersweep.agentic.sources import load_trace_datasets, resolve_source
from infersweep.diagnostics import InputError

FULL = "semianalysis_cc_traces_weka_062126"
CAPPED = "semianalysis_cc_traces_weka_062126_256k"


@pytest.fixture(scope="module")
def table():
    from tests.conftest import REPO

    return load_trace_datasets(REPO / "configs" / "runtimes.yaml")


@pytest.mark.parametrize("prefix, alias", [
    ("dsv4", FULL), ("dsv4-pro", FULL), ("glm5.2", FULL), ("minimaxm3", FULL),
    ("kimik3", FULL), ("qwen3.5", CAPPED), ("glm5", CAPPED), ("kimik2.5", CAPPED),
])
def test_the_model_prefix_picks_the_corpus(table, prefix, alias):
    src = resolve_source({"model-prefix": prefix}, datasets=table)
    assert src.alias == alias
    assert src.dataset == "semianalysisai/cc-traces-weka-" + alias.rsplit("weka_", 1)[1] \
        .replace("_", "-")
    assert src.revision == "main"  # the client pins none: it loads main


def test_an_override_wins(table):
    src = resolve_source({"model-prefix": "dsv4"},
                         "semianalysis_cc_traces_weka_with_subagents_060226_256k",
                         datasets=table)
    assert src.dataset == "semianalysisai/cc-traces-weka-with-subagents-060226-256k"
    assert src.reason == "override"


def test_inferencex_offers_fourteen_overrides(table):
    assert sum(bool(e.get("override")) for e in table.aliases.values()) == 14


@pytest.mark.parametrize("override, message", [
    ("semianalysis_cc_traces_weka_062216", "is not an alias"),
    ("semianalysis_cc_traces_weka_no_subagents", "is not one an override may pick"),
])
def test_a_bad_override_is_refused(table, override, message):
    with pytest.raises(InputError, match=message) as exc:
        resolve_source({"model-prefix": "dsv4"}, override, datasets=table)
    if "not an alias" in message:
        assert "did you mean 'semianalysis_cc_traces_weka_062126'" in str(exc.value)


def test_a_row_without_a_model_prefix_is_refused(table):
    with pytest.raises(InputError, match="no model-prefix"):
        resolve_source({"model": "x"}, datasets=table)


LOCK = """runtimes:
  srt-slurm:
    repository: https://github.com/x/srt-slurm
    commit: 81d46274f508e18ab14d1f123b75132005818dcf
    recipe-dialect: v1
trace-datasets:
  full-context-prefixes: [dsv4]
  full-context-alias: a
  default-alias: {default}
  aliases:
    a: {{dataset: o/a, revision: main, override: true}}
"""


def test_an_alias_the_table_lacks_is_located(tmp_path):
    f = tmp_path / "runtimes.yaml"
    f.write_text(LOCK.format(default="b"))
    with pytest.raises(InputError) as exc:
        load_trace_datasets(f)
    d = exc.value.diagnostics[0]
    assert (d.line, d.message) == (9, "default-alias 'b' is not under aliases")


def test_a_malformed_entry_is_a_schema_error(tmp_path):
    f = tmp_path / "runtimes.yaml"
    f.write_text(LOCK.format(default="a").replace("revision: main", "rev: main"))
    with pytest.raises(InputError) as exc:
        load_trace_datasets(f)
    assert all(d.line == 11 for d in exc.value.diagnostics)
