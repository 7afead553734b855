"""A point whose requests claim more output than they asked for fails `results check`: no
engine returns more tokens than ``max_tokens``, and the client asks for at most the point's
OSL. Each forgery is consistent: token totals, throughputs and per-GPU rates recomputed."""

from __future__ import annotations

import pytest

from infersweep.diagnostics import InputError
from infersweep.results import process
from tests import resultsrun

OSL = 1024   # resultsrun's rows
N = 4        # requests of the point (conc 4)
IN_PER_REQUEST = 8000
DURATION = 10.0


def _point(lens: list[int], **over) -> dict:
    """A client result whose output lengths are ``lens`` and whose every count and rate
    follows from them, as the client computes them."""
    out_tok, in_tok = sum(lens), IN_PER_REQUEST * len(lens)
    return resultsrun.result(
        N, N, duration=DURATION, output_lens=lens, input_lens=[IN_PER_REQUEST] * len(lens),
        total_output_tokens=out_tok, total_input_tokens=in_tok,
        output_throughput=out_tok / DURATION,
        total_token_throughput=(in_tok + out_tok) / DURATION, **over)


def _run(tmp_path, result: dict):
    return resultsrun.write_job(tmp_path / "run", resultsrun.disagg_row([N]),
                                results={N: result})


def _process(manifest):
    return process.process_point(process.points_of(manifest)[0])


def test_an_honest_point_within_its_output_length_passes(tmp_path, run_cli):
    m = _run(tmp_path, _point([OSL, OSL - 100, 900, OSL]))
    assert _process(m).row["total_output_tokens"] == 3 * OSL + 900 - 100
    code, out, err = run_cli("results", "check", tmp_path / "run")
    assert code == 0, out + err


def test_every_request_claiming_three_times_its_output_fails_results_check(tmp_path, run_cli):
    m = _run(tmp_path, _point([3 * OSL] * N))
    with pytest.raises(InputError) as err:
        _process(m)
    (d,) = err.value.diagnostics
    assert d.rule == "results-output-length"
    assert (f"output_lens: {N} of {N} requests produced more tokens than the point asked for "
            f"(request 0: {3 * OSL} tokens, at most {OSL} asked)") in d.message
    text = (m.parent / "logs" / "fixed-seq").glob("*.json").__next__().read_text()
    line = next(i for i, x in enumerate(text.splitlines(), 1) if '"output_lens"' in x)
    assert (d.line, d.path.endswith("-c4.json")) == (line, True)
    code, out, errtext = run_cli("results", "check", tmp_path / "run")
    assert code == 1
    assert "results-output-length" in out + errtext


def test_one_overlong_request_among_honest_ones_fails(tmp_path):
    m = _run(tmp_path, _point([OSL, OSL, OSL + 1, OSL]))
    with pytest.raises(InputError, match=r"1 of 4 requests produced more tokens .*\(request 2: "
                                         r"1025 tokens"):
        _process(m)


def test_a_total_that_is_not_the_requests_sum_fails(tmp_path):
    """Honest per-request lengths, a tripled total (and the rates made to agree with it)."""
    honest = [OSL] * N
    result = _point(honest)
    out_tok = 3 * sum(honest)
    result.update(total_output_tokens=out_tok, output_throughput=out_tok / DURATION,
                  total_token_throughput=(result["total_input_tokens"] + out_tok) / DURATION)
    with pytest.raises(InputError, match=f"total_output_tokens is {out_tok}, but output_lens "
                                         f"add up to {sum(honest)}"):
        _process(_run(tmp_path, result))


def test_output_lens_that_are_not_counts_fail(tmp_path):
    with pytest.raises(InputError, match="output_lens is not a list of token counts"):
        _process(_run(tmp_path, _point([OSL] * N) | {"output_lens": [1.5, "x", OSL, OSL]}))
