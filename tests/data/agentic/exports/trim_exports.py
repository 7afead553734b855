"""Trim a replay's aiperf exports to the fields `infersweep agentic process` reads.

Usage: python trim_exports.py SOURCE_DIR TARGET_DIR [PREFIX_TO_DROP]

Every record stays (so every count stays true); each keeps only the metadata and metrics the
result is computed from. Timeslices, warm-up server metrics and the aggregate's other metrics
are dropped; PREFIX_TO_DROP is removed from the paths the exports record.
"""

import json
import sys
from pathlib import Path

META = ("benchmark_phase", "request_start_ns", "request_end_ns", "conversation_id")
METRICS = ("time_to_first_token", "request_latency", "inter_token_latency",
           "full_response_inter_token_latency", "input_sequence_length",
           "output_sequence_length", "osl_mismatch_diff_pct")
AGGREGATE = ("schema_version", "aiperf_version", "request_count", "error_request_count",
             "theoretical_prefix_cache_hit", "benchmark_duration", "error_summary",
             "input_config", "metadata")


def main(src: Path, dst: Path, drop: str) -> None:
    dst.mkdir(parents=True, exist_ok=True)
    lines = []
    for line in (src / "profile_export.jsonl").read_text().splitlines():
        rec = json.loads(line)
        out = {"metadata": {k: rec["metadata"][k] for k in META if k in rec["metadata"]},
               "metrics": {k: v for k, v in rec.get("metrics", {}).items() if k in METRICS}}
        if rec.get("error"):
            out["error"] = rec["error"]
        lines.append(json.dumps(out, separators=(",", ":")))
    (dst / "profile_export.jsonl").write_text("\n".join(lines) + "\n")
    agg = json.loads((src / "profile_export_aiperf.json").read_text())
    agg = {k: agg[k] for k in AGGREGATE if k in agg}
    text = json.dumps(agg, indent=1)
    (dst / "profile_export_aiperf.json").write_text(text.replace(drop, "") if drop else text)
    server = src / "server_metrics_export.json"
    if server.is_file():
        sm = json.loads(server.read_text())
        for fam in sm["metrics"].values():
            for s in fam["series"]:
                s.pop("timeslices", None)
        sm = {k: sm[k] for k in ("schema_version", "aiperf_version", "summary",
                                 "metrics_phase", "metrics")}
        (dst / "server_metrics_export.json").write_text(json.dumps(sm, indent=1))


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else "")
