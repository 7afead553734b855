"""The validate rules on InferenceX's real catalogs: nothing real is rejected.

Loaded strictly (as `validate` does) the only errors are the eight runner labels its runners
file lacks (see test_inferencex_compat.py); the key convention, the framework and precision
values and the node capacity of every entry pass.
"""

from __future__ import annotations

import pytest

from infersweep.config.capacity import replica_gpus
from infersweep.config.catalog import load_catalog, load_runners
from infersweep.config.keyname import check_key
from infersweep.config.rules import search_spaces
from infersweep.config.vocabulary import check_values, recipe_engines


@pytest.fixture(scope="module")
def catalog(request):
    inferencex = request.getfixturevalue("inferencex")
    configs = inferencex / "configs"
    files = [configs / "amd-master.yaml", configs / "nvidia-master.yaml"]
    # strictly loaded, only the eight unknown labels fail: test_inferencex_compat.py
    return load_catalog(files, configs / "runners.yaml", strict_runners=False)


@pytest.fixture(scope="module")
def inferencex():  # module scope for the catalog above; skips like the shared fixture
    from tests.conftest import INFERENCEX

    if not (INFERENCEX / "configs" / "amd-master.yaml").is_file():
        pytest.skip("InferenceX reference data (../shared/reference/inferencex) not present")
    return INFERENCEX


def test_every_real_key_follows_its_entry(catalog):
    frameworks = {e["framework"] for e in catalog.entries.values()} | set(recipe_engines())
    for key, entry in catalog.entries.items():
        assert check_key(catalog.sources[key], key, entry, labels=catalog.runners.labels,
                         frameworks=frameworks, skip=set()) == [], key


def test_no_real_framework_or_precision_is_taken_for_a_typo(catalog):
    assert check_values(catalog.entries, catalog.sources) == ([], set())


def test_every_real_single_node_entry_fits_its_nodes(inferencex, catalog):
    runners = load_runners(inferencex / "configs" / "runners.yaml")
    checked = 0
    for key, entry in catalog.entries.items():
        cap = runners.capacity(entry["runner"])
        for *_, ss in search_spaces(entry):
            if "prefill" in ss or cap.gpus_per_node is None:
                continue
            assert replica_gpus(ss) <= cap.gpus_per_node, key
            checked += 1
    assert checked > 200  # most labels' GPUs per node are known (hardware or shared runners)
