"""One key per config everywhere: a launched row is recorded under its catalog key, never the
row's exp-name (which the ATOM, ATOM-MTP and SGLang configs of the catalog share)."""

from __future__ import annotations

import pytest

from infersweep.config.catalog import load_catalog
from infersweep.diagnostics import InputError
from infersweep.launch.identity import config_key
from infersweep.matrix.generate import Selection, generate_keyed, keyed_rows
from tests.conftest import FROZEN_MASTER, FROZEN_RUNNERS
from tests.livecatalog import frozen_checkout

SHARED_EXP = ("dsv4-fp4-mi355x-atom", "dsv4-fp4-mi355x-atom-mtp", "dsv4-fp4-mi355x-sglang")


@pytest.fixture(scope="module")
def catalog():
    return load_catalog([FROZEN_MASTER], FROZEN_RUNNERS, strict_runners=False)


def _first(catalog, key):
    return next(r for k, r in generate_keyed(catalog, Selection(config_keys=[key], evals="none"))
                if k == key)


def test_configs_sharing_an_exp_name_keep_their_own_keys(catalog):
    rows = {key: _first(catalog, key) for key in SHARED_EXP}
    assert len({r["exp-name"] for r in rows.values()}) == 1  # what made the old key wrong
    repo = frozen_checkout()
    assert {key: config_key(row, repo) for key, row in rows.items()} == {
        key: key for key in SHARED_EXP}


def test_a_keyed_row_names_its_entry_and_is_checked(catalog):
    repo = frozen_checkout()
    row = keyed_rows(catalog, Selection(config_keys=["dsv4-fp4-mi355x-sglang"], evals="none"))[0]
    assert row["config-key"] == "dsv4-fp4-mi355x-sglang"
    assert config_key(row, repo) == "dsv4-fp4-mi355x-sglang"
    warned = []
    lying = {**row, "config-key": "dsv4-fp4-mi355x-atom"}
    assert config_key(lying, repo, warn=warned.append) == "dsv4-fp4-mi355x-atom"
    assert warned and "no row of dsv4-fp4-mi355x-atom in the catalog has this row's recipe" \
        in warned[0]
    with pytest.raises(InputError, match="contradicts the row's config-key"):
        config_key(row, repo, given="dsv4-fp4-mi355x-atom")
    with pytest.raises(InputError, match=r"\[launch-config-key\].*the catalog has no such key"):
        config_key({**row, "config-key": "nope"}, repo)


def test_a_row_of_no_entry_is_refused(catalog):
    row = {**_first(catalog, "dsv4-fp4-mi355x-atom"), "tp": 3}
    with pytest.raises(InputError, match="matches no config of the catalog"):
        config_key(row, frozen_checkout())


def test_without_a_catalog_the_row_or_the_option_names_the_key(catalog, tmp_path):
    row = _first(catalog, "dsv4-fp4-mi355x-atom")
    assert config_key(row, tmp_path, given="mine") == "mine"
    assert config_key({**row, "config-key": "theirs"}, tmp_path) == "theirs"
    with pytest.raises(InputError, match="names no config-key"):
        config_key(row, tmp_path)
