"""Could an engine have produced this point? The same rules for a client result being
processed and for a row read back from an aggregate or a row file.

- ``results-number``: every metric present is a finite number >= 0 (null: not computed);
- ``results-zero``: a point whose requests completed took time, has rates above 0, and
  latencies above 0 (TPOT and ITL too when it asked for, or produced, more than one output
  token per request);
- ``results-bound``: per-GPU token rates and times per token within the physical bounds of
  :mod:`infersweep.results.bounds`;
- ``results-consistency``: rates agree with the counts over the duration, per-GPU rates with
  the totals over the GPUs, interactivity with 1 / TPOT, percentiles are in order, no latency
  is longer than the whole benchmark;
- ``results-output-length`` (a client result's ``output_lens``, :func:`requested_output`): no
  request produced more tokens than the point asked for (its ``max_tokens``, the point's
  OSL), and the lengths add up to ``total_output_tokens``.

A finding names the field as its source spells it (:class:`Naming`): a client result's
``median_tpot_ms`` in ms, or a row's ``/rows/3/median_tpot`` in seconds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from infersweep.results import bounds, pergpu

RULE_NUMBER = "results-number"
RULE_ZERO = "results-zero"
RULE_BOUND = "results-bound"
RULE_CONSISTENCY = "results-consistency"
RULE_OUTPUT = "results-output-length"

LATENCIES = ("ttft", "tpot", "itl", "e2el")
ALL_STATS = ("mean", "median", "std", "p90", "p99", "p99.9")
STATS = ("mean", "median", "p90", "p99", "p99.9")         # std is no time a token took
ORDERED = ("median", "p90", "p99", "p99.9")               # percentiles, smallest first
COUNTS = ("num_prompts", "completed", "failed", "total_input_tokens", "total_output_tokens")
RATES = ("duration", "request_throughput", "output_throughput", "total_token_throughput")
INTERACTIVITY = tuple(f"{s}_intvty" for s in STATS)
NUMERIC = (*COUNTS, *RATES, *pergpu.FIELDS, *INTERACTIVITY,
           *(f"{s}_{m}" for m in LATENCIES for s in ALL_STATS))
DERIVED = frozenset((*pergpu.FIELDS, *INTERACTIVITY))  # computed from the rest by processing
INTERACTIVITY_OF = tuple((f"{s}_intvty", f"{s}_tpot") for s in STATS)
TIMES = {m: tuple(f"{s}_{m}" for s in STATS) for m in LATENCIES}
PERCENTILES = {m: tuple(f"{s}_{m}" for s in ORDERED) for m in LATENCIES}
MAX_INT = 2**63 - 1  # a count past a 64-bit integer is no count (nor a float without loss)
ORDER_SLACK = 1e-9   # floating-point slack for percentiles of equal values
# A client that reads several chunks at once stamps them alike: most token gaps can be 0 when
# it falls behind, so the median ITL is neither held to the zero rule nor to the bound.
UNHELD = frozenset({"median_itl"})
DECODE_TIMES = tuple(f for m in ("tpot", "itl") for f in TIMES[m] if f not in UNHELD)

HINTS = {
    RULE_NUMBER: "the client writes finite numbers >= 0, and null for a statistic it could "
                 "not compute; rerun the point",
    RULE_ZERO: "requests that completed took time and produced tokens; the file is broken or "
               "was edited: rerun the point",
    RULE_BOUND: "no GPU gets there (docs/results.md#bounds says why); a unit mix-up, a broken "
                "client or an edited file: rerun the point",
    RULE_CONSISTENCY: "the client derives these from the same counts and duration; the file "
                      "was edited or written by a broken client: rerun the point",
    RULE_OUTPUT: "no engine returns more tokens than max_tokens, which the client sets to at "
                 "most the point's OSL (the client fails such a request: output_over_limit); "
                 "the file was edited or the engine miscounts: rerun the point",
}

ORDER_HINT = ("percentiles of one set of times never decrease (median <= p90 <= p99 <= p99.9); "
              "the file was edited or written by a broken client: rerun the point")
DURATION_HINT = ("every request runs inside the benchmark, so no latency exceeds its duration; "
                 "the file was edited or written by a broken client: rerun the point")


@dataclass(frozen=True)
class Finding:
    rule: str
    field: str      # the row's field
    message: str    # the field named as the source spells it
    why: str = ""   # the hint, when the rule's own (HINTS) does not say it

    @property
    def hint(self) -> str:
        return self.why or HINTS[self.rule]


def _latency(field: str) -> bool:
    return field.rsplit("_", 1)[-1] in LATENCIES


@dataclass(frozen=True)
class Naming:
    """How a source spells a row's fields: a client result (``raw``: latencies as
    ``…_ms`` in ms, per-GPU rates derived) or a row under ``prefix`` (a JSON pointer)."""
    raw: bool = False
    prefix: str = ""

    def key(self, field: str) -> str:
        if self.raw:
            if field.endswith("_intvty"):
                return field.removesuffix("_intvty") + "_tpot_ms"
            if _latency(field):
                return field + "_ms"
            if field in pergpu.FIELDS:
                return {"tput_per_gpu": "total_token_throughput",
                        "output_tput_per_gpu": "output_throughput"}.get(
                    field, "total_token_throughput - output_throughput")
        return self.prefix + field

    def time(self, seconds: float) -> str:
        return f"{seconds * 1000:g} ms" if self.raw else f"{seconds:g} s"


RESULT = Naming(raw=True)


def _num(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _apart(got: float, want: float) -> bool:
    return abs(got - want) > bounds.TOLERANCE * max(abs(got), abs(want)) + 1e-12


def check(row: dict, naming: Naming = Naming(), *, read_whole: int = 0) -> list[Finding]:
    """Every finding on one row (empty: plausible). Numbers that are not finite stop the
    rest: the other rules would only repeat them. ``read_whole``: the client's count of
    requests it read whole (:func:`requests_read_whole`), which changes a hint, never a
    verdict."""
    v, found = _values(row, naming)
    if found:
        return found
    return (_zeros(row, v, naming, read_whole) + _bounds(row, v, naming)
            + _consistency(row, v, naming))


def requests_read_whole(result: dict) -> int:
    """A client result's own count of the requests it read whole (0: none, or not said)."""
    client = result.get("client")
    n = client.get("requests_read_whole") if isinstance(client, dict) else None
    return n if type(n) is int and 0 < n <= MAX_INT else 0


def requested_output(result: dict, osl: object) -> list[Finding]:
    """A client result's per-request output lengths against the most any request asked for
    (``osl``): none longer, and their sum the result's ``total_output_tokens``. A result
    without ``output_lens`` (the client always writes them) is judged by its other rules."""
    lens = result.get("output_lens")
    if lens is None or not _num(osl):
        return []
    if not isinstance(lens, list) or not all(type(n) is int and 0 <= n <= MAX_INT
                                             for n in lens):
        return [Finding(RULE_OUTPUT, "output_lens", "output_lens is not a list of token "
                        "counts (whole numbers >= 0)")]
    over = [(i, n) for i, n in enumerate(lens) if n > osl]
    found = []
    if over:
        i, n = over[0]
        found.append(Finding(RULE_OUTPUT, "output_lens",
                             f"output_lens: {len(over)} of {len(lens)} requests produced more "
                             f"tokens than the point asked for (request {i}: {n} tokens, at "
                             f"most {osl} asked)"))
    total = result.get("total_output_tokens")
    if _num(total) and sum(lens) != total:
        found.append(Finding(RULE_OUTPUT, "total_output_tokens",
                             f"total_output_tokens is {total}, but output_lens add up to "
                             f"{sum(lens)}"))
    return found


def _values(row: dict, naming: Naming) -> tuple[dict, list[Finding]]:
    """The row's metrics that are numbers, and a finding for each that is not a finite
    number >= 0 (counts: a whole number of at most 64 bits)."""
    v, out = {}, []
    for f in NUMERIC:
        x = row.get(f)
        if x is None:
            continue
        t = type(x)
        if (t is float and 0.0 <= x < math.inf and f not in COUNTS) or (
                t is int and 0 <= x <= MAX_INT):
            v[f] = x
        elif not (naming.raw and f in DERIVED):
            out.append(Finding(RULE_NUMBER, f, f"{naming.key(f)} is {x!r}, expected "
                               + ("a whole number from 0 to 2**63 - 1" if f in COUNTS
                                  else "a finite number >= 0")))
    return v, out


def _zeros(row: dict, v: dict, naming: Naming, whole: int) -> list[Finding]:
    completed, out_tok = v.get("completed", 0), v.get("total_output_tokens", 0)
    if not completed:
        return []
    tokens = v.get("total_input_tokens", 0) + out_tok
    osl = row.get("run_osl") if _num(row.get("run_osl")) else None
    decoded = out_tok > completed or (out_tok > 0 and osl is not None and osl > 1)
    held = ["duration", "request_throughput", *TIMES["e2el"]]
    held += ["total_token_throughput"] if tokens else []
    held += ["output_throughput", *TIMES["ttft"]] if out_tok else []
    held += DECODE_TIMES if decoded else ()
    zeros = [f for f in held if v.get(f) == 0]
    if not zeros:
        return []
    done = f"although {completed} request(s) completed"
    asked = (f"although the point asked for {osl} output tokens per request"
             if osl is not None and osl > 1 else "although requests produced more than one "
             "token each")
    why = {"duration": done, "request_throughput": done,
           "total_token_throughput": f"{done} with {tokens} token(s)",
           "output_throughput": f"{done} with {out_tok} output token(s)"}
    for f in TIMES["e2el"]:
        why[f] = f"{done}: no request is answered in no time"
    for f in TIMES["ttft"]:
        why[f] = f"{done}: no first token comes in no time"
    for f in DECODE_TIMES:
        why[f] = f"{asked} ({out_tok} in all): no engine produces a token in no time"
    # the client says why it read requests whole (it fell behind); the verdict stands
    behind = (f"the client read every token of {whole} of {completed} request(s) in one read: "
              "it fell behind the server (a busy machine) and could not time their tokens; "
              "rerun the point with CPU to spare for the client (see the client's loop lag)"
              if whole else "")
    return [Finding(RULE_ZERO, f, f"{naming.key(f)} is 0 {why[f]}",
                    behind if f in DECODE_TIMES else "") for f in zeros]


def _bounds(row: dict, v: dict, naming: Naming) -> list[Finding]:
    found = []
    per_token, floor = bounds.TIME_PER_TOKEN, bounds.MIN_SECONDS_PER_TOKEN
    for metric in LATENCIES:
        for f in TIMES[metric]:
            t = v.get(f)
            if t and t < floor and f not in UNHELD:
                found.append(Finding(RULE_BOUND, f, f"{naming.key(f)} is {naming.time(t)}, "
                                     f"below the {per_token.name} bound of {per_token.shown}"))
    limit = bounds.TOKENS_PER_GPU
    for f in pergpu.FIELDS:
        rate = v.get(f)
        if rate is None or rate <= limit.limit:
            continue
        counts = pergpu.gpu_counts(row)
        if naming.raw and counts:
            gpus = pergpu.divisors(multinode=bool(row.get("is_multinode")),
                                   prefill=counts[0], decode=counts[1])[f]
            msg = (f"{naming.key(f)} over {gpus} GPU(s) is {rate:g} tok/s per GPU, above the "
                   f"{limit.name} bound of {limit.shown}")
        else:
            msg = f"{naming.key(f)} is {rate:g}, above the {limit.name} bound of {limit.shown}"
        found.append(Finding(RULE_BOUND, f, msg))
    return found


def _consistency(row: dict, v: dict, naming: Naming) -> list[Finding]:
    found = []
    k = naming.key
    d = v.get("duration")
    c, out_tok, in_tok = (v.get("completed"), v.get("total_output_tokens"),
                          v.get("total_input_tokens"))
    rates = []  # (field, what it must equal, how that is computed: words, numbers)
    if d and c is not None:
        rates.append(("request_throughput", c / d, "completed / duration", (c,)))
    if d and out_tok is not None:
        rates.append(("output_throughput", out_tok / d, "total_output_tokens / duration",
                      (out_tok,)))
        if in_tok is not None:
            rates.append(("total_token_throughput", (in_tok + out_tok) / d,
                          "(total_input_tokens + total_output_tokens) / duration",
                          (in_tok, out_tok)))
    for field, want, how, counts in rates:
        got = v.get(field)
        if got is not None and _apart(got, want):
            shown = f"({' + '.join(map(str, counts))})" if len(counts) > 1 else counts[0]
            found.append(Finding(RULE_CONSISTENCY, field, f"{k(field)} is {got:g}, but {how} "
                                 f"= {shown} / {d:g} s = {want:g} "
                                 f"({bounds.RATE_TOLERANCE.shown} allowed)"))
    out_rate, total_rate = v.get("output_throughput"), v.get("total_token_throughput")
    if (out_rate is not None and total_rate is not None
            and out_rate > total_rate * (1 + bounds.TOLERANCE) + 1e-12):
        found.append(Finding(RULE_CONSISTENCY, "output_throughput",
                             f"{k('output_throughput')} {out_rate:g} exceeds "
                             f"{k('total_token_throughput')} {total_rate:g}, which includes it"))
    longest = d * (1 + bounds.TOLERANCE) if d else None
    for metric in LATENCIES:
        last = None
        for f in PERCENTILES[metric]:
            t = v.get(f)
            if t is None:
                continue
            if last is not None and t < v[last] * (1 - ORDER_SLACK):
                found.append(Finding(RULE_CONSISTENCY, f, f"{k(f)} {naming.time(t)} is below "
                                     f"{k(last)} {naming.time(v[last])}", ORDER_HINT))
            last = f
        if longest is None:
            continue
        for f in TIMES[metric]:
            t = v.get(f)
            if t is not None and t > longest:
                found.append(Finding(RULE_CONSISTENCY, f, f"{k(f)} is {naming.time(t)}, "
                                     f"longer than the whole benchmark (duration {d:g} s)",
                                     DURATION_HINT))
    if not naming.raw:  # derived fields: processing computes them, an edited row may not
        found += _derived(row, v, naming)
    return found


def _derived(row: dict, v: dict, naming: Naming) -> list[Finding]:
    found = []
    counts = pergpu.gpu_counts(row)
    total, out_rate = v.get("total_token_throughput"), v.get("output_throughput")
    if counts and total is not None and out_rate is not None:
        want = pergpu.per_gpu(total, out_rate, multinode=bool(row.get("is_multinode")),
                              prefill=counts[0], decode=counts[1])
        for f, w in want.items():
            got = v.get(f)
            if got is not None and _apart(got, w):
                found.append(Finding(RULE_CONSISTENCY, f, f"{naming.key(f)} is {got:g}, but "
                                     f"the point's throughput over its GPUs gives {w:g}"))
    for f, tpot_field in INTERACTIVITY_OF:
        got = v.get(f)
        if got is None:
            continue
        tpot = v.get(tpot_field)
        if not tpot:
            found.append(Finding(RULE_CONSISTENCY, f, f"{naming.key(f)} is {got:g}, but "
                                 f"{naming.key(tpot_field)} is {tpot!r} (1 / TPOT)"))
        elif _apart(got, 1.0 / tpot):
            found.append(Finding(RULE_CONSISTENCY, f, f"{naming.key(f)} is {got:g}, but 1 / "
                                 f"{naming.key(tpot_field)} gives {1.0 / tpot:g}"))
    return found
