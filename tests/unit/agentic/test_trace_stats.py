"""Corpus statistics and the theoretical prefix-cache hit rate (the client's definition)."""

from __future__ import annotations

from infersweep.agentic.traces import Corpus, Trace
from infersweep.agentic.tracestats import corpus_stats, theoretical_hit_rate, trace_blocks
from tests.unit.agentic.test_traces import call, subagent, trace


def corpus(*traces):
    return Corpus("<mem>", [Trace("<mem>", 1, t) for t in traces])


def test_hits_are_the_leading_blocks_already_sent():
    t = trace(requests=[call(0, ids=[1, 2, 3]), call(1, ids=[1, 2, 3, 4]),
                        call(2, ids=[9, 2, 3, 4, 5])])
    # 0 of 3, then 3 of 4, then none: block 9 is new, so the shared 2, 3, 4 after it miss
    assert trace_blocks(t) == (3, 12)


def test_a_subagent_shares_the_trace_seen_set_in_time_order():
    t = trace(requests=[call(0, ids=[1, 2]), subagent(1, [call(1, ids=[1, 2, 7]),
                                                          call(3, ids=[1, 2, 7, 8])]),
                        call(2, ids=[1, 2, 5])])
    # main 0/2; subagent t=1: 2/3; main t=2: 2/3; subagent t=3: 3/4
    assert trace_blocks(t) == (7, 12)


def test_a_subagent_no_main_call_precedes_is_left_out():
    t = trace(requests=[subagent(0, [call(0, ids=[1, 2])]), call(1, ids=[1, 2])])
    assert trace_blocks(t) == (0, 2)


def test_child_times_before_the_spawn_are_relative_to_it():
    t = trace(requests=[call(10, ids=[1]), subagent(11, [call(0.5, ids=[1, 4])]),
                        call(11.2, ids=[1, 4, 5])])
    # the child starts at 11.5, after the main call at 11.2: main 1/3 then child 2/2
    assert trace_blocks(t) == (3, 6)


def test_seen_sets_are_per_trace():
    a = trace("a", [call(0, ids=[1, 2])])
    b = trace("b", [call(0, ids=[1, 2])])
    assert theoretical_hit_rate(corpus(a, b)) == 0.0


def test_corpus_stats_count_calls_turns_and_subagents():
    t = trace(requests=[call(0, n_in=100, out=5), subagent(1, [call(1, n_in=50, out=3),
                                                               call(2, n_in=70, out=4)]),
                        call(3, n_in=300, out=7)])
    s = corpus_stats(corpus(t, trace("b")))
    assert (s.traces, s.requests, s.turns, s.subagents, s.subagent_requests) == (2, 5, 3, 1, 2)
    assert (s.input_tokens, s.output_tokens, s.max_input_tokens) == (648, 35, 300)
