"""What the local executor starts for a recipe: simulated workers and, if needed, a router.

Each backend spells the same engine settings its own way (admission limit, context length,
batched tokens; see ``ENGINES``), and the plan maps them onto ``infersweep sim serve`` flags.
Data-parallel ranks in one worker become ``--dp-size``: SGLang's ``dp-size``, vLLM's
``data-parallel-size``, ATOM's ``enable-dp-attention`` (one rank per GPU of the worker, which
srtctl passes as ``-tp``) and TRT-LLM's ``enable_attention_dp`` (one per TP rank).

The simulator's limits hold per DP rank, as ATOM's, vLLM's and TRT-LLM's do. SGLang with DP
attention divides ``max-running-requests`` and ``chunked-prefill-size`` over its ranks, so the
plan divides them the same way.

Routing follows the recipe: one aggregated worker is its own front end (no router); several
sit behind ``sim router --worker``; a disaggregated topology gets ``sim router --prefill
--decode``.
"""

from __future__ import annotations

from infersweep.diagnostics import Diagnostic, InputError
from infersweep.recipe import topology
from infersweep.recipe.topology import ENGINES

# The simulator's timing model for a local sweep: prefill fast enough that a scaled-down sweep
# is bound by this machine's CPU rather than by modelled GPU time, decode at a real engine's pace
# (6 ms a step, 0.02 ms more per running sequence: about 160 tok/s/user alone, 20 at 2,048).
# Faster steps send more chunks than the router and the client, sharing the CPU, can read one at
# a time: a loaded machine then gets a request's tokens in one read and measures a TPOT of 0,
# which results check rightly refuses (22 % of token gaps were 0 at c=128 with 2 ms steps on a
# busy 2-core machine, 2 % at this pace).
ENGINE_SPEED = ("--prefill-tps", "2000000", "--decode-base-ms", "6",
                "--decode-per-seq-ms", "0.02")
ROUTER_SPEED = ("--kv-base-ms", "1")
# front-end routing policies the simulator's router knows, by the recipe's name for them
POLICIES = {"random": "round-robin", "round_robin": "round-robin",
            "round-robin": "round-robin", "cache_aware": "least-loaded",
            "power_of_two": "least-loaded", "least-loaded": "least-loaded",
            "kv": "least-loaded", "consistent_hashing": "consistent-hash",
            "consistent_hash": "consistent-hash", "consistent-hash": "consistent-hash"}
# the policy a front end uses when the recipe names none (SGLang's router: cache_aware)
DEFAULT_POLICY = {"sglang": "cache_aware"}
# front ends that are the worker itself: they serve exactly one aggregated worker
WORKER_FRONTENDS = ("atom", "vllm")
_CONFIG_ROLE = {"prefill": "prefill", "decode": "decode", "agg": "aggregated"}
# ATOM's prefill and decode workers keep one scheduler each, as the seed sweep has always run
# them; their enable-dp-attention is not turned into simulated ranks.
ONE_SCHEDULER = {("atom", "prefill"), ("atom", "decode")}


class _Recipe:
    """One recipe being planned: its name for every message."""

    def __init__(self, recipe: dict):
        self.recipe = recipe
        self.where = f"recipe {recipe.get('name') or '<unnamed>'}"

    def error(self, message: str, hint: str) -> InputError:
        return InputError(Diagnostic(self.where, 0, 0, message, hint))


def _setting(config: dict, *names: str):
    """A flag's value under any of its names, kebab or snake case (recipes use both)."""
    for name in names:
        for key in (name, name.replace("-", "_"), name.replace("_", "-")):
            if key in config:
                return config[key]
    return None


def _on(config: dict, *names: str) -> bool:
    value = _setting(config, *names)
    return value is True or (isinstance(value, str) and value.strip().lower() == "true")


def _whole(r: _Recipe, config: dict, key: str, *names: str) -> int | None:
    value = _setting(config, *names)
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    raise r.error(f"'{key}.{names[0]}' is {value!r}, not a whole number",
                  "the local executor reads engine limits as numbers")


def backend_type(r: _Recipe) -> str:
    """The recipe's backend: its ``type``, else the one engine section present, else SGLang
    (srt-slurm's default)."""
    backend = r.recipe.get("backend") or {}
    kind = backend.get("type")
    if kind is None:
        present = [k for k, s in ENGINES.items() if s.section in backend]
        kind = present[0] if len(present) == 1 else "sglang"
    if kind not in ENGINES:
        raise r.error(f"the local executor cannot run backend type {kind!r}",
                      f"it simulates {', '.join(ENGINES)}; run this recipe with srt-slurm")
    return kind


def _ranks(kind: str, config: dict, role: topology.Role) -> tuple[int, bool]:
    """(DP ranks in one worker, whether the recipe's limits are for all ranks together)."""
    if kind == "sglang":
        dp = _int_or(config, 1, "dp-size", "data-parallel-size", "dp")
        return dp, dp > 1 and _on(config, "enable-dp-attention")
    if kind == "vllm":
        return _int_or(config, 1, "data-parallel-size", "dp"), False
    if kind == "atom":
        dp = _int_or(config, 1, "data-parallel-size", "dp")
        if _on(config, "enable-dp-attention"):  # srtctl's -tp is the worker's GPUs
            tp = role.gpus_per_worker or _int_or(config, 1, "tensor-parallel-size", "tp")
            return dp * tp, False
        return dp, False
    if _on(config, "enable_attention_dp"):  # trtllm: one attention rank per TP rank
        return _int_or(config, 1, "tensor_parallel_size", "tp_size"), False
    return 1, False


def _int_or(config: dict, default: int, *names: str) -> int:
    value = _setting(config, *names)
    try:
        n = int(value)
    except (TypeError, ValueError):
        return default
    return n if n > 0 and not isinstance(value, bool) else default


# An agentic recipe states no context (the model's native one): the simulator's stand-in.
NATIVE_CONTEXT = 1_048_576


def _cache_args(kind: str, config: dict, args: list[str], ranks: int,
                total_cpu_dram_gb: float) -> list[str]:
    """The engine's KV cache as the simulator models it (an agentic recipe's prefix caching,
    page size, pool and CPU tier), plus a native context when the recipe sets none."""
    from infersweep.sim.cacheflags import cache_flags

    tp = _int_or(config, 1, "tensor-parallel-size", "tp-size", "tp", "tensor_parallel_size")
    try:
        out = cache_flags(config, framework=kind, total_cpu_dram_gb=total_cpu_dram_gb,
                          dp_size=ranks, tp_size=tp)
    except ValueError as exc:
        raise InputError(f"the engine's KV-cache settings: {exc}") from None
    if "--max-model-len" not in args:
        out += ["--max-model-len", str(NATIVE_CONTEXT)]
    return out


def _worker_args(r: _Recipe, kind: str, role: topology.Role, model: str, *,
                 agentic: bool = False, total_cpu_dram_gb: float = 0.0) -> list[str]:
    spelling = ENGINES[kind]
    backend = r.recipe.get("backend") or {}
    section = backend.get(spelling.section)
    name = _CONFIG_ROLE[role.name]
    config = section.get(name) if isinstance(section, dict) else None
    key = f"backend.{spelling.section}.{name}"
    if not isinstance(config, dict):
        raise r.error(f"no '{key}' for the {role.name} workers",
                      f"give every role its engine settings under '{key}' (the local executor "
                      "takes admission and context limits from there)")
    ranks, shared = (1, False) if (kind, role.name) in ONE_SCHEDULER else _ranks(kind, config,
                                                                                role)
    args = ["--role", name, "--served-model-name", model]
    for flag, spelt in (("--max-num-seqs", spelling.limit), ("--max-model-len", spelling.context),
                        ("--max-num-batched-tokens", spelling.tokens)):
        value = _whole(r, config, key, spelt)
        if value is None or (value <= 0 and flag == "--max-num-batched-tokens"):
            continue  # not set, or SGLang's -1 (no chunking): the simulator's default
        if shared and flag != "--max-model-len":
            if value // ranks <= 0:
                raise r.error(f"'{key}.{spelt}' is {value}: less than one per DP rank "
                              f"({ranks} ranks share it with DP attention)",
                              f"raise it to at least {ranks}")
            value //= ranks
        args += [flag, str(value)]
    if ranks > 1:
        args += ["--dp-size", str(ranks)]
    if agentic:
        args += _cache_args(kind, config, args, ranks, total_cpu_dram_gb)
        if ranks > 1 and _policy(r.recipe.get("frontend") or {}) == "consistent-hash":
            args += ["--dp-routing", "session"]  # the router keeps a session on one rank
    return args + list(ENGINE_SPEED)


def _policy(frontend: dict) -> str:
    args = frontend.get("args") or {}
    named = _setting(args, "policy", "router-mode")
    if named is None:
        named = DEFAULT_POLICY.get(str(frontend.get("type")), "random")
    return POLICIES.get(str(named), "round-robin")


def engine_plan(recipe: dict, model: str, *, agentic: bool = False,
                total_cpu_dram_gb: float = 0.0) -> tuple[list[dict], dict | None]:
    """The simulator workers (role, CLI flags) and the router (None: the worker is the front
    end) for a recipe's topology. An agentic recipe's workers also get its KV cache (prefix
    caching, page size, pool, a CPU tier of the row's DRAM budget)."""
    r = _Recipe(recipe)
    kind = backend_type(r)
    workers = []
    for role in topology.roles(recipe.get("resources") or {}):
        args = _worker_args(r, kind, role, model, agentic=agentic,
                            total_cpu_dram_gb=total_cpu_dram_gb)
        workers += [{"role": _CONFIG_ROLE[role.name], "args": list(args)}
                    for _ in range(role.workers)]
    if not workers:
        raise r.error("no workers in 'resources'",
                      "set agg_nodes and agg_workers, or prefill_* and decode_*")
    frontend = recipe.get("frontend") or {}
    front = frontend.get("type")
    aggregated = all(w["role"] == "aggregated" for w in workers)
    if front in WORKER_FRONTENDS and not (aggregated and len(workers) == 1):
        raise r.error(f"frontend type {front!r} is the worker itself and serves one aggregated "
                      f"worker; the recipe has {len(workers)} "
                      f"{'aggregated' if aggregated else 'prefill/decode'} workers",
                      "use a router front end (sglang, dynamo, atomesh) or one agg worker")
    if aggregated and len(workers) == 1:
        return workers, None
    return workers, {"args": ["--policy", _policy(frontend),
                              *(ROUTER_SPEED if not aggregated else ())]}
