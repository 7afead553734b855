"""run-sweep's wiring without GitHub: the decision `policy decide` writes to GITHUB_OUTPUT is
exactly what `changelog matrix --decision` consumes, on a real repository with an origin."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.gitrepo import GitRepo
from tests.unit.test_policy_commands import parse_github_output

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
ENTRY = """
- config-keys:
    - dsv4-fp4-mi355x-atom-disagg
  description:
    - "Re-run the disaggregated configuration."
  pr-link: XXX
"""


@pytest.fixture
def pr_checkout(tmp_path):
    """An origin with main, and a PR branch appending a changelog entry (as CI checks out)."""
    origin = GitRepo(tmp_path / "origin")
    files = {f"configs/{p.name}": p.read_text() for p in (REPO / "configs").glob("*.yaml")}
    # the rows asserted below come from the frozen catalog, not the live one
    files.update({f"configs/{p.name}": p.read_text()
                  for p in (REPO / "tests" / "data" / "catalog").glob("*.yaml")})
    files["perf-changelog.yaml"] = (REPO / "perf-changelog.yaml").read_text()
    origin.commit("base", files)
    work = GitRepo(tmp_path / "work")
    work.git("remote", "add", "origin", str(origin.path))
    work.git("fetch", "-q", "origin")
    work.git("checkout", "-q", "-b", "pr", "origin/main")
    head = work.commit("append", {"perf-changelog.yaml":
                                  (work.path / "perf-changelog.yaml").read_text() + ENTRY})
    return work, head


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
    work, head = pr_checkout
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

    code, _, err = run_cli("changelog", "check", "--decision", decided["decision-json"])
    assert code == 0, err
    code, out, err = run_cli("changelog", "matrix", "--decision", decided["decision-json"],
                             "--job-outputs")
    assert code == 0, err
    jobs = parse_github_output(output.read_text())
    assert jobs["has-multi-node"] == "true"
    assert jobs["has-canary-multi-node"] == str(canary).lower()
    multi = json.loads(jobs["multi-node"])
    assert [row["conc"] for row in multi] == conc
    if canary:  # the cheapest point runs first and is not run twice
        assert [row["conc"] for row in json.loads(jobs["canary-multi-node"])] == [[4]]
    assert json.loads(out)["changelog_metadata"]["head_ref"] == head
