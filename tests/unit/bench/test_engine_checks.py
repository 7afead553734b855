"""Silent mismatches said out loud (issues 9 and 10): output lengths that differ from the
requested ones, prompt tokens the engine served from its cache, and --extra-body."""

from __future__ import annotations

import orjson
import pytest

from infersweep.bench import dataset, engine_checks, options
from infersweep.bench.runner import BenchArgs, validate
from infersweep.bench.workload import Workload
from infersweep.diagnostics import InputError


def rec(i, out, requested=128, finish="length", ok=True, cached=None, prompt=64):
    return {"id": i, "ok": ok, "output_tokens": out, "intended_output_len": requested,
            "finish_reason": finish, "cached_prompt_tokens": cached, "prompt_len": prompt,
            "server_prompt_tokens": prompt}


def test_an_ignored_length_limit_is_counted_and_named():
    """transformers serve ignores chat's max_completion_tokens: 1,024 tokens for 128 asked."""
    records = [rec(0, 1024), rec(1, 1024), rec(2, 0, ok=False)]
    got = engine_checks.output_lengths(records, ignore_eos=False)
    assert got == {"requests": 2, "longer": 2, "shorter": 0, "mismatched": 2,
                   "example": {"id": 0, "requested": 128, "output_tokens": 1024,
                               "finish_reason": "length"}}
    msg = engine_checks.length_warning(got, chat=True, ignore_eos=False)
    assert "2 of 2 requests" in msg and "1024 tokens instead of 128" in msg
    assert "ignored max_completion_tokens" in msg
    assert "ignored max_tokens" in engine_checks.length_warning(got, chat=False,
                                                                ignore_eos=False)


def test_a_model_that_ends_its_answer_is_no_mismatch_unless_eos_was_to_be_ignored():
    records = [rec(0, 128), rec(1, 40, finish="stop"), rec(2, 90, finish="length")]
    got = engine_checks.output_lengths(records, ignore_eos=False)
    assert (got["shorter"], got["mismatched"]) == (2, 1)  # the "length" one: capped early
    assert got["example"]["id"] == 2
    strict = engine_checks.output_lengths(records, ignore_eos=True)
    assert strict["mismatched"] == 2
    assert "despite ignore_eos" in engine_checks.length_warning(strict, False, True)
    assert engine_checks.length_warning(
        engine_checks.output_lengths([rec(0, 128)], False), False, False) is None


def test_cached_prompt_tokens_are_summed_where_the_engine_reports_them():
    assert engine_checks.cached_prompt_tokens([rec(0, 128), rec(1, 128)]) is None
    got = engine_checks.cached_prompt_tokens(
        [rec(0, 128, cached=64), rec(1, 128, cached=0), rec(2, 128), rec(3, 0, ok=False)])
    assert got == {"requests_reporting": 2, "requests_with_hits": 1, "cached_tokens": 64,
                   "prompt_tokens": 128, "fraction": 0.5}
    assert engine_checks.cache_warning(got, "run") is None  # half: not above the line
    most = engine_checks.cached_prompt_tokens([rec(0, 128, cached=60), rec(1, 128, cached=60)])
    warn = engine_checks.cache_warning(most, "option")
    assert "94% of the prompt tokens" in warn and "--seed" in warn


def test_extra_body_is_merged_into_every_request_and_the_probe():
    extra = options.extra_body('{"top_k": 1, "chat_template_kwargs": {"x": true}}')
    plan = dataset.make_plan(2, 8, 4, 1.0, seed=1)
    for chat in (False, True):
        body = orjson.loads(Workload(plan, model="m", chat=chat, prompt_mode="pseudo",
                                     extra=extra).body(1))
        assert body["top_k"] == 1 and body["chat_template_kwargs"] == {"x": True}
        assert body["stream"] is True


@pytest.mark.parametrize(("text", "expected"), [
    ("{", "not valid JSON"),
    ("[1, 2]", "expected a JSON object"),
    ('"top_k"', "expected a JSON object"),
    ('{"stream": false}', "'stream' is set by the client"),
    ('{"max_tokens": 8}', "'max_tokens' is set by --random-output-len"),
    ('{"model": "x", "prompt": "y"}', "'model' is set by --model"),
])
def test_a_bad_extra_body_is_a_usage_error(run_cli, text, expected):
    code, _, err = run_cli("bench", "serve", "--model", "m", "--extra-body", text)
    assert code == 2 and "--extra-body" in err and expected in err, err
    with pytest.raises(InputError, match="--extra-body"):
        validate(BenchArgs(model="m", extra_body=text))
