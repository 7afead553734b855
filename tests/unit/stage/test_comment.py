"""Parsing `/stage-results` comments: the exact forms stage, the rest get a usage reply or are
not addressed to staging at all."""

from __future__ import annotations

import pytest

from infersweep.stage.comment import IGNORE, STAGE, USAGE_ERROR, parse


@pytest.mark.parametrize(("body", "run_id"), [
    ("/stage-results", None),
    ("  /stage-results\n", None),
    ("/stage-results 33825304569", 33825304569),
    ("/stage-results\t42", 42),
    ("\r\n/stage-results   7  \n", 7),
    ("/stage-results 9223372036854775807", 9223372036854775807),
])
def test_the_exact_forms_stage(body, run_id):
    assert parse(body) == parse(body)  # pure
    got = parse(body)
    assert (got.kind, got.run_id) == (STAGE, run_id)


@pytest.mark.parametrize(("body", "fragment"), [
    ("/stage-results 123 please", "only one run id"),
    ("/stage-results 1 2", "only one run id"),
    ("/stage-results 123; rm -rf /", "shell metacharacters"),
    ("/stage-results $(id)", "shell metacharacters"),
    ("/stage-results `id`", "shell metacharacters"),
    ("/stage-results 12|cat", "shell metacharacters"),
    ("/stage-results abc", "'abc' is not a run id"),
    ("/stage-results 0x1f", "'0x1f' is not a run id"),
    ("/stage-results -5", "'-5' is not a run id"),
    ("/stage-results 0123", "without leading zeros"),
    ("/stage-results 0", "without leading zeros"),
    ("/stage-results 12345678901234567890", "is not a run id"),
    ("/stage-results \uff11\uff12\uff13", "not ASCII 0-9"),          # fullwidth digits
    ("/stage-results \u0661\u0662", "not ASCII 0-9"),                # Arabic-Indic digits
    ("/stage-results 12\u0417", "not ASCII"),                        # Cyrillic Ze for 3
    ("/stage-results\u00a0123", "not ASCII"),                        # no-break space
    ("/stage-results 123\u200b", "not ASCII"),                       # zero-width space
    ("/stage-resultsfoo", "is not the command"),
    ("/stage-results-now", "is not the command"),
    ("/STAGE-RESULTS 1", "must be written in lower case: `/stage-results`, not "
                         "`/STAGE-RESULTS`"),
    ("/stage-results 9223372036854775808", "at most 9223372036854775807"),  # 2^63
    ("/stage-results 9999999999999999999", "at most 9223372036854775807"),
    ("/stage-results\n123", "on one line"),
    ("/stage-results\nplease stage", "only one run id"),
])
def test_anything_else_that_starts_with_the_command_gets_a_usage_reply(body, fragment):
    got = parse(body)
    assert got.kind == USAGE_ERROR
    assert fragment in got.problem
    assert got.run_id is None


@pytest.mark.parametrize("body", [
    "", None, "LGTM", "please /stage-results 1", "> /stage-results 1",
    "/stage\u2010results 1",        # a Unicode hyphen: not the command
    "/st\u0430ge-results 1",        # Cyrillic a: not the command
    "stage-results 1",
])
def test_comments_not_starting_with_the_command_are_ignored(body):
    assert parse(body).kind == IGNORE
