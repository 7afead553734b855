"""The local Slurm cluster started by scripts/slurm-local-cluster, as tests see it."""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
SCRIPT = REPO / "scripts" / "slurm-local-cluster"
DEFAULT_DIR = Path("/var/tmp/infersweep-slurm")
PARTITION = "local"
NODES = ("node1", "node2", "node3")
GPUS_PER_NODE = 8


@dataclass
class LocalSlurm:
    dir: Path
    accounting: bool  # sacct answers (slurmdbd) or not (scontrol only)
    submitted: list[str] = field(default_factory=list)

    @property
    def conf(self) -> Path:
        return self.dir / "etc" / "slurm.conf"

    def env(self, **extra: str) -> dict[str, str]:
        return {**os.environ, "SLURM_CONF": str(self.conf), **extra}

    def run(self, *argv: str, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run(list(argv), capture_output=True, text=True, env=self.env(),
                              check=check, timeout=60)

    def submit(self, script: str, *sbatch_args: str, cwd: Path | None = None) -> str:
        """sbatch a shell script body; returns the job id (cancelled at session end)."""
        p = subprocess.run(["sbatch", "--parsable", "--output=/dev/null", *sbatch_args],
                           input="#!/bin/bash\n" + script + "\n", capture_output=True, text=True,
                           env=self.env(), cwd=cwd, timeout=60)
        assert p.returncode == 0, f"sbatch failed: {p.stderr}"
        job_id = p.stdout.strip().split(";")[0]
        self.submitted.append(job_id)
        return job_id

    def track(self, job_id: str) -> None:
        """Cancel this job (by id) at session end if a test leaves it behind."""
        self.submitted.append(str(job_id))

    def queued(self) -> set[str]:
        """Ids squeue still lists (pending, running, completing)."""
        out = self.run("squeue", "--noheader", "-o", "%i").stdout
        return {line.strip() for line in out.splitlines() if line.strip()}

    def stop_slurmdbd(self) -> None:
        """Stop the accounting daemon (a real transient outage of `sacct`)."""
        pid_file = self.dir / "run" / "slurmdbd.pid"
        pid = int(pid_file.read_text())
        os.kill(pid, 15)
        for _ in range(100):
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.1)
        raise AssertionError("slurmdbd did not stop")

    def start_slurmdbd(self) -> None:
        with open(self.dir / "log" / "slurmdbd.log", "a") as log:
            subprocess.run(["slurmdbd"], env=self.env(), check=True, stdout=log, stderr=log,
                           timeout=60)

    def cancel_submitted(self) -> None:
        live = self.queued()
        for job_id in self.submitted:
            if job_id in live:
                self.run("scancel", job_id, check=False)


def cluster_or_reason() -> tuple[LocalSlurm | None, str]:
    d = Path(os.environ.get("INFERSWEEP_SLURM_DIR", DEFAULT_DIR))
    conf = d / "etc" / "slurm.conf"
    hint = f"start it with `{SCRIPT.relative_to(REPO)} up` (as root)"
    if not conf.is_file():
        return None, f"local Slurm is not up (no {conf}); {hint}"
    env = {**os.environ, "SLURM_CONF": str(conf)}
    try:
        ping = subprocess.run(["scontrol", "ping"], capture_output=True, text=True, env=env,
                              timeout=20)
    except FileNotFoundError:
        return None, f"Slurm clients are not installed; {hint}"
    if ping.returncode != 0 or "UP" not in ping.stdout:
        return None, f"slurmctld does not answer ({ping.stdout.strip() or ping.stderr.strip()}); {hint}"
    sacct = subprocess.run(["sacct", "-n", "-X", "-S", "now-1minutes"], capture_output=True,
                           text=True, env=env, timeout=30)
    return LocalSlurm(d, accounting=sacct.returncode == 0), ""
