"""The replay client's command for one agentic row and concurrency.

The flags are InferenceX's (its ``build_replay_cmd``): the ``inferencex-agentx-mvp`` scenario,
streaming chat, concurrency counted in live sessions, a 3,600 s profiling window, seed 42,
lanes starting between 25 % and 75 % into their trace, 10 warm-up requests per lane, a 300 s
idle-gap cap, the server's own token counts, GPU telemetry off, and the engine's
``/metrics`` scraped. Where ours differs it is for a reason written in docs/compatibility.md
(local traces, scaled-down windows, our own offline tokenizer).
"""

from __future__ import annotations

from dataclasses import dataclass, field

SCENARIO = "inferencex-agentx-mvp"
FULL_DURATION_S = 3600
MIN_SCENARIO_DURATION_S = 900  # below this the scenario refuses to run without an override
SEED = 42
FAILED_REQUEST_THRESHOLD = 0.10
START_MIN_RATIO, START_MAX_RATIO = 0.25, 0.75
WARMUP_REQUESTS_PER_LANE = 10
TRACE_IDLE_GAP_CAP_S = 300
WARMUP_GRACE_PERIOD_S = 1800
STATS_INTERVAL_S = 30
SLICE_DURATION_S = 1.0
CONFIGURE_TIMEOUT_S = 1800  # InferenceX raised both timeouts together (spec: known problems)

# The header a framework's session-affine router keys on, switched on in the client by the
# environment variable that copies the correlation id into it.
ROUTING_HEADER_ENV = {
    "vllm": "AIPERF_HTTP_X_SESSION_ID_FROM_CORRELATION_ID",
    "sglang": "AIPERF_HTTP_X_SMG_ROUTING_KEY_FROM_CORRELATION_ID",
    "dynamo": "AIPERF_HTTP_X_DYNAMO_SESSION_ID_FROM_CORRELATION_ID",
}


def routing_family(framework: str) -> str | None:
    """Which router family a framework's agentic recipe puts in front of DP ranks."""
    fw = framework.lower()
    if fw.startswith("dynamo"):
        return "dynamo"
    if fw.startswith("vllm"):
        return "vllm"
    if fw.startswith(("sglang", "atom")):
        return "sglang"
    return None


@dataclass(frozen=True)
class Traces:
    """Where the traces come from: a pinned public dataset, or a local folder."""

    public_alias: str | None = None  # e.g. semianalysis_cc_traces_weka_062126
    local_dir: str | None = None     # a folder of Weka trace JSON files
    entries: int | None = None       # traces in the corpus (--num-dataset-entries)

    @property
    def local(self) -> bool:
        return self.local_dir is not None


@dataclass(frozen=True)
class ReplayPlan:
    """Everything the command depends on, so a recipe and a result can both record it."""

    url: str
    model: str
    tokenizer: str
    conc: int
    traces: Traces
    artifact_dir: str
    framework: str
    duration_s: int = FULL_DURATION_S
    warmup_requests_per_lane: int = WARMUP_REQUESTS_PER_LANE
    warmup_grace_period_s: int = WARMUP_GRACE_PERIOD_S
    session_affinity: bool = False
    server_metrics: tuple[str, ...] = ()
    seed: int = SEED
    extra_env: dict[str, str] = field(default_factory=dict)

    @property
    def unsafe(self) -> list[str]:
        """Why the scenario must be overridden (and the result then says it is not a valid
        submission): a window shorter than the scenario's minimum, or local traces."""
        why = []
        if self.duration_s < MIN_SCENARIO_DURATION_S:
            why.append(f"a {self.duration_s} s window is under the scenario's "
                       f"{MIN_SCENARIO_DURATION_S} s minimum")
        if self.traces.local:
            why.append("local traces are not a pinned public corpus")
        return why


def argv(plan: ReplayPlan, aiperf: str = "aiperf") -> list[str]:
    """The client's argv (``aiperf profile ...``)."""
    cmd = [aiperf, "profile", "--scenario", SCENARIO,
           "--url", plan.url, "--endpoint", "/v1/chat/completions", "--endpoint-type", "chat",
           "--streaming", "--model", plan.model, "--tokenizer", plan.tokenizer,
           "--concurrency", str(plan.conc), "--benchmark-duration", str(plan.duration_s),
           "--stats-interval", str(STATS_INTERVAL_S), "--random-seed", str(plan.seed),
           "--failed-request-threshold", f"{FAILED_REQUEST_THRESHOLD:g}",
           "--trajectory-start-min-ratio", f"{START_MIN_RATIO:g}",
           "--trajectory-start-max-ratio", f"{START_MAX_RATIO:g}",
           "--warmup-requests-per-lane", str(plan.warmup_requests_per_lane),
           "--trace-idle-gap-cap-seconds", str(TRACE_IDLE_GAP_CAP_S),
           "--warmup-grace-period", str(plan.warmup_grace_period_s),
           "--use-server-token-count", "--no-gpu-telemetry", "--tokenizer-trust-remote-code",
           "--slice-duration", f"{SLICE_DURATION_S:g}"]
    if plan.traces.entries:
        cmd += ["--num-dataset-entries", str(plan.traces.entries)]
    for url in plan.server_metrics:
        cmd += ["--server-metrics", url]
    cmd += ["--output-artifact-dir", plan.artifact_dir]
    if plan.unsafe:
        cmd.append("--unsafe-override")
    if plan.traces.local:
        cmd += ["--custom-dataset-type", "weka_trace", "--input-file", plan.traces.local_dir]
    else:
        cmd += ["--public-dataset", plan.traces.public_alias or ""]
    return cmd


def environment(plan: ReplayPlan) -> dict[str, str]:
    """The client's own settings (added to a minimal environment by the caller)."""
    env = {
        "AIPERF_DATASET_CONFIGURATION_TIMEOUT": str(CONFIGURE_TIMEOUT_S),
        "AIPERF_SERVICE_PROFILE_CONFIGURE_TIMEOUT": str(CONFIGURE_TIMEOUT_S),
        "AIPERF_UI_REALTIME_METRICS_ENABLED": "true",
        "AIPERF_DATASET_WEKA_LIVE_ASSISTANT_RESPONSES": "0",
        "AIPERF_FAILED_REQUEST_THRESHOLD": f"{FAILED_REQUEST_THRESHOLD:g}",
    }
    family = routing_family(plan.framework)
    if plan.session_affinity and family:
        env[ROUTING_HEADER_ENV[family]] = "true"
    env.update(plan.extra_env)
    return env
