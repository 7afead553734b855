"""``infersweep policy decide`` end to end: event file in, JSON + GITHUB_OUTPUT + summary out."""

from __future__ import annotations

import json
import subprocess

import pytest

from infersweep.cli import main

REPO = "acme/infersweep"


def pr_event(labels, *, action="synchronize", acted="", sha="c" * 40, draft=False):
    event = {
        "action": action, "number": 3,
        "pull_request": {
            "number": 3, "draft": draft, "labels": [{"name": n} for n in labels],
            "head": {"sha": sha, "ref": "f", "repo": {"full_name": REPO}},
            "base": {"sha": "d" * 40, "ref": "main", "repo": {"full_name": REPO}},
        },
        "repository": {"full_name": REPO, "default_branch": "main"},
    }
    if acted:
        event["label"] = {"name": acted}
    return event


def parse_github_output(text: str) -> dict[str, str]:
    """Read GITHUB_OUTPUT the way the runner does (key=value and key<<DELIM heredocs)."""
    out, lines, i = {}, text.split("\n"), 0
    while i < len(lines):
        line = lines[i]
        if not line:
            i += 1
            continue
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            key, delim = line.split("<<", 1)
            j = lines.index(delim, i + 1)
            out[key] = "\n".join(lines[i + 1:j])
            i = j + 1
        else:
            key, value = line.split("=", 1)
            out[key] = value
            i += 1
    return out


@pytest.fixture
def gha(tmp_path, monkeypatch):
    """A fake Actions step environment; returns a runner for `policy decide`."""
    output, summary = tmp_path / "output", tmp_path / "summary"
    for var in ("GITHUB_EVENT_PATH", "GITHUB_EVENT_NAME", "INFERSWEEP_HEAD_COMMIT_MESSAGE",
                "GITHUB_REPOSITORY", "GITHUB_RUN_ID", "GITHUB_SHA"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("GITHUB_OUTPUT", str(output))
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.chdir(tmp_path)

    def run(event, name="pull_request", *args):
        path = tmp_path / "event.json"
        path.write_text(json.dumps(event) if not isinstance(event, str) else event)
        monkeypatch.setenv("GITHUB_EVENT_PATH", str(path))
        monkeypatch.setenv("GITHUB_EVENT_NAME", name)
        try:
            main(["policy", "decide", *args])
            code = 0
        except SystemExit as exc:
            code = exc.code
        return code

    run.output, run.summary = output, summary
    return run


def test_run_decision_goes_to_stdout_output_and_summary(gha, capsys):
    code = gha(pr_event(["full-sweep-fail-fast", "all-evals"]), "pull_request",
               "--head-commit-message", "tune")
    assert code == 0
    captured = capsys.readouterr()
    decision = json.loads(captured.out)
    assert decision["decision"] == "run" and decision["canary"] is True
    outputs = parse_github_output(gha.output.read_text())
    assert outputs["run"] == "true" and outputs["fail-fast"] == "true"
    assert outputs["mode"] == "full" and outputs["pr-number"] == "3"
    assert json.loads(outputs["labels"]) == ["all-evals", "full-sweep-fail-fast"]
    assert json.loads(outputs["decision-json"]) == decision
    assert set(outputs) == set(decision) | {"decision-json"}
    summary = gha.summary.read_text()
    assert "### Sweep decision" in summary and "| `canary` | true |" in summary
    assert "run:" in captured.err


def test_two_primary_labels_exit_1_with_a_clear_message(gha, capsys):
    code = gha(pr_event(["full-sweep-enabled", "full-sweep-fail-fast"]), "pull_request",
               "--head-commit-message", "")
    assert code == 1
    captured = capsys.readouterr()
    assert "pick exactly one" in captured.err and "Traceback" not in captured.err
    assert json.loads(captured.out)["decision"] == "error"
    outputs = parse_github_output(gha.output.read_text())
    assert outputs["decision"] == "error" and outputs["run"] == "false"
    assert "❌" in gha.summary.read_text()


def test_skip_exits_0(gha, capsys):
    assert gha(pr_event([]), "pull_request", "--head-commit-message", "x") == 0
    assert json.loads(capsys.readouterr().out)["decision"] == "skip"


def test_head_commit_message_from_env(gha, capsys, monkeypatch):
    monkeypatch.setenv("INFERSWEEP_HEAD_COMMIT_MESSAGE", "docs only [skip-sweep]")
    assert gha(pr_event(["full-sweep-fail-fast"])) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["decision"] == "skip" and out["skip-sweep-marker"] is True


def git(cwd, *args):
    return subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True,
                          text=True).stdout.strip()


@pytest.mark.parametrize(("message", "decision"), [("tune [skip-sweep]", "skip"),
                                                   ("tune", "run")])
def test_head_commit_message_read_from_the_checkout(gha, capsys, tmp_path, message, decision):
    repo = tmp_path / "checkout"
    repo.mkdir()
    git(repo, "init", "-q")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "--allow-empty",
        "-m", message)
    sha = git(repo, "rev-parse", "HEAD")
    assert gha(pr_event(["full-sweep-fail-fast"], sha=sha), "pull_request",
               "--repo-dir", str(repo)) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["decision"] == decision and out["head-commit-message-checked"] is True


def test_push_event_via_flags(gha, capsys, tmp_path, monkeypatch):
    path = tmp_path / "push.json"
    path.write_text(json.dumps({"ref": "refs/heads/main", "before": "1" * 40, "after": "2" * 40,
                                "head_commit": {"message": "m"},
                                "repository": {"full_name": REPO, "default_branch": "main"}}))
    monkeypatch.delenv("GITHUB_OUTPUT")
    monkeypatch.delenv("GITHUB_STEP_SUMMARY")
    code = 0
    try:
        main(["policy", "decide", "--event-path", str(path), "--event-name", "push"])
    except SystemExit as exc:
        code = exc.code
    assert code == 0
    assert json.loads(capsys.readouterr().out)["mode"] == "full"
    assert not (tmp_path / "output").exists()


def test_missing_event_file(gha, capsys, tmp_path):
    code = 0
    try:
        main(["policy", "decide", "--event-path", str(tmp_path / "nope.json"),
              "--event-name", "push"])
    except SystemExit as exc:
        code = exc.code
    assert code == 1
    assert "event file not found" in capsys.readouterr().err


def test_invalid_event_json_is_located(gha, capsys):
    assert gha("{\n  'bad'\n}", "push") == 1
    err = capsys.readouterr().err
    assert "event.json:2:3: [policy-event] event file is not valid JSON" in err


def test_labels_command_lists_every_label(capsys):
    try:
        main(["policy", "labels", "--format", "json"])
    except SystemExit as exc:
        assert exc.code == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 13 and rows[0]["label"] == "full-sweep-fail-fast"


def test_the_docs_table_names_every_label():
    from pathlib import Path

    from infersweep.policy.labels import RECOGNIZED_LABELS

    docs = (Path(__file__).resolve().parents[2] / "docs" / "pins-and-policy.md").read_text()
    missing = [name for name in RECOGNIZED_LABELS if f"`{name}`" not in docs]
    assert not missing, f"docs/pins-and-policy.md does not describe {missing}"
