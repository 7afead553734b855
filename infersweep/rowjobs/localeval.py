"""The local job's GSM8K eval: the simulator in answer mode and `eval gsm8k` against the router.

A row marked ``run-eval`` gets every simulated worker started with the GSM8K test split as
its answer key at a set accuracy; the recipe's own eval step (after the throughput points,
against the still-running router, into ``eval/`` beside the point results) gets the local
data files, the row and the job's provenance through ``$INFERSWEEP_EVAL_ARGS``.
"""

from __future__ import annotations

import math
import shlex
from dataclasses import dataclass
from pathlib import Path

from infersweep.evals import dataset

EVAL_SUBDIR = "eval"
PROVENANCE_FILE = "eval-provenance.json"  # the job's provenance for `eval gsm8k --manifest`
DEFAULT_ACCURACY = 0.96
FULL_SET = 1319  # GSM8K's test split; --scale-down F runs ceil(1319 / F) problems
IDLE_TIMEOUT_S = 10.0  # a stalled simulated answer is retried after this much silence


@dataclass(frozen=True)
class EvalSim:
    accuracy: float = DEFAULT_ACCURACY
    stall_rate: float = 0.0  # fraction of eval answers whose stream stalls
    data_dir: Path | None = None  # holds test.jsonl and train.jsonl
    scale_down: float = 1.0

    def files(self, workdir: Path) -> tuple[Path, Path]:
        if self.data_dir is not None:
            return Path(self.data_dir) / "test.jsonl", Path(self.data_dir) / "train.jsonl"
        return dataset.write(Path(workdir) / "gsm8k", n_test=dataset.BUILTIN_TEST,
                             n_train=dataset.BUILTIN_TRAIN, seed=dataset.BUILTIN_SEED)

    def limit(self) -> int:
        return max(1, math.ceil(FULL_SET / self.scale_down))

    def engine_args(self, test_file: Path) -> list[str]:
        return ["--eval-answer-key", str(test_file), "--eval-accuracy", f"{self.accuracy:g}",
                "--eval-hang-rate", f"{self.stall_rate:g}"]

    def args(self, workdir: Path, test_file: Path, train_file: Path) -> str:
        """``$INFERSWEEP_EVAL_ARGS`` for the recipe's eval step: local files and provenance."""
        return shlex.join([
            "--row", str(Path(workdir) / "row.json"),
            "--manifest", str(Path(workdir) / PROVENANCE_FILE),
            "--test-file", str(test_file), "--train-file", str(train_file),
            "--limit", str(self.limit()), "--idle-timeout", f"{IDLE_TIMEOUT_S:g}",
            "--retry-backoff", "0.2", "--no-progress"])


def provenance_doc(provenance, job_id: str) -> dict:
    """The manifest's provenance as far as it is known when the job starts."""
    return {"provenance": {
        "config-key": provenance.config_key, "image": provenance.image,
        "srt-slurm-commit": provenance.srt_slurm_commit,
        "atom-revision": provenance.atom_revision, "executor": "local", "job-id": job_id,
        "run-id": provenance.run_id, "attempt": provenance.attempt}}
