"""A rendered recipe: the data ``srtctl apply`` receives, where it came from, and its points."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

from infersweep.recipe import workload

TEMPLATE = "template"  # the config's own template under our benchmarks/
DEFAULT = "framework-default"  # the framework's default template (no template of its own)
SRT_SLURM = "srt-slurm"  # a recipe in an srt-slurm checkout


@dataclass
class Rendered:
    recipe: dict
    template: Path  # as found (repo-relative when the repo is the cwd)
    config_file: str  # the row's CONFIG_FILE value
    workload: workload.Workload
    points: list[workload.Point] = field(default_factory=list)
    source: str = TEMPLATE  # TEMPLATE, DEFAULT or SRT_SLURM: where ``template`` was found
    checkout: Path | None = None  # the srt-slurm checkout, for SRT_SLURM
    commit: str | None = None  # its commit, when it is a git checkout
    replaces: str | None = None  # the named CONFIG_FILE a default stands in for

    @property
    def name(self) -> str:
        return self.recipe["name"]

    def origin(self) -> str:
        if self.source == SRT_SLURM:
            at = f" at {self.commit[:12]}" if self.commit else ""
            return f"{self.config_file} in the srt-slurm checkout {self.checkout}{at}"
        if self.source == DEFAULT:
            why = (f"in place of CONFIG_FILE={self.replaces}, which exists nowhere"
                   if self.replaces else "the config has no template or recipe of its own")
            return f"{self.template.as_posix()} (its framework's default: {why})"
        return self.template.as_posix()

    def text(self) -> str:
        edit = ("the benchmark section comes from the matrix row" if self.source == SRT_SLURM
                else "edit the template or the matrix row, not this file")
        points = " ".join(str(p.conc) for p in self.points)
        if not self.points and getattr(self.workload, "eval_only", False):
            points = (f"none, the GSM8K eval alone at concurrency {self.workload.eval_conc} "
                      "(an eval-only row)")
        head = (f"# Rendered by `infersweep recipe render` from {self.origin()};\n"
                f"# {edit}.\n"
                f"# points (concurrency): {points}\n")
        return head + dump(self.recipe)

    def as_json(self) -> dict:
        return {"template": self.template.as_posix(), "config-file": self.config_file,
                "source": self.source, "commit": self.commit, "replaces": self.replaces,
                "name": self.name, "recipe": self.recipe,
                "points": [{"conc": p.conc, "num-prompts": p.num_prompts,
                            "num-warmups": p.num_warmups, "result-file": p.result_file}
                           for p in self.points]}


class _Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data):
        return True


def _str(dumper, value: str):
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def dump(data: dict) -> str:
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100,
                     default_flow_style=False)
