"""Reading benchmark commands by meaning: unrolled points and shell loops agree."""

from __future__ import annotations

from infersweep.recipe import command, workload

LOOP = """\
set -e
root="/r/${SLURM_JOB_ID}"
for c in 4 8; do
  n=$((c * 10))
  python3 bench.py \\
    --max-concurrency "$c" --num-prompts "${n}" --num-warmups "$((c * 2))" \\
    --random-range-ratio 1.0 --result-dir "${root}/x" --result-filename "a-v4-c${c}.json" \\
    --ignore-eos
done
"""


def test_loop_is_expanded_per_point():
    b = command.parse(LOOP)
    assert b.client == "python3 bench.py"
    assert b.points == ["4", "8"]
    assert b.options == {"--max-concurrency": "conc", "--num-prompts": "10 x conc",
                         "--num-warmups": "2 x conc", "--random-range-ratio": "1.0",
                         "--result-dir": "/r/${SLURM_JOB_ID}/x",
                         "--result-filename": "a-v4-c{conc}.json", "--ignore-eos": ""}
    assert b.statements == ["set -e", "root=/r/${SLURM_JOB_ID}"]


def test_rendered_command_reads_the_same_way():
    w = workload.Workload(model="m", isl=8192, osl=1024, range_ratio=0.8, concs=(4, 8))
    b = command.parse(workload.command(w, "a-v4"))
    assert b.client == "infersweep bench serve"
    assert b.points == ["4", "8"]
    assert b.options["--num-prompts"] == "10 x conc"
    assert b.options["--num-warmups"] == "2 x conc"
    assert b.options["--random-output-len"] == "1024"
    assert b.options["--result-filename"] == "a-v4-c{conc}.json"
    assert b.statements == ["set -uo pipefail", "mkdir -p /logs/fixed-seq", "rc=0",
                            'exit "$rc"', "after each point: || rc=1"]


def test_loop_over_a_variable_keeps_the_text():
    b = command.parse("for c in ${CONC_LIST}; do\n  run --max-concurrency \"$c\"\ndone\n")
    assert b.points == ["${c}"]
    assert "for c in ${CONC_LIST}" in b.statements


def test_values_that_follow_no_rule_are_listed():
    text = ("run --max-concurrency 4 --num-prompts 40 --x a\n"
            "run --max-concurrency 8 --num-prompts 90 --x b\n")
    b = command.parse(text)
    assert b.options["--num-prompts"] == "4: 40; 8: 90"
    assert b.options["--x"] == "4: a; 8: b"


def test_no_client_invocation():
    b = command.parse("echo hello\n")
    assert (b.client, b.points, b.statements) == (None, [], ["echo hello"])
