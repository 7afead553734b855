"""The results folder of a run of rows: new or empty, so no run mixes with an earlier one."""

from __future__ import annotations

from pathlib import Path

from infersweep.diagnostics import Diagnostic, InputError

DEFAULT_OUTPUT = Path("results")


def output_dir(output: Path | None, run_hint: str) -> Path:
    """``output`` when it is a new or empty folder, else ``results/<run_hint>``."""
    if output is None:
        return DEFAULT_OUTPUT / run_hint
    if output.exists() and not output.is_dir():
        raise InputError(Diagnostic(str(output), 0, 0, "--output is a file, not a folder",
                                    "name a new or empty folder", "sweep-output"))
    if output.is_dir() and any(output.iterdir()):
        raise InputError(Diagnostic(str(output), 0, 0, "--output already holds files",
                                    "name a new or empty folder; to re-run missing points pass "
                                    f"--previous-manifest {output}", "sweep-output"))
    return output
