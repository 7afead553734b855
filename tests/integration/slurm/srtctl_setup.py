"""The real upstream srtctl, installed at a pinned commit and set up for the local Slurm.

What a cluster's `make setup` and container runtime provide is stood in for by files in
doubles/ (each says it is a double): `bin/srun` (Pyxis), `bin/tachometer-scraper`, the engine
commands in doubles/engine-bin/ and doubles/engine-py/ (the project's simulator, put on
the step's PATH/PYTHONPATH by the srun double as a container image would provide them), and `bin/uv` only where the machine
has no CPython 3.12. `configs/nats-server` and `configs/etcd` are Debian's real binaries and
`bin/uv` is uv from PyPI.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from tests.integration.slurm.localslurm import GPUS_PER_NODE, PARTITION, LocalSlurm

REPO = Path(__file__).resolve().parents[3]
SHARED = REPO.parent / "shared"
BUNDLE = SHARED / "reference" / "srt-slurm" / "srt-slurm-v1.0.68.bundle"
PIN = "c88ef731636890ff6385a783e152c1790e15b194"  # v1.0.68
OLDER_PIN = "41cd37192df730b5fc2242b58cc70fc0707fa0c9"  # v1.0.60
DOUBLES = Path(__file__).resolve().parent / "doubles"
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# Passed through to srtctl and its job: how this machine reaches the package registries.
NETWORK_ENV = ("SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
               "http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY",
               "UV_CACHE_DIR", "UV_INDEX_URL", "UV_DEFAULT_INDEX", "UV_NATIVE_TLS")
SYSTEM_CA = Path("/etc/ssl/certs/ca-certificates.crt")


def git(*args: str, cwd: Path | None = None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


@dataclass(frozen=True)
class Remote:
    """A bare repository standing in for the pinned srt-slurm remote."""

    path: Path
    pin: str = PIN
    older_pin: str = OLDER_PIN

    @property
    def url(self) -> str:
        return str(self.path)


def make_remote(workdir: Path) -> Remote:
    path = workdir / "srt-slurm.git"
    git("clone", "--bare", "-q", str(BUNDLE), str(path))
    git("cat-file", "-e", f"{PIN}^{{commit}}", cwd=path)
    return Remote(path)


def find_python312() -> Path | None:
    """A real CPython 3.12 interpreter (not a pyenv shim, which uv does not follow).
    ``INFERSWEEP_PYTHON312=none`` pretends there is none (to exercise the uv double)."""
    if os.environ.get("INFERSWEEP_PYTHON312") == "none":
        return None
    candidates = [os.environ.get("INFERSWEEP_PYTHON312", "")]
    candidates += sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.12*/bin/python3.12")))
    candidates += ["/usr/local/bin/python3.12", "/usr/bin/python3.12"]
    for c in candidates:
        if not c or not os.access(c, os.X_OK):
            continue
        p = subprocess.run([c, "-c", "import sys; print(sys.version_info[:2] == (3, 12))"],
                           capture_output=True, text=True)
        if p.stdout.strip() == "True":
            return Path(c)
    return None


def _nats() -> str | None:
    return shutil.which("nats-server") or shutil.which("nats-server", path="/usr/sbin")


def _etcd() -> str | None:
    return shutil.which("etcd") or shutil.which("etcd", path="/usr/sbin")


def missing_prerequisites() -> list[str]:
    """What this machine lacks to run the real srtctl chain (each with where it comes from)."""
    missing = []
    if not shutil.which("git"):
        missing.append("git is not installed")
    if not _nats():
        missing.append("nats-server is not installed (Debian package nats-server)")
    if not _etcd():
        missing.append("etcd is not installed (Debian package etcd-server)")
    for tool in ("flock", "unshare", "mount"):
        if not shutil.which(tool):
            missing.append(f"{tool} is not installed (Debian package util-linux)")
    if os.geteuid() != 0:
        missing.append("the Pyxis double (bind mounts in a mount namespace) needs root")
    return missing


@dataclass
class ApplyResult:
    returncode: int
    stdout: str
    stderr: str

    @property
    def records(self) -> list[dict]:
        """srtctl's JSON lines (one per submission, or one error object)."""
        out = []
        for line in self.stdout.splitlines():
            line = line.strip()
            if line.startswith("{"):
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError:
                    continue
        return out

    @property
    def record(self) -> dict | None:
        recs = self.records
        return recs[0] if recs else None


@dataclass
class Srtctl:
    root: Path  # the srtctl checkout (srtctl_root)
    venv: Path
    config: Path  # srtslurm.yaml, passed as SRTSLURM_CONFIG
    outputs: Path
    model: Path  # a local model folder (mounted at /model in the job)
    cluster: LocalSlurm
    remote: Remote
    python312: Path | None
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def commit(self) -> str:
        return git("rev-parse", "HEAD", cwd=self.root)

    @property
    def exe(self) -> Path:
        return self.venv / "bin" / "srtctl"

    @property
    def uv_note(self) -> str:
        if self.python312:
            return f"real uv with CPython 3.12 at {self.python312}"
        return "no CPython 3.12 here: bin/uv is the uv-without-python312 double"

    def env(self, **extra: str) -> dict[str, str]:
        """The whole environment srtctl and its job get: built, not inherited, so no
        VIRTUAL_ENV, PYTHONPATH or PYTHONPYCACHEPREFIX of the test run leaks into the job."""
        path = [str(self.python312.parent)] if self.python312 else []
        env = {
            "HOME": os.environ.get("HOME", "/root"),
            "LANG": "C.UTF-8",
            "PATH": ":".join([*path, SYSTEM_PATH]),
            "SLURM_CONF": str(self.cluster.conf),
            "SRTSLURM_CONFIG": str(self.config),
            "UV_PYTHON_DOWNLOADS": "never",
            "INFERSWEEP_SIM_PYTHON": sys.executable,
        }
        if not self.python312:
            env["INFERSWEEP_UV_PYTHON"] = sys.executable
            env["INFERSWEEP_REAL_UV"] = str(self.venv / "bin" / "uv")
        env.update({k: os.environ[k] for k in NETWORK_ENV if k in os.environ})
        if "SSL_CERT_FILE" not in env and SYSTEM_CA.is_file():
            env["SSL_CERT_FILE"] = str(SYSTEM_CA)  # uv does not read pip's cert setting
        env.update(extra)
        return env

    def apply(self, recipe: Path, *args: str, env: dict[str, str] | None = None,
              timeout: float = 180) -> ApplyResult:
        """`srtctl apply -f RECIPE -o OUTPUTS --json ARGS`, run from a neutral folder."""
        p = subprocess.run([str(self.exe), "apply", "-f", str(recipe), "-o", str(self.outputs),
                            "--json", *args], capture_output=True, text=True,
                           env=env or self.env(), cwd=self.outputs, timeout=timeout)
        result = ApplyResult(p.returncode, p.stdout, p.stderr)
        rec = result.record
        if rec and rec.get("slurm_job_id"):
            self.cluster.track(str(rec["slurm_job_id"]))
        return result

    def upstream_recipe(self, rel: str) -> dict:
        """A recipe from the pinned checkout's recipes/ folder, as data."""
        return yaml.safe_load((self.root / "recipes" / rel).read_text())


def _run(argv: list[str], what: str, **kw) -> None:
    p = subprocess.run(argv, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        raise AssertionError(f"{what} failed (exit {p.returncode}):\n{p.stdout[-3000:]}\n"
                             f"{p.stderr[-3000:]}")


def install(remote: Remote, workdir: Path, cluster: LocalSlurm, commit: str = PIN) -> Srtctl:
    timings = {}
    t0 = time.monotonic()
    root = workdir / "srt-slurm"
    git("clone", "-q", "--no-checkout", remote.url, str(root))
    git("checkout", "-q", "--detach", commit, cwd=root)
    assert git("rev-parse", "HEAD", cwd=root) == commit
    timings["clone"] = time.monotonic() - t0

    t0 = time.monotonic()
    venv = workdir / "venv"
    clean = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    _run([sys.executable, "-m", "venv", str(venv)], "creating the srtctl venv", env=clean)
    _run([str(venv / "bin" / "pip"), "install", "-q", "--disable-pip-version-check", "-e",
          str(root), "uv"], "pip install -e srt-slurm uv (needs PyPI)", env=clean)
    timings["pip_install"] = time.monotonic() - t0

    # What `make setup` would download, from Debian and PyPI, plus the doubles.
    (root / "configs").mkdir(exist_ok=True)
    (root / "bin").mkdir(exist_ok=True)
    os.symlink(_nats(), root / "configs" / "nats-server")
    os.symlink(_etcd(), root / "configs" / "etcd")
    python312 = find_python312()
    uv_target = venv / "bin" / "uv" if python312 else DOUBLES / "uv-without-python312"
    os.symlink(uv_target, root / "bin" / "uv")
    os.symlink(DOUBLES / "tachometer-scraper", root / "bin" / "tachometer-scraper")
    os.symlink(DOUBLES / "srun", root / "bin" / "srun")

    outputs = workdir / "outputs"
    outputs.mkdir()
    model = workdir / "model"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"model_type": "infersweep-sim"}))
    config = workdir / "srtslurm.yaml"
    config.write_text(yaml.safe_dump({
        "cluster": "infersweep-local",
        "default_account": "default",
        "default_partition": PARTITION,
        "default_time_limit": "00:10:00",
        "gpus_per_node": GPUS_PER_NODE,
        "srtctl_root": str(root),
        "output_dir": str(outputs),
        # Slurm 22.05's sbatch has no --segment (added in 24.11).
        "use_segment_sbatch_directive": False,
    }, sort_keys=False))
    s = Srtctl(root, venv, config, outputs, model, cluster, remote, python312, timings)

    # The job's own first step, done once here so a missing interpreter or package shows up
    # as a fixture error rather than inside a job (the job's run of it is then a no-op).
    t0 = time.monotonic()
    _run([str(root / "bin" / "uv"), "sync", "--python", "3.12", "--no-dev"],
         f"uv sync of srtctl's job environment ({s.uv_note})", cwd=root,
         env=s.env(UV_PROJECT_ENVIRONMENT=str(root / ".venv-compute")))
    timings["uv_sync"] = time.monotonic() - t0
    return s


AGG_MODEL = "vllm/test/qwen3-0.6b-single-gpu.yaml"  # the upstream recipe the local one follows


def bench_command(*, result_dir: str = "/logs/infersweep", concurrency: int = 4,
                  prompts: int = 16, model: str = "m", url: str = "http://127.0.0.1:8000") -> str:
    """A `benchmark.type: custom` command running the project's client in the job (written
    under /logs, i.e. the job's logs/ folder). The URL is loopback on purpose: every virtual
    node is this host."""
    return (f"{sys.executable} -m infersweep bench serve --base-url {url} --model {model} "
            f"--random-input-len 64 --random-output-len 16 --num-prompts {prompts} "
            f"--max-concurrency {concurrency} --ready-timeout 30 --save-result "
            f"--result-dir {result_dir} --result-filename conc{concurrency}.json")


def agg_vllm_recipe(s: Srtctl, *, name: str, command: str, time_limit: str = "00:05:00",
                    sbatch_directives: dict[str, str] | None = None) -> dict:
    """Upstream's single-GPU vLLM test recipe, changed only where this machine differs: a
    local model folder, a container name the Pyxis double ignores, no Dynamo (the vLLM front
    end is `vllm serve` itself, i.e. the engine double), a short health check and our client
    as the benchmark."""
    r = s.upstream_recipe(AGG_MODEL)
    r["name"] = name
    r["model"] = {"path": str(s.model), "container": "engine-image.test-double:latest",
                  "precision": "fp8"}
    r["dynamo"] = {"install": False}
    r["frontend"] = {"type": "vllm", "enable_multiple_frontends": False}
    r["backend"].pop("connector", None)
    r["backend"]["vllm_config"]["aggregated"].update({"served-model-name": "m",
                                                      "max-num-seqs": 16})
    r["health_check"] = {"max_attempts": 60, "interval_seconds": 1}
    r["benchmark"] = {"type": "custom", "command": command}
    r["slurm"] = {"time_limit": time_limit}
    if sbatch_directives:
        r["sbatch_directives"] = dict(sbatch_directives)
    return r


def write_recipe(path: Path, recipe: dict) -> Path:
    path.write_text(yaml.safe_dump(recipe, sort_keys=False))
    return path


DISAGG_MODEL = "qwen3-32b/disagg-kv-sglang.yaml"  # the upstream P/D recipe the local one follows


def disagg_sglang_recipe(s: Srtctl, *, name: str, prefill_workers: int, decode_workers: int,
                         command: str, time_limit: str = "00:05:00",
                         sbatch_directives: dict[str, str] | None = None) -> dict:
    """Upstream's SGLang P/D recipe reshaped to xPyD with one TP8 worker per node (1P1D: two
    nodes, 2P1D: three), the SGLang router as the front end, and our client as the benchmark."""
    r = s.upstream_recipe(DISAGG_MODEL)
    r["name"] = name
    r["model"] = {"path": str(s.model), "container": "engine-image.test-double:latest",
                  "precision": "fp8"}
    r["resources"] = {"gpu_type": "h100", "gpus_per_node": GPUS_PER_NODE,
                      "prefill_nodes": prefill_workers, "prefill_workers": prefill_workers,
                      "decode_nodes": decode_workers, "decode_workers": decode_workers}
    r["dynamo"] = {"install": False}
    r["frontend"] = {"type": "sglang", "enable_multiple_frontends": False,
                     "args": {"policy": "round_robin"}}
    for role, admission in (("prefill", 256), ("decode", 128)):
        cfg = r["backend"]["sglang_config"][role]
        cfg.pop("json-model-override-args", None)
        cfg.update({"served-model-name": "m", "tensor-parallel-size": GPUS_PER_NODE,
                    "context-length": 4096, "max-running-requests": admission})
    r["health_check"] = {"max_attempts": 90, "interval_seconds": 1}
    r["benchmark"] = {"type": "custom", "command": command}
    r["slurm"] = {"time_limit": time_limit}
    if sbatch_directives:
        r["sbatch_directives"] = dict(sbatch_directives)
    return r
