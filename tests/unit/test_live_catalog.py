"""The live catalog (configs/*-master.yaml, configs/runners.yaml): only what must hold for any
valid content, so that adding a configuration as docs/adding-a-config.md says never turns a
test red. Counts and rows are asserted on the frozen copy in tests/data/catalog."""

from __future__ import annotations

import pytest

from infersweep.config.catalog import default_config_files, default_runner_file, load_catalog
from infersweep.config.schema import validate_data
from infersweep.matrix.generate import Selection, generate_keyed
from tests.conftest import REPO

pytestmark = pytest.mark.live_catalog


@pytest.fixture(scope="module")
def live():
    files = default_config_files(REPO)
    assert files, "configs/*-master.yaml is missing"
    return load_catalog(files, default_runner_file(REPO))


def test_live_catalog_validates(run_cli):
    code, out, err = run_cli("validate", cwd=REPO)
    assert code == 0, err
    assert out.startswith("ok: ")


@pytest.mark.parametrize("evals", ["default", "none", "only"])
def test_every_live_key_expands_to_schema_valid_rows(live, evals):
    pairs = generate_keyed(live, Selection(evals=evals))
    for _, row in pairs:
        assert validate_data(row, "matrix-row") == [], row
    if evals != "only":  # not every config has a point that runs evals
        assert {key for key, _ in pairs} == set(live.entries)


def test_every_live_key_can_be_explained(live, run_cli):
    for key in live.entries:
        code, out, err = run_cli("explain", key, cwd=REPO)
        assert code == 0, err
        assert out.startswith(f"{key}: ")
