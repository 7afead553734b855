import math

import numpy as np
import orjson
import pytest

from infersweep.bench import dataset
from infersweep.bench.runner import BenchArgs, slices, validate
from infersweep.bench.workload import Workload
from infersweep.diagnostics import InputError


def test_range_ratio_is_inferencex_semantics():
    p = dataset.make_plan(5000, 1000, 100, 0.8, seed=1)
    assert p.input_lens.min() == 800 and p.input_lens.max() == 1000
    assert p.output_lens.min() == 80 and p.output_lens.max() == 100
    fixed = dataset.make_plan(10, 1000, 100, 1.0, seed=1)
    assert set(fixed.input_lens.tolist()) == {1000}


def test_plan_is_reproducible_and_seed_sensitive():
    a = dataset.make_plan(50, 64, 8, 0.5, seed=3)
    b = dataset.make_plan(50, 64, 8, 0.5, seed=3)
    c = dataset.make_plan(50, 64, 8, 0.5, seed=4)
    assert np.array_equal(a.input_lens, b.input_lens) and np.array_equal(a.offsets, b.offsets)
    assert not np.array_equal(a.offsets, c.offsets)


def test_bodies_depend_only_on_seed_and_index():
    p = dataset.make_plan(8, 32, 4, 1.0, seed=9)
    w = Workload(p, model="m", chat=False, prompt_mode="ids", ignore_eos=True)
    body = orjson.loads(w.body(5))
    assert body["prompt"] == dataset.token_ids(p, 5).tolist()
    assert len(body["prompt"]) == 32 and body["max_tokens"] == 4 and body["ignore_eos"] is True
    assert body["stream_options"] == {"include_usage": True, "continuous_usage_stats": True}
    chat = Workload(p, model="m", chat=True, prompt_mode="pseudo")
    cb = orjson.loads(chat.body(5))
    assert len(cb["messages"][0]["content"].split()) == 32
    assert cb["max_completion_tokens"] == 4 and "max_tokens" not in cb


def test_open_loop_schedule_is_poisson_like_and_seeded():
    t = dataset.arrival_times(4000, rate=100.0, burstiness=1.0, seed=2)
    assert t[0] == 0 and np.all(np.diff(t) >= 0)
    assert 4000 / t[-1] == pytest.approx(100.0, rel=0.1)
    assert np.array_equal(t, dataset.arrival_times(4000, 100.0, 1.0, 2))
    assert dataset.arrival_times(3, math.inf, 1.0, 0) == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("kw,msg", [
    ({"num_prompts": 0}, "--num-prompts"),
    ({"random_input_len": -5}, "--random-input-len"),
    ({"random_output_len": 0}, "--random-output-len"),
    ({"random_range_ratio": 0.0}, "--random-range-ratio"),
    ({"random_range_ratio": 1.5}, "(0, 1]"),
    ({"base_url": "ftp://x:1"}, "--base-url"),
    ({"base_url": "http://x:99999"}, "--base-url"),
    ({"base_url": "http://x:1", "insecure": True}, "https base URLs only"),
    ({"max_concurrency": 0}, "--max-concurrency"),
    # the Python API gets the same checks as the command line
    ({"num_workers": -1}, "--num-workers"),
    ({"request_timeout": math.inf}, "--request-timeout"),
    ({"idle_timeout": math.nan}, "--idle-timeout"),
    ({"burstiness": math.inf}, "--burstiness"),
    ({"metric_percentiles": "90,101"}, "not in [0, 100]"),
    ({"percentile_metrics": "ttft,foo"}, "unknown metric 'foo'"),
    ({"goodput": ["ttft:nan"]}, "--goodput"),
    ({"base_url": "http://h:99999"}, "1..65535"),
])
def test_bad_arguments_are_clear_errors(kw, msg):
    with pytest.raises(InputError) as ei:
        validate(BenchArgs(model="m", **kw))
    assert msg in str(ei.value)


def test_concurrency_slices_sum_to_budget():
    assert slices(2048, 3, 10000) == [683, 683, 682]
    assert sum(slices(7, 4, 100)) == 7
