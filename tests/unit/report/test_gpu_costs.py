"""configs/gpu-costs.yaml: its schema, errors at their line and column, the hardware lookup,
and `infersweep validate` checking it."""

from __future__ import annotations

from pathlib import Path

import pytest

from infersweep.diagnostics import InputError
from infersweep.report import costs

REPO = Path(__file__).resolve().parents[3]
FILE = REPO / "configs" / "gpu-costs.yaml"

GOOD = """\
tiers:
  hyperscaler: Owning, hyperscaler rates
  rental: 3-year rental
hardware:
  mi355x:
    vendor: amd
    usd-per-gpu-hour:
      hyperscaler: {value: 1.48, source: "a published survey", date: 2026-04-03}
      rental: {value: 2.1, source: "a published survey", date: "2026-04-03"}
    all-in-kw: {value: 2.65, source: "a datacenter model", date: "2026-04-03"}
"""


def _write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "gpu-costs.yaml"
    p.write_text(text)
    return p


def test_the_repository_file_names_a_source_and_date_for_every_number():
    c = costs.load(FILE)
    assert list(c.tiers) == ["hyperscaler", "neocloud", "rental"]
    assert {"mi355x", "b200", "h100"} <= set(c.hardware)
    for name, gpu in c.hardware.items():
        assert set(gpu.usd_per_gpu_hour) == set(c.tiers), name
        for s in [*gpu.usd_per_gpu_hour.values(), gpu.all_in_kw]:
            assert s.value > 0 and s.source and len(s.date) == 10, name
    # the figures InferenceX's app marks as temporary are called estimates here
    assert c.hardware["b300"].usd_per_gpu_hour["rental"].source.startswith("estimate")
    assert c.hardware["mi355x"].usd_per_gpu_hour["hyperscaler"].value == 1.48


def test_a_results_row_hw_finds_its_entry_by_name_or_base_name(tmp_path):
    c = costs.load(_write(tmp_path, GOOD))
    assert c.entry_name("mi355x") == "mi355x"
    assert c.entry_name("mi355x-disagg") == c.entry_name("mi355x_amds") == "mi355x"
    assert c.entry_name("b200") is None and c.entry_name(None) is None
    assert c.hardware["mi355x"].usd_per_gpu_hour["hyperscaler"].date == "2026-04-03"
    data = c.as_data()
    assert data["tiers"][0] == {"id": "hyperscaler", "name": "Owning, hyperscaler rates"}
    assert data["hardware"]["mi355x"]["kw"]["value"] == 2.65


def test_every_mistake_is_reported_at_its_place(tmp_path):
    bad = GOOD.replace("  mi355x:", "  MI355X:").replace("value: 1.48", "value: -1").replace(
        '"2026-04-03"}\n    all-in', '"2026-4-3"}\n    all-in').replace("rental: {", "retail: {")
    with pytest.raises(InputError) as exc:
        costs.load(_write(tmp_path, bad))
    got = [(d.line, d.col, d.rule, d.message) for d in exc.value.diagnostics]
    assert (5, 3, "schema", 'hardware name "MI355X" is not lower-case letters, digits and '
            "'.'") in got
    assert (8, 28, "schema", "'value' must be greater than 0, got -1") in got
    assert any(line == 9 and "date \"2026-4-3\" is not YYYY-MM-DD" in m
               for line, _c, _r, m in got)
    assert (9, 7, "gpu-costs-tier", "cost tier 'retail' is not one of tiers (hyperscaler, "
            "rental)") in got


def test_a_missing_source_or_an_empty_file_says_what_to_write(tmp_path):
    with pytest.raises(InputError, match="missing required key 'source'"):
        costs.load(_write(tmp_path, GOOD.replace('source: "a datacenter model", ', "")))
    with pytest.raises(InputError, match="the GPU costs file is empty"):
        costs.load(_write(tmp_path, "# nothing\n"))


def test_validate_checks_the_costs_file(run_cli, tmp_path):
    code, out, err = run_cli("validate", str(FILE), cwd=REPO)
    assert code == 0, err
    assert out.strip() == f"ok: GPU costs file {FILE}"
    bad = _write(tmp_path, GOOD.replace("value: 2.65", "value: 0"))
    code, out, err = run_cli("validate", str(bad), cwd=REPO)
    assert code == 1
    assert f"{bad}:10:" in err and "'value' must be greater than 0" in err
