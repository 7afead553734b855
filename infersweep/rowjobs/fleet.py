"""``configs/fleets.yaml``: the one source of every fleet-specific launch setting.

A runner is named ``<fleet>_<NN>``; its launcher script calls ``infersweep launch --fleet
<fleet>``. The fleet says how its launches run (``executor``: through srt-slurm, or on the
runner with the local executor), how many nodes a job may take, the srtslurm.yaml cluster profile,
how a new srt-slurm checkout is set up there, how the job starts our client, and the job's
environment (passed names and fixed values: nothing else is inherited).
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

from infersweep.config.schema import validate_doc
from infersweep.diagnostics import Diagnostic, InputError, did_you_mean
from infersweep.yamldoc import load_yaml

FLEETS_PATH = Path("configs") / "fleets.yaml"
SCHEMA = "fleets"
DEFAULT_CLIENT = "python3 -m infersweep"
BUNDLE = "{bundle}"
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


@dataclass(frozen=True)
class Fleet:
    name: str
    source: str  # the fleets file it came from
    nodes: int
    gpus_per_node: int
    srtslurm: dict
    executor: str = "srt-slurm"  # or "local": the row runs on the runner, simulated
    scale_down: float = 1.0
    client: str = DEFAULT_CLIENT
    scratch: str | None = None
    scratch_in_container: str | None = None
    template: str | None = None
    setup: tuple[str, ...] = ()
    setup_links: dict = field(default_factory=dict)
    env_pass: tuple[str, ...] = ()
    env_set: dict = field(default_factory=dict)
    deadline_margin_s: int = 3600

    def expand(self, text: str, repo: Path, venv: Path | None = None) -> str:
        """``{python}``, ``{repo}`` and ``{venv}`` in a fleet value."""
        return (text.replace("{python}", sys.executable)
                .replace("{repo}", str(Path(repo).resolve()))
                .replace("{venv}", str(venv) if venv else "{venv}"))

    def client_command(self, repo: Path, scratch: Path | None = None) -> str:
        """The client command of the recipe's benchmark step. ``{bundle}`` is the client bundle
        (built into ``scratch`` once per content, named by its hash) as the container sees it."""
        command = self.expand(self.client, repo)
        if BUNDLE in command:
            command = command.replace(BUNDLE, self._bundle_in_container(scratch))
        return command

    def _bundle_in_container(self, scratch: Path | None) -> str:
        if scratch is None or not self.scratch_in_container:
            raise InputError(Diagnostic(
                self.source, 0, 0, f"fleet '{self.name}': its client names {BUNDLE} but the "
                "scratch folder's place in the container is unknown",
                "set scratch-in-container (and mount the scratch folder there)", "fleet"))
        from infersweep.bench.bundle import ensure_bundle

        built = ensure_bundle(Path(scratch) / "bundles")
        return f"{self.scratch_in_container.rstrip('/')}/bundles/{built.path.name}"

    def link_target(self, target: str, repo: Path, venv: Path) -> str | None:
        if target.startswith("which:"):
            name = target[len("which:"):]
            return shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin")
        return self.expand(target, repo, venv)

    def job_env(self, repo: Path, environ: dict[str, str] | None = None) -> dict[str, str]:
        """The environment srtctl and the job get, built from nothing: a system PATH, HOME,
        LANG, the fleet's passed names (where set) and its fixed values."""
        environ = os.environ if environ is None else environ
        env = {"PATH": SYSTEM_PATH, "HOME": environ.get("HOME", "/root"), "LANG": "C.UTF-8"}
        env.update({k: environ[k] for k in self.env_pass if k in environ})
        env.update({k: self.expand(v, repo) for k, v in self.env_set.items()})
        return env


def load_fleets(path: str | Path) -> dict[str, Fleet]:
    path = Path(path)
    if not path.is_file():
        raise InputError(Diagnostic(str(path), 0, 0, "no fleets file",
                                    f"pass --fleets FILE or add {FLEETS_PATH}", "fleet"))
    doc = load_yaml(path)
    problems = validate_doc(doc, SCHEMA)
    if problems:
        raise InputError(problems)
    out = {}
    for name, f in doc.data["fleets"].items():
        env = f.get("job-env") or {}
        out[name] = Fleet(
            name=name, source=str(path), nodes=f["nodes"], gpus_per_node=f["gpus-per-node"],
            srtslurm=dict(f.get("srtslurm") or {}), executor=f.get("executor", "srt-slurm"),
            scale_down=float(f.get("scale-down", 1)), client=f.get("client", DEFAULT_CLIENT),
            scratch=f.get("scratch"), scratch_in_container=f.get("scratch-in-container"),
            template=f.get("template"),
            setup=tuple(f.get("setup") or ()), setup_links=dict(f.get("setup-links") or {}),
            env_pass=tuple(env.get("pass") or ()), env_set=dict(env.get("set") or {}),
            deadline_margin_s=f.get("deadline-margin-s", 3600))
    return out


def fleet_name(runner: str | None) -> str | None:
    """``mi355x-amds_03`` -> ``mi355x-amds`` (the runner naming rule)."""
    if not runner:
        return None
    return runner.split("_", 1)[0]


def get_fleet(path: str | Path, name: str | None, runner: str | None) -> Fleet:
    fleets = load_fleets(path)
    wanted = name or fleet_name(runner)
    if not wanted:
        raise InputError(Diagnostic(str(path), 0, 0, "no fleet given",
                                    "pass --fleet NAME (or run on a runner named <fleet>_<NN>)",
                                    "fleet"))
    if wanted not in fleets:
        hint = did_you_mean(wanted, fleets) or f"known fleets: {', '.join(sorted(fleets))}"
        raise InputError(Diagnostic(str(path), 0, 0, f"unknown fleet '{wanted}'", hint, "fleet"))
    return fleets[wanted]
