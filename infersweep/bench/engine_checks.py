"""What the engine did other than asked, from the per-request records: output lengths that
differ from the requested ones, and prompt tokens it served from its prefix cache.

Both are silent otherwise: an engine that ignores ``max_completion_tokens`` (``transformers
serve`` answers 1,024 tokens where 128 were asked) still gives a plausible throughput, and a
prompt found whole in the prefix cache still gives a plausible, much too short, TTFT.
"""

from __future__ import annotations

CACHE_WARN_FRACTION = 0.5  # of the prompt tokens: TTFT then mostly measures cache hits


def output_lengths(records: list[dict], ignore_eos: bool) -> dict:
    """Successful requests whose output length differs from the requested one. A longer
    output is always a mismatch (the limit was ignored); a shorter one is, when --ignore-eos
    was asked or the engine says it stopped at a length (``finish_reason: length``), not when
    the model ended its answer (``stop``)."""
    ok = [r for r in records if r.get("ok") and r.get("intended_output_len") is not None]
    longer = [r for r in ok if r["output_tokens"] > r["intended_output_len"]]
    shorter = [r for r in ok if r["output_tokens"] < r["intended_output_len"]]
    flagged = longer + [r for r in shorter
                        if ignore_eos or r.get("finish_reason") == "length"]
    flagged.sort(key=lambda r: r["id"])
    out = {"requests": len(ok), "longer": len(longer), "shorter": len(shorter),
           "mismatched": len(flagged)}
    if flagged:
        r = flagged[0]
        out["example"] = {"id": r["id"], "requested": r["intended_output_len"],
                          "output_tokens": r["output_tokens"],
                          "finish_reason": r.get("finish_reason")}
    return out


def length_warning(summary: dict, chat: bool, ignore_eos: bool) -> str | None:
    n = summary["mismatched"]
    if not n:
        return None
    ex = summary["example"]
    field = "max_completion_tokens" if chat else "max_tokens"
    why = (f"the engine ignored {field}" if ex["output_tokens"] > ex["requested"]
           else "the engine stopped early" + (" despite ignore_eos" if ignore_eos else ""))
    return (f"{n} of {summary['requests']} requests did not get the output length they asked "
            f"for (request {ex['id']}: {ex['output_tokens']} tokens instead of "
            f"{ex['requested']}): {why}? Throughput, TPOT and E2EL are for the lengths it "
            f"produced; the records have each request's output_tokens and intended_output_len")


def cached_prompt_tokens(records: list[dict]) -> dict | None:
    """The engine's ``cached_tokens`` over the successful requests that report it (None when
    none does: the engine does not say)."""
    rep = [r for r in records if r.get("ok") and r.get("cached_prompt_tokens") is not None]
    if not rep:
        return None
    cached = sum(r["cached_prompt_tokens"] for r in rep)
    prompt = sum(r["server_prompt_tokens"] if r.get("server_prompt_tokens") is not None
                 else r["prompt_len"] for r in rep)
    return {"requests_reporting": len(rep),
            "requests_with_hits": sum(1 for r in rep if r["cached_prompt_tokens"] > 0),
            "cached_tokens": cached, "prompt_tokens": prompt,
            "fraction": cached / prompt if prompt else 0.0}


def cache_warning(summary: dict | None, seed_origin: str) -> str | None:
    if summary is None or summary["fraction"] <= CACHE_WARN_FRACTION:
        return None
    why = ("--seed sends the prompts of every earlier run with that seed again"
           if seed_origin == "option" else "were these prompts sent to it before?")
    return (f"the engine served {summary['fraction']:.0%} of the prompt tokens from its prefix "
            f"cache ({summary['requests_with_hits']} of {summary['requests_reporting']} "
            f"requests): TTFT measures cache hits rather than prefill; {why}")
