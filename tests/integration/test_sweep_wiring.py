"""run-sweep's wiring without GitHub: the decision `policy decide` writes to GITHUB_OUTPUT is
exactly what `changelog matrix --decision` consumes, on a real repository with an origin."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.gitrepo import APPENDED_ENTRY as ENTRY
from tests.gitrepo import GitRepo, frozen_base_files
from tests.unit.test_policy_commands import parse_github_output

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(params=["full", "one-commit"])
def pr_checkout(tmp_path, request):
    """An origin with main and a PR branch appending a changelog entry, checked out as CI
    does: with full history, or one commit deep (GitHub's default) over file:// so that the
    depth is honoured; run-sweep then passes --fetch-missing."""
    origin = GitRepo(tmp_path / "origin")
    files = frozen_base_files()
    origin.commit("base", files)
    origin.git("checkout", "-q", "-b", "pr")
    head = origin.commit("append", {"perf-changelog.yaml":
                                    (origin.path / "perf-changelog.yaml").read_text() + ENTRY})
    origin.git("checkout", "-q", "main")
    origin.commit("main moves on", {"README.md": "later\n"})
    work = GitRepo(tmp_path / "work")
    work.git("remote", "add", "origin", f"file://{origin.path}")
    if request.param == "full":
        work.git("fetch", "-q", "origin")
    else:
        work.git("fetch", "-q", "--depth=1", "origin", head)
        assert work.git("rev-parse", "--is-shallow-repository") == "true"
    work.git("checkout", "-q", "--detach", head)
    return work, head, (["--fetch-missing"] if request.param == "one-commit" else [])


def _event(tmp_path: Path, labels: list[str], head: str) -> Path:
    event = {
        "action": "synchronize", "number": 12,
        "pull_request": {
            "number": 12, "draft": False, "labels": [{"name": n} for n in labels],
            "head": {"sha": head, "ref": "pr", "repo": {"full_name": "acme/sweeps"}},
            "base": {"sha": "0" * 40, "ref": "main", "repo": {"full_name": "acme/sweeps"}},
        },
        "repository": {"full_name": "acme/sweeps", "default_branch": "main"},
    }
    path = tmp_path / "event.json"
    path.write_text(json.dumps(event))
    return path


@pytest.mark.parametrize(("label", "canary", "conc"), [
    ("full-sweep-fail-fast", True, [[8, 16, 32, 64, 128], [256, 512, 768, 1024, 2048]]),
    ("sweep-enabled", False, [[4], [256]]),
])
def test_decision_drives_the_changelog_matrix(pr_checkout, tmp_path, monkeypatch, run_cli,
                                              label, canary, conc):
    work, head, fetch = pr_checkout
    output = tmp_path / "github_output"
    monkeypatch.setenv("GITHUB_OUTPUT", str(output))
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "summary.md"))
    monkeypatch.setenv("INFERSWEEP_HEAD_COMMIT_MESSAGE", "append")
    code, _, err = run_cli("policy", "decide", "--event-path", _event(tmp_path, [label], head),
                           "--event-name", "pull_request", cwd=work.path)
    assert code == 0, err
    decided = parse_github_output(output.read_text())
    assert decided["run"] == "true" and decided["check-changelog"] == "true"
    output.write_text("")

    code, _, err = run_cli("changelog", "check", "--decision", decided["decision-json"], *fetch)
    assert code == 0, err
    rows_file = tmp_path / "sweep-rows.json"
    code, out, err = run_cli("changelog", "matrix", "--decision", decided["decision-json"],
                             "--job-outputs", "--rows-out", rows_file, *fetch)
    assert code == 0, err
    jobs = parse_github_output(output.read_text())
    assert jobs.pop("ref") == head  # the commit every later job of the run checks out
    jobs = {k: json.loads(v) for k, v in jobs.items()}
    multi = jobs["multi-1"]
    assert bool(jobs["canary-multi-node"]) == canary
    assert all(jobs[f"single-{i}"] == [] for i in range(1, 11))

    def row(entry):  # what a benchmark job does with its matrix entry
        code, text, err = run_cli("changelog", "row", "--from", rows_file, "--id", entry["id"])
        assert code == 0, err
        found = json.loads(text)
        assert found["runner"] == entry["runner"]
        return found

    assert [row(e)["conc"] for e in multi] == conc
    if canary:  # the cheapest point runs first and is not run twice
        assert [row(e)["conc"] for e in jobs["canary-multi-node"]] == [[4]]
    assert json.loads(out)["changelog_metadata"]["head_ref"] == head
