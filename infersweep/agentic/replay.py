"""One agentic point: the pinned client replays the row's traces, then its exports become the
point's result.

This is the benchmark step of an agentic recipe (``infersweep agentic replay``), the same on
Slurm and on the local executor. What differs between the two comes from the job's
environment, never from the recipe: a local folder of traces instead of the pinned corpus
(``INFERSWEEP_AGENTIC_TRACES``), a tokenizer folder instead of the model's
(``INFERSWEEP_AGENTIC_TOKENIZER``), and where the client's venv is
(``INFERSWEEP_AGENTIC_CLIENT_VENV``).

The client runs with a minimal environment: the variables below, its own settings, and
nothing else of the caller's (no tokens, no store URL).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from infersweep.agentic import replaycmd
from infersweep.agentic.client import ClientVenv
from infersweep.atomic import write_atomic
from infersweep.diagnostics import InputError

TRACES_ENV = "INFERSWEEP_AGENTIC_TRACES"
TOKENIZER_ENV = "INFERSWEEP_AGENTIC_TOKENIZER"
PASSED_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "TZ", "HF_HOME", "HF_HUB_CACHE",
              "HF_HUB_OFFLINE", "HF_ENDPOINT")
RESULT_SUFFIX = ".agentic.json"
# The client's processes talk over unix sockets under $TMPDIR (``<tmp>/tmpXXXXXXXX/aiperf/
# event_bus_proxy_frontend.ipc``), and a socket path holds at most 107 bytes: a deeper TMPDIR
# (a runner's job folder, act's) is replaced, for the client only, by a fresh folder here.
MAX_CLIENT_TMPDIR = 48
SHORT_TMP_PARENTS = ("/tmp", "/var/tmp")
PLAN_FILE = "replay-plan.json"
LOG_FILE = "replay.log"


@dataclass(frozen=True)
class Scaled:
    """What a scaled-down local run shrank, with the full values (recorded in the result)."""

    duration: tuple[int, int]  # (original, run)
    warmup: tuple[int, int]
    warmup_grace: tuple[int, int]

    def record(self) -> dict:
        return {name: {"original": o, "run": r} for name, (o, r) in
                (("duration", self.duration), ("warmup_requests_per_lane", self.warmup),
                 ("warmup_grace_period", self.warmup_grace)) if o != r}


def scaled_settings(factor: float, duration: int = replaycmd.FULL_DURATION_S) -> Scaled | None:
    """The window, warm-up and grace of a run scaled down by ``factor`` (None for 1)."""
    if factor <= 1:
        return None
    run = max(20, round(duration / factor))
    warm = max(1, round(replaycmd.WARMUP_REQUESTS_PER_LANE / factor))
    grace = max(30, round(replaycmd.WARMUP_GRACE_PERIOD_S / factor))
    return Scaled((duration, run), (replaycmd.WARMUP_REQUESTS_PER_LANE, warm),
                  (replaycmd.WARMUP_GRACE_PERIOD_S, grace))


def _local_traces(path: str) -> replaycmd.Traces:
    from infersweep.agentic.traces import load_corpus

    corpus = load_corpus(path)  # located errors, before the client (and any GPU) starts
    return replaycmd.Traces(local_dir=str(Path(path).absolute()), entries=len(corpus.traces))


def _public_traces(row: dict, override: str | None) -> replaycmd.Traces:
    from infersweep.agentic.sources import resolve_source

    source = resolve_source(row, override)
    return replaycmd.Traces(public_alias=source.alias)


def _tokenizer(name: str, work: Path, env: dict[str, str]) -> str:
    """A tokenizer folder is laid out as a hub cache entry the client can load offline;
    a hub id is passed on as it is."""
    if not Path(name).exists():
        return name
    from infersweep.agentic.tokenizer import layout_tokenizer

    hf_home = work / "hf-home"
    laid = layout_tokenizer(name, hf_home)
    env["HF_HOME"] = str(hf_home)
    env["HF_HUB_OFFLINE"] = "1"
    return laid


def short_tmpdir(env: dict[str, str]) -> str | None:
    """A fresh folder for the client's TMPDIR when the one it would get is longer than
    :data:`MAX_CLIENT_TMPDIR` (None: keep it); the caller removes it."""
    import tempfile

    current = env.get("TMPDIR") or tempfile.gettempdir()
    if len(current) <= MAX_CLIENT_TMPDIR:
        return None
    for parent in SHORT_TMP_PARENTS:
        if os.path.isdir(parent) and os.access(parent, os.W_OK | os.X_OK):
            return tempfile.mkdtemp(prefix="ixr-", dir=parent)
    return None


def run(row: dict, *, conc: int, url: str, result_dir: Path, name: str, client: ClientVenv,
        scale_down: float = 1.0, traces: str | None = None, tokenizer: str | None = None,
        trace_override: str | None = None, server_metrics: tuple[str, ...] = (),
        echo=print) -> Path:
    """Replay one point and write its result; returns the result file. Raises InputError
    (nothing written) when the client fails or leaves no exports."""
    from infersweep.agentic import result as results

    results.check_row(row)
    traces = traces or os.environ.get(TRACES_ENV) or None
    tokenizer = tokenizer or os.environ.get(TOKENIZER_ENV) or row["model"]
    point = f"{name}-c{conc}"
    artifacts = result_dir / point
    artifacts.mkdir(parents=True, exist_ok=True)
    env = {k: os.environ[k] for k in PASSED_ENV if k in os.environ}
    tok = _tokenizer(tokenizer, artifacts, env)
    source = _local_traces(traces) if traces else _public_traces(row, trace_override)
    scaled = scaled_settings(scale_down, int(row.get("duration") or replaycmd.FULL_DURATION_S))
    plan = replaycmd.ReplayPlan(
        url=url, model=row["model"], tokenizer=tok, conc=conc, traces=source,
        artifact_dir=str(artifacts.absolute() / "aiperf"), framework=str(row["framework"]),
        duration_s=scaled.duration[1] if scaled else int(row.get("duration")
                                                         or replaycmd.FULL_DURATION_S),
        warmup_requests_per_lane=scaled.warmup[1] if scaled else
        replaycmd.WARMUP_REQUESTS_PER_LANE,
        warmup_grace_period_s=scaled.warmup_grace[1] if scaled else
        replaycmd.WARMUP_GRACE_PERIOD_S,
        session_affinity=bool(row.get("dp-attn")),
        server_metrics=server_metrics or (url.rstrip("/") + "/metrics",))
    argv = replaycmd.argv(plan, str(client.aiperf))
    env.update(replaycmd.environment(plan))
    write_atomic(artifacts / PLAN_FILE, json.dumps(
        {"argv": argv, "env": replaycmd.environment(plan), "plan": asdict(plan),
         "unsafe": plan.unsafe, "scaled": scaled.record() if scaled else None,
         "client": f"{client.distribution}=={client.version}"}, indent=2, default=str) + "\n")
    echo(f"{point}: replaying {'local traces ' + traces if traces else source.public_alias} "
         f"at {conc} live sessions for {plan.duration_s} s with {client.distribution} "
         f"{client.version}" + (f" (unsafe: {'; '.join(plan.unsafe)})" if plan.unsafe else ""))
    started = time.monotonic()
    tmp = short_tmpdir(env)
    try:
        with open(artifacts / LOG_FILE, "ab") as log:
            done = subprocess.run(argv, env={**env, "TMPDIR": tmp} if tmp else env,
                                  stdin=subprocess.DEVNULL, stdout=log,
                                  stderr=subprocess.STDOUT, cwd=artifacts, check=False)
    finally:
        if tmp:
            import shutil

            shutil.rmtree(tmp, ignore_errors=True)
    took = time.monotonic() - started
    if done.returncode != 0:
        raise InputError(f"{point}: the replay client exited {done.returncode} after "
                         f"{took:.0f} s (its log: {artifacts / LOG_FILE})")
    framework = str(row["framework"])
    data = results.process(Path(plan.artifact_dir), row, framework=framework,
                           gpus=results.row_gpus(row),
                           scaled=scaled.record() if scaled else None)
    out = result_dir / f"{point}{RESULT_SUFFIX}"
    results.write(data, out, Path(plan.artifact_dir))
    echo(f"{point}: {data['num_requests_successful']} requests in {took:.0f} s -> {out}")
    return out
