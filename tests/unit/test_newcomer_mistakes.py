"""The mistakes a newcomer makes on the way through docs/adding-a-config.md, each with the
first message line it must get (a click usage error's first message is its ``Error:`` line,
after the usage banner). Git-backed mistakes (uncommitted edits, a base-ref typo) are in
tests/integration/test_changelog_worktree.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CATALOG = ["--config-files", REPO / "tests/data/catalog/amd-master.yaml",
           "--runner-config", REPO / "tests/data/catalog/runners.yaml"]
KEY = "dsv4-fp4-mi355x-atom-disagg"
EVENT = {"action": "opened", "number": 5,
         "pull_request": {"number": 5, "draft": False, "labels": [],
                          "head": {"sha": "c" * 40, "ref": "my-branch",
                                   "repo": {"full_name": "o/r"}},
                          "base": {"sha": "d" * 40, "ref": "main"}},
         "repository": {"full_name": "o/r", "default_branch": "main"}}


def first_message(text: str) -> str:
    return next((line for line in text.splitlines()
                 if line.startswith(("error:", "Error:", "warning:", "skip:", "run:"))), "")


@pytest.mark.parametrize("args,code,first", [
    (["matrix", "test-config", "--config-keys", KEY, "--seq-lens", "8k", *CATALOG], 2,
     "Error: Invalid value for '--seq-lens': '8k' is not a sequence family: use 1k1k, 8k1k, "
     "or ISL_OSL in tokens, e.g. 2048_1024"),
    (["matrix", "test-config", "--config-keys", KEY, "--seq-lens", "1k1k", *CATALOG], 2,
     f"Error: Invalid value for '--seq-lens': 1k1k: not a sequence family of {KEY} (it has: "
     "8k1k; see `infersweep explain KEY`)"),
    (["matrix", "test-config", "--config-keys", KEY, "--conc", "3", *CATALOG], 2,
     f"Error: Invalid value for '--conc': 3: not a point of {KEY} (it has: 4, 8, 16, 32, 64, "
     "128, 256, 512, 768, 1024, 2048; see `infersweep explain KEY`)"),
    (["matrix", "test-config", "--config-keys", f"{KEY},,x", *CATALOG], 2,
     f"Error: Invalid value for '--config-keys': '{KEY},,x' has an empty item; separate keys "
     "with single commas, or repeat the option"),
    (["policy", "decide", "--event-name", "pull-request", "--event-path", "event.json"], 2,
     "Error: Invalid value for '--event-name': 'pull-request' is not a GitHub Actions event "
     "name (did you mean 'pull_request'?); the sweep runs on pull_request, push, "
     "workflow_dispatch (pass $GITHUB_EVENT_NAME)"),
])
def test_first_message(args, code, first, run_cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "event.json").write_text(json.dumps(EVENT))
    got, out, err = run_cli(*args)
    assert got == code, err
    assert first_message(err) == first
    assert "Traceback" not in out + err


def test_comma_separated_config_keys_select_both(run_cli):
    code, out, err = run_cli("matrix", "test-config", "--config-keys",
                             f"{KEY},dsv4-fp4-mi355x-atom", *CATALOG)
    assert code == 0, err
    keys = {(row["framework"]) for row in json.loads(out)}
    assert keys == {"atom", "atom-disagg"}


@pytest.mark.parametrize("action,labels,first", [
    ("labeled", ["full-sweep-failfast"],
     "skip: label 'full-sweep-failfast' is not a sweep label (did you mean "
     "'full-sweep-fail-fast'?); a running sweep is left alone"),
    ("opened", ["full-sweep-failfast"],
     "skip: no primary sweep label; label 'full-sweep-failfast' is not a sweep label: did you "
     "mean 'full-sweep-fail-fast'?; add 'full-sweep-fail-fast' (recommended) to run the sweep"),
    ("opened", ["full-sweep-fail-fast", "all-eval"],
     "run: 'full-sweep-fail-fast' on PR #5: full matrix, canary first, fail-fast; label "
     "'all-eval' is not a sweep label: did you mean 'all-evals'?"),
])
def test_a_near_miss_label_gets_a_did_you_mean(action, labels, first, run_cli, tmp_path,
                                               monkeypatch):
    monkeypatch.chdir(tmp_path)
    event = json.loads(json.dumps(EVENT))
    event["action"] = action
    event["pull_request"]["labels"] = [{"name": n} for n in labels]
    if action == "labeled":
        event["label"] = {"name": labels[0]}
    (tmp_path / "event.json").write_text(json.dumps(event))
    summary = tmp_path / "summary.md"
    code, out, err = run_cli("policy", "decide", "--event-name", "pull_request", "--event-path",
                             "event.json", "--head-commit-message", "msg", "--github-output",
                             tmp_path / "out.txt", "--step-summary", summary)
    assert code == 0, err
    assert first_message(err) == first
    reason = first.split(": ", 1)[1]
    assert json.loads(out)["reason"] == reason
    assert reason in summary.read_text()


def test_policy_labels_json_has_booleans(run_cli):
    code, out, _ = run_cli("policy", "labels", "--format", "json")
    assert code == 0
    rows = {r["label"]: r for r in json.loads(out)}
    assert rows["full-sweep-fail-fast"]["canary"] is True
    assert rows["sweep-enabled"]["stageable"] is False
    assert rows["all-evals"]["canary"] is None


def test_root_help_lists_exactly_the_commands_that_exist(run_cli):
    import click

    from infersweep.cli import cli

    code, out, _ = run_cli("--help")
    assert code == 0
    listed = [line.split()[0] for line in out.split("Commands:", 1)[1].splitlines()
              if line.strip()]
    ctx = click.Context(cli)
    assert listed == cli.list_commands(ctx)
    assert all(cli.get_command(ctx, name) is not None for name in listed)
    assert "stag" not in out.split("Commands:", 1)[0]  # no command promised that is not there


@pytest.mark.parametrize("inputs,first", [
    ({"config-keys": KEY, "seq-lens": "8k"},
     "error: --dispatch: [dispatch] seq-lens: '8k' is not a sequence family (use 1k1k, 8k1k, "
     "or ISL_OSL in tokens, e.g. 2048_1024)"),
    ({"config-keys": KEY, "conc": "3 4"},
     f"error: --dispatch: [dispatch] conc: 3: not a point of {KEY} (it has: 4, 8, 16, 32, 64, "
     "128, 256, 512, 768, 1024, 2048; see `infersweep explain KEY`)"),
])
def test_a_manual_dispatch_names_the_input_none_of_its_keys_has(inputs, first, run_cli,
                                                                tmp_path):
    (tmp_path / "configs").mkdir()
    for name in ("amd-master.yaml", "runners.yaml"):
        (tmp_path / "configs" / name).write_text(
            (REPO / "tests/data/catalog" / name).read_text())
    code, _, err = run_cli("changelog", "matrix", "--repo", tmp_path, "--dispatch",
                           json.dumps(inputs))
    assert code == 1
    assert first_message(err) == first


def test_explain_format_json_has_booleans_and_numbers(run_cli):
    code, out, err = run_cli("explain", KEY, "--format", "json", *CATALOG)
    assert code == 0, err
    [data] = json.loads(out)
    assert data["config-key"] == KEY and data["nodes-peak"] == 3
    assert all(isinstance(p["eval"], bool) for p in data["points"])
    assert [p["conc"] for p in data["points"] if p["eval"]] == [128, 2048]


def test_validate_output_format_github_puts_the_error_on_the_line(run_cli, tmp_path):
    master = tmp_path / "x-master.yaml"
    text = (REPO / "tests/data/catalog/amd-master.yaml").read_text()
    lines = text.splitlines()
    n = next(i for i, line in enumerate(lines) if line.strip() == "runner: mi355x") + 1
    master.write_text(text.replace("runner: mi355x\n", "runner: mi355x-nope\n", 1))
    code, out, err = run_cli("validate", master, "--runner-config",
                             REPO / "tests/data/catalog/runners.yaml", "--output-format",
                             "github")
    assert code == 1
    first = out.splitlines()[0]
    assert first.startswith(f"::error file={master.as_posix()},line={n},col=")
    assert ",title=infersweep validate [unknown-runner]::" in first
    assert first_message(err).startswith(f"error: {master}:{n}:")
