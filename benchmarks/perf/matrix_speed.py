"""Fresh-process wall time of matrix expansion and changelog processing, side by side.

Ours: `infersweep matrix full-sweep` on InferenceX's catalog, and `infersweep changelog
matrix` on a scratch repository whose head appends five of InferenceX's AMD changelog
entries. Peer: InferenceX's own generate_sweep_configs.py / process_changelog.py, when a
checkout of InferenceX is given with --inferencex-repo (its code is never part of this
project). Prints a markdown table with medians and ratios.

    python benchmarks/perf/matrix_speed.py --reference ../shared/reference/inferencex \
        [--inferencex-repo PATH --inferencex-python PATH] [--runs 7]
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FIVE_PRS = ("1683", "2433", "2606", "2670", "2643")


def wall(cmd: list[str], cwd: Path, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def scratch_repo(reference: Path, dest: Path, peer: Path | None) -> None:
    """Base: InferenceX's changelog minus five AMD entries; head: those five appended."""
    text = (reference / "perf-changelog.yaml").read_text()
    blocks = re.split(r"(?m)^(?=- config-keys:)", text)
    chosen = [b for b in blocks if any(f"/pull/{n}\n" in b for n in FIVE_PRS)]
    base = "".join(b for b in blocks if b not in chosen)
    (dest / "configs").mkdir(parents=True)
    for name in ("amd-master.yaml", "nvidia-master.yaml", "runners.yaml"):
        shutil.copy(reference / "configs" / name, dest / "configs" / name)
    if peer is not None:
        shutil.copytree(peer / "utils", dest / "utils")
    (dest / "perf-changelog.yaml").write_text(base)
    git(dest, "init", "-q", "-b", "main")
    git(dest, "-c", "user.email=b@example.invalid", "-c", "user.name=b", "add", "-A")
    git(dest, "-c", "user.email=b@example.invalid", "-c", "user.name=b", "commit", "-qm", "base")
    head = base.rstrip("\n") + "\n\n" + "\n".join(b.rstrip() + "\n" for b in chosen)
    (dest / "perf-changelog.yaml").write_text(head)
    git(dest, "-c", "user.email=b@example.invalid", "-c", "user.name=b", "commit", "-qam", "five")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reference", type=Path, default=Path("../shared/reference/inferencex"))
    ap.add_argument("--inferencex-repo", type=Path, help="checkout of InferenceX (peer)")
    ap.add_argument("--inferencex-python", default=sys.executable,
                    help="python with the peer's dependencies (pydantic, pyyaml)")
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    ours = [str(Path(sys.executable).parent / "infersweep")]
    cfg = args.reference / "configs"
    cases = {
        "full-sweep, amd-master.yaml": ["--config-files", str(cfg / "amd-master.yaml")],
        "full-sweep, amd + nvidia": ["--config-files", str(cfg / "amd-master.yaml"),
                                     str(cfg / "nvidia-master.yaml")],
    }
    rows = []
    for name, files in cases.items():
        tail = ["full-sweep", *files, "--runner-config", str(cfg / "runners.yaml")]
        mine = wall([*ours, "matrix", *tail], Path.cwd(), args.runs)
        peer = None
        if args.inferencex_repo:
            gen = args.inferencex_repo / "utils" / "matrix_logic" / "generate_sweep_configs.py"
            peer = wall([args.inferencex_python, str(gen), *tail], Path.cwd(), args.runs)
        rows.append((name, mine, peer))
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        scratch_repo(args.reference, repo, args.inferencex_repo)
        mine = wall([*ours, "changelog", "matrix", "--base-ref", "HEAD~1", "--head-ref", "HEAD"],
                    repo, args.runs)
        peer = None
        if args.inferencex_repo:
            peer = wall([args.inferencex_python, "utils/process_changelog.py", "--base-ref",
                         "HEAD~1", "--head-ref", "HEAD", "--changelog-file",
                         "perf-changelog.yaml"], repo, max(3, args.runs // 2))
        rows.append(("changelog matrix, 5 appended entries", mine, peer))
    print(f"| case (median of {args.runs} fresh processes) | infersweep | InferenceX | ratio |")
    print("|---|---|---|---|")
    for name, mine, peer in rows:
        p = f"{peer:.3f} s" if peer is not None else "not run"
        r = f"{peer / mine:.1f}x faster" if peer is not None else ""
        print(f"| {name} | {mine:.3f} s | {p} | {r} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
