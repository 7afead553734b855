"""``srtctl apply -f RECIPE -o OUTPUTS --json``, and what its output means.

srtctl prints one JSON line per submission on stdout and prose on stderr. Every outcome seen
from the real srtctl is told apart here (see docs/launch.md):

- exit 0, one ``{"status": "submitted", "slurm_job_id": ...}`` line: the job;
- exit 1, ``{"status": "error", "error": ...}``: schema errors, sbatch failures;
- exit 1 and no JSON line at all: recipe file not found, the setup check failed;
- exit 0, ``{"status": "no-submissions"}``: nothing was submitted;
- exit 0 with fewer (or more) submissions than recipes: a recipe was skipped.

A submission is one job; the launcher passes one recipe file, so anything but exactly one
``submitted`` line is a failure, and any job that was submitted anyway is returned so the
caller can cancel it by id.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

from infersweep.diagnostics import Diagnostic, InputError

APPLY_TIMEOUT_S = 600.0


@dataclass(frozen=True)
class Submission:
    job_id: str
    output_dir: Path
    job_name: str
    record: dict


class SubmitError(InputError):
    """srtctl did not submit exactly one job. ``submitted`` lists ids it did submit."""

    def __init__(self, message: str, hint: str, submitted: list[str] | None = None,
                 stderr: str = ""):
        super().__init__(Diagnostic("srtctl apply", 0, 0, message, hint, "srtctl-apply"))
        self.reason = message
        self.submitted = list(submitted or [])
        self.stderr = stderr


def json_lines(stdout: str) -> list[dict]:
    out = []
    for line in stdout.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            out.append(value)
    return out


def _tail(text: str, lines: int = 8) -> str:
    kept = [ln for ln in text.strip().splitlines() if ln.strip()][-lines:]
    return " | ".join(kept)


def parse(returncode: int, stdout: str, stderr: str) -> Submission:
    """The one submission in srtctl's output, or :class:`SubmitError` saying what happened."""
    records = json_lines(stdout)
    submitted = [r for r in records if r.get("status") == "submitted"]
    ids = [str(r.get("slurm_job_id")) for r in submitted if r.get("slurm_job_id")]
    errors = [r for r in records if r.get("status") == "error"]
    prose = _tail(stderr)
    if errors:
        raise SubmitError(f"srtctl apply failed (exit {returncode}): {errors[0].get('error')}",
                          f"srtctl said: {prose}" if prose else "fix the recipe or the "
                          "fleet's srtslurm profile", ids, stderr)
    if not records:
        raise SubmitError(f"srtctl apply printed no JSON line (exit {returncode})",
                          "srtctl exits this way when the recipe file does not exist or its "
                          "setup check fails (configs/nats-server, configs/etcd, bin/uv, "
                          f"bin/tachometer-scraper under its root); it said: {prose or '-'}",
                          ids, stderr)
    if any(r.get("status") == "no-submissions" for r in records) and not submitted:
        raise SubmitError("srtctl apply submitted nothing (no-submissions)",
                          f"the recipe path holds no recipe; srtctl said: {prose or '-'}",
                          ids, stderr)
    if len(submitted) != 1 or len(ids) != len(submitted):
        raise SubmitError(f"srtctl apply exited {returncode} with {len(submitted)} "
                          f"submission(s) ({', '.join(ids) or 'no job id'}); expected one",
                          "the launcher passes one recipe; any job submitted is cancelled",
                          ids, stderr)
    if returncode != 0:
        raise SubmitError(f"srtctl apply exited {returncode} after submitting job {ids[0]}",
                          f"srtctl said: {prose or '-'}", ids, stderr)
    rec = submitted[0]
    out = rec.get("output_dir")
    if not out:
        raise SubmitError(f"srtctl's line for job {ids[0]} has no output_dir",
                          "the pinned srtctl's --json contract changed?", ids, stderr)
    return Submission(ids[0], Path(out), str(rec.get("job_name") or ""), rec)


def apply(srtctl: Path, recipe: Path, outputs: Path, *, env: dict[str, str], cwd: Path,
          timeout: float = APPLY_TIMEOUT_S) -> Submission:
    """Run srtctl and parse its line; the environment is the caller's explicit one."""
    argv = [str(srtctl), "apply", "-f", str(recipe), "-o", str(outputs), "--json"]
    try:
        p = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd,
                           timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as exc:
        raise SubmitError(f"srtctl apply gave no answer within {timeout:g} s",
                          "sbatch or the cluster may hang; check `scontrol ping`",
                          stderr=str(exc.stderr or "")) from None
    except OSError as exc:
        raise SubmitError(f"cannot run {srtctl}: {exc.strerror or exc}",
                          "the srt-slurm cache entry is broken; delete it and launch again"
                          ) from None
    return parse(p.returncode, p.stdout, p.stderr)
