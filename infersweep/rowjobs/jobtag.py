"""Names and comments that tie a Slurm job to the run, attempt and runner that submitted it.

The job name is what people see in ``squeue``; the comment (``--comment``) is the
machine-readable tag an orphan search reads back. Both are built here and nowhere else.
Cancelling is always by job id: a name or comment is for finding a job, never for killing one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

PREFIX = "infersweep"
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")
_NAME_MAX = 120  # Slurm keeps longer names, but squeue's columns and srtctl's logs do not
_COMMENT = re.compile(rf"^{PREFIX}:run_id=([^,]+),attempt=(\d+),runner=(.+)$")


def _safe(text: str) -> str:
    return _UNSAFE.sub("_", text).strip("_") or "_"


@dataclass(frozen=True)
class JobTag:
    run_id: str
    attempt: int
    runner: str

    def __post_init__(self):
        if not str(self.run_id).strip():
            raise ValueError("a job tag needs a run id")
        if int(self.attempt) < 1:
            raise ValueError(f"attempt must be 1 or more, got {self.attempt}")
        if not str(self.runner).strip():
            raise ValueError("a job tag needs a runner name")

    @property
    def name(self) -> str:
        """``infersweep-<run>-a<attempt>-<runner>``: only ``[A-Za-z0-9_.-]``, shell- and
        sbatch-safe (srtctl takes it from ``RUNNER_NAME``)."""
        name = f"{PREFIX}-{_safe(str(self.run_id))}-a{int(self.attempt)}-{_safe(self.runner)}"
        return name[:_NAME_MAX]

    @property
    def comment(self) -> str:
        """``infersweep:run_id=<run>,attempt=<n>,runner=<runner>`` with no spaces, so it
        survives an ``#SBATCH --comment=...`` line unquoted."""
        return (f"{PREFIX}:run_id={_safe(str(self.run_id))},attempt={int(self.attempt)},"
                f"runner={_safe(self.runner)}")

    @classmethod
    def from_comment(cls, comment: str) -> JobTag | None:
        """The tag a :attr:`comment` holds, or None for a job that is not ours."""
        m = _COMMENT.match(comment.strip())
        if not m:
            return None
        return cls(m.group(1), int(m.group(2)), m.group(3))
