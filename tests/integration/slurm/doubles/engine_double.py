"""TEST DOUBLE: engine launch commands mapped onto the project's simulator.

srtctl starts engines with their own command lines (`vllm serve /model --host 0.0.0.0 --port
8000 --served-model-name M --max-model-len L ...`). There is no GPU engine here, so the
engine-bin/ wrappers run this script, which keeps what the simulator models (port, served model
name, context length, admission limit) and starts `infersweep sim serve` on loopback in its
place. Flags the simulator has no use for (parallelism, memory utilisation, ...) are accepted
and ignored, as a real engine would accept them.
"""

from __future__ import annotations

import argparse
import os
import sys


def vllm(argv: list[str]) -> list[str]:
    p = argparse.ArgumentParser(prog="vllm (test double)")
    p.add_argument("verb", choices=["serve"])
    p.add_argument("model")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--host")
    p.add_argument("--served-model-name", "--served_model_name")
    p.add_argument("--max-model-len", "--max_model_len", type=int)
    p.add_argument("--max-num-seqs", "--max_num_seqs", type=int)
    p.add_argument("--max-num-batched-tokens", "--max_num_batched_tokens", type=int)
    a, _ignored = p.parse_known_args(argv)
    cmd = ["sim", "serve", "--host", "127.0.0.1", "--port", str(a.port),
           "--served-model-name", a.served_model_name or a.model]
    if a.max_model_len:
        cmd += ["--max-model-len", str(a.max_model_len)]
    if a.max_num_seqs:
        cmd += ["--max-num-seqs", str(a.max_num_seqs)]
    if a.max_num_batched_tokens:
        cmd += ["--max-num-batched-tokens", str(a.max_num_batched_tokens)]
    return cmd + os.environ.get("INFERSWEEP_SIM_ARGS", "").split()


ENGINES = {"vllm": vllm}

if __name__ == "__main__":
    engine, args = sys.argv[1], sys.argv[2:]
    sim_args = ENGINES[engine](args)
    print(f"engine double: {engine} {' '.join(args)} -> infersweep {' '.join(sim_args)}",
          file=sys.stderr, flush=True)
    os.execv(sys.executable, [sys.executable, "-m", "infersweep", *sim_args])
