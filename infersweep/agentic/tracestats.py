"""What a corpus holds, and the prefix-cache hit rate an infinite cache would reach on it.

:func:`theoretical_hit_rate` is the replay client's ``theoretical_prefix_cache_hit`` computed
over every request of the corpus: per trace, one set of hash ids already sent, shared by the
main agent and its subagents (the ids are scoped per trace), consumed in start-time order;
a request's hits are its leading blocks already in the set (the first miss ends them), its
total is all its blocks. The client leaves out subagents that no main-agent call precedes
(it never replays them), and so does this. The client reports the rate over the requests
it actually sent in the profiling window, which is a sample of these.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import takewhile

from infersweep.agentic.traces import Corpus
from infersweep.agentic.traceschema import JOIN_EPSILON


@dataclass(frozen=True)
class CorpusStats:
    traces: int
    requests: int  # every API call, main agent and subagents
    turns: int  # main-agent calls
    subagents: int
    subagent_requests: int
    input_tokens: int
    output_tokens: int
    max_input_tokens: int
    hit_blocks: int
    total_blocks: int

    @property
    def hit_rate(self) -> float:
        return self.hit_blocks / self.total_blocks if self.total_blocks else 0.0


def _calls(trace: dict) -> list[tuple[tuple, list[int]]]:
    """(order key, hash ids) of every call the client replays, as it orders them."""
    calls = []
    seen_parent = False
    for i, req in enumerate(trace["requests"]):
        if req["type"] != "subagent":
            seen_parent = True
            calls.append(((req["t"], i, 0, 0), req.get("hash_ids", [])))
            continue
        if not seen_parent:
            continue  # dropped by the client: nothing to attach it to
        spawn = req["t"]
        for k, inner in enumerate(req["requests"]):
            t = inner["t"]
            if t + JOIN_EPSILON < spawn:
                t = spawn + t  # a time relative to the spawn
            calls.append(((t, i, 0, k), inner.get("hash_ids", [])))
    calls.sort(key=lambda c: c[0])
    return calls


def trace_blocks(trace: dict) -> tuple[int, int]:
    """(hit blocks, total blocks) of one trace with an infinite prefix cache."""
    seen: set[int] = set()
    hits = total = 0
    for _, ids in _calls(trace):
        hits += sum(1 for _ in takewhile(seen.__contains__, ids))
        total += len(ids)
        seen.update(ids)
    return hits, total


def theoretical_hit_rate(corpus: Corpus) -> float:
    """Hit blocks / total blocks over the corpus (0..1)."""
    return corpus_stats(corpus).hit_rate


def corpus_stats(corpus: Corpus) -> CorpusStats:
    n_req = turns = subagents = sub_req = n_in = n_out = max_in = hits = total = 0
    for tr in corpus.traces:
        h, t = trace_blocks(tr.data)
        hits, total = hits + h, total + t
        for req in tr.data["requests"]:
            if req["type"] == "subagent":
                subagents += 1
                calls = req["requests"]
                sub_req += len(calls)
            else:
                turns += 1
                calls = [req]
            for c in calls:
                n_req += 1
                n_in += c["in"]
                n_out += c["out"]
                max_in = max(max_in, c["in"])
    return CorpusStats(len(corpus.traces), n_req, turns, subagents, sub_req, n_in, n_out,
                       max_in, hits, total)
