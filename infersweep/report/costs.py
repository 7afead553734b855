"""GPU costs and provisioned power (``configs/gpu-costs.yaml``): $/GPU-hr per cost tier and
all-in kW per GPU, per hardware, each with its source and date.

The explorer page derives its cost and energy metrics from these (the formulas live in the
page's script, so a reader's own $/GPU-hr and kW recompute the same way). A results row's
``hw`` finds its entry by name, else by its part before the first ``-`` or ``_``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from infersweep.config.schema import validate_doc
from infersweep.diagnostics import InputError
from infersweep.yamldoc import load_yaml

DEFAULT_PATH = "configs/gpu-costs.yaml"
SCHEMA = "gpu-costs"


@dataclass(frozen=True)
class Sourced:
    value: float
    source: str
    date: str


@dataclass(frozen=True)
class GpuCost:
    vendor: str
    usd_per_gpu_hour: dict[str, Sourced]  # tier id -> $/GPU-hr
    all_in_kw: Sourced


@dataclass(frozen=True)
class GpuCosts:
    tiers: dict[str, str]            # tier id -> how people name it, in the file's order
    hardware: dict[str, GpuCost]
    path: str

    def entry_name(self, hw: str | None) -> str | None:
        """The hardware entry a results row's ``hw`` uses: itself, else its base name."""
        if not hw:
            return None
        if hw in self.hardware:
            return hw
        base = re.split(r"[-_]", hw, maxsplit=1)[0]
        return base if base in self.hardware else None

    def as_data(self) -> dict:
        """What the explorer's data file carries: tiers, and per hardware its vendor, numbers
        and sources."""
        def one(s: Sourced) -> dict:
            return {"value": s.value, "source": s.source, "date": s.date}
        return {"tiers": [{"id": k, "name": v} for k, v in self.tiers.items()],
                "hardware": {name: {"vendor": g.vendor,
                                    "usd": {t: one(s) for t, s in g.usd_per_gpu_hour.items()},
                                    "kw": one(g.all_in_kw)}
                             for name, g in sorted(self.hardware.items())}}


def _sourced(d: dict) -> Sourced:
    return Sourced(float(d["value"]), str(d["source"]), str(d["date"]))


def _dates_as_text(data) -> None:
    """An unquoted YAML date (``date: 2026-04-03``) is read as a date: keep it as its text."""
    import datetime

    if isinstance(data, dict):
        for k, v in data.items():
            if isinstance(v, datetime.date):
                data[k] = v.isoformat()
            else:
                _dates_as_text(v)


def load(path: str | Path = DEFAULT_PATH) -> GpuCosts:
    """The costs file, checked by its schema and for tiers it does not declare; every problem
    is reported at its line and column."""
    doc = load_yaml(str(path))
    if doc.data is None:
        raise InputError(doc.diag((), "the GPU costs file is empty",
                                  "expected 'tiers:' and 'hardware:' (see "
                                  "configs/gpu-costs.yaml)"))
    _dates_as_text(doc.data)
    diags = validate_doc(doc, SCHEMA)
    tiers = doc.data.get("tiers") if isinstance(doc.data, dict) else None
    hardware = doc.data.get("hardware") if isinstance(doc.data, dict) else None
    tiers = tiers if isinstance(tiers, dict) else {}
    for name, gpu in (hardware if isinstance(hardware, dict) else {}).items():
        usd = gpu.get("usd-per-gpu-hour") if isinstance(gpu, dict) else None
        for tier in usd if isinstance(usd, dict) else ():
            if tiers and tier not in tiers:
                diags.append(doc.diag(("hardware", name, "usd-per-gpu-hour", tier),
                                      f"cost tier '{tier}' is not one of tiers "
                                      f"({', '.join(tiers)})",
                                      "declare it under tiers:, or use one declared there",
                                      rule="gpu-costs-tier", key=True))
    if diags:
        raise InputError(sorted(set(diags)))
    hardware = {name: GpuCost(str(g["vendor"]),
                              {t: _sourced(s) for t, s in g["usd-per-gpu-hour"].items()},
                              _sourced(g["all-in-kw"]))
                for name, g in doc.data["hardware"].items()}
    return GpuCosts(dict(tiers), hardware, str(path))


def load_default(path: Path | None = None, *, default: Path = Path(DEFAULT_PATH)
                 ) -> GpuCosts | None:
    """``path``, else ``default`` when it exists (run from the repository), else None (the
    explorer then shows throughput and latency only)."""
    if path is not None:
        return load(path)
    return load(default) if default.is_file() else None
