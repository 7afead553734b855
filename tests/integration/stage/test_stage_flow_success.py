"""`/stage-results <id>` on a pull request labelled full-sweep-fail-fast, through the GitHub
API double, into a real results store (SQLite and PostgreSQL): the acknowledgement is edited
to the run's report page and the comparison table; staging it again keeps one copy of each
point; a second, slower sweep is compared with the first and its regressions flagged."""

from __future__ import annotations

import copy

import pytest

from infersweep.store import open_store
from tests import browser, resultsrun
from tests.integration.stage import stagerun as sr

pytestmark = pytest.mark.integration

SITE = "https://octo-org.github.io/infersweep"

NEW_HEAD = "c4" * 20
SECOND = 33825309999


def _stage(run_cli, gh, tmp_path, body, store_url, **kw):
    code, out, err = sr.stage(run_cli, gh, tmp_path, body,
                              extra=("--db", store_url), **kw)
    assert "Traceback" not in out + err
    return code, out, err


def _points(store_url, run_id):
    with open_store(store_url) as s:
        return [p for r in s.staged_runs() if r.run_id == str(run_id) for p in r.points]


def test_a_run_is_staged_once_however_often_it_is_asked_for(gh, tmp_path, run_cli,
                                                           store_url):
    code, out, err = run_cli("store", "migrate", "--db", store_url)
    assert code == 0, out + err
    s = sr.sweep(gh, tmp_path)
    s.add_run()

    code, out, err = _stage(run_cli, gh, tmp_path, f"/stage-results {sr.RUN}", store_url)
    assert code == 0, out + err
    (note,) = gh.comments_on(sr.PR)
    body = note["body"]
    assert note["edits"] == 1  # the acknowledgement, edited to the outcome
    assert body.startswith(f"@maya staged [run {sr.RUN}](https://github.com/"
                           f"octo-org/infersweep/actions/runs/{sr.RUN}): 2 point(s), 1 eval(s)")
    assert f"Report: {SITE}/runs/{sr.RUN}-1.html" in body
    assert "the first staged run of this config" in body
    assert (tmp_path / "site" / "runs" / f"{sr.RUN}-1.html").is_file()
    assert (tmp_path / "site" / "index.html").is_file()
    first = _points(store_url, sr.RUN)
    assert sorted(p["conc"] for p in first) == [4, 8]
    assert "Outcome: **staged**" in (tmp_path / "summary.md").read_text()
    # the zip was fetched from storage without the token; every API call carried it
    assert all(auth is None for _, auth in gh.state.storage_log)
    assert all(auth == "token test-token" for _, _, auth in gh.state.log)

    # again: the same rows, updated in place, never a second copy
    code, out, err = _stage(run_cli, gh, tmp_path, f"/stage-results {sr.RUN}", store_url)
    assert code == 0, out + err
    assert len(gh.comments_on(sr.PR)) == 2
    again = _points(store_url, sr.RUN)
    assert len(again) == len(first) == 2
    with open_store(store_url) as st:
        events = [e for e in st.events() if e["run_id"] == str(sr.RUN)]
    assert [e["outcome"] for e in events] == ["staged", "staged"]
    assert all(e["actor"] == "maya" for e in events)


def test_a_later_sweep_is_compared_with_the_earlier_one(gh, tmp_path, run_cli, store_url):
    run_cli("store", "migrate", "--db", store_url)
    s = sr.sweep(gh, tmp_path)
    s.add_run()
    code, out, err = _stage(run_cli, gh, tmp_path, f"/stage-results {sr.RUN}", store_url)
    assert code == 0, out + err

    # a new head commit; its sweep is 20% slower at c=8
    pull = gh.state.pulls[sr.PR]
    pull["head"]["sha"] = NEW_HEAD
    gh.state.commits[sr.PR].append(copy.deepcopy(gh.state.commits[sr.PR][-1]))
    gh.state.commits[sr.PR][-1]["sha"] = NEW_HEAD
    slow = resultsrun.result(8, 8, output_throughput=4800.0, total_token_throughput=19200.0)
    s.add_run(SECOND, head_sha=NEW_HEAD, created_at="2026-12-01T11:00:00Z", attempt=2,
              artifacts={"results_bmk": sr.results_bmk(tmp_path, s.row, run_id=str(SECOND),
                                                       results={8: slow}, attempt=2),
                         "changelog-metadata": sr.changelog_zip(),
                         "sweep-rows": sr.rows_zip([s.row])})
    code, out, err = _stage(run_cli, gh, tmp_path, "/stage-results", store_url,
                            login="adam")
    assert code == 0, out + err
    body = gh.comments_on(sr.PR)[-1]["body"]
    assert body.startswith(f"@adam staged [run {SECOND}]")
    assert "(attempt 2)" in body
    assert f"Report: {SITE}/runs/{SECOND}-2.html" in body
    assert f"against run [{sr.RUN}](https://github.com/octo-org/infersweep/actions/runs/" \
           f"{sr.RUN})" in body
    assert "| config | topology | ISL/OSL | conc |" in body
    assert "**regression**" in body and "1 regression(s)" in body
    assert (tmp_path / "site" / "runs" / f"{SECOND}-2.html").is_file()
    assert (tmp_path / "site" / "runs" / f"{sr.RUN}-1.html").is_file()  # earlier runs stay
    assert len(_points(store_url, sr.RUN)) == 2  # the first run's rows are untouched
    if store_url.startswith("sqlite"):  # the site is the same on both; open it once
        browser.chromium()
        site = tmp_path / "site"
        page = browser.dom_facts(browser.dump_dom((site / "runs" / f"{SECOND}-2.html").as_uri()))
        assert [(c.rendered, c.points) for c in page.charts.values()] == [(True, 2)]
        config = browser.dom_facts(browser.dump_dom(
            (site / "configs" / "dsv4-fp4-mi355x-atom-disagg.html").as_uri()))
        assert [(c.rendered, c.points) for c in config.charts.values()] == [(True, 4)]


def test_an_unreachable_store_is_a_reply_and_nothing_is_published(gh, tmp_path, run_cli):
    sr.sweep(gh, tmp_path).add_run()
    code, out, err = _stage(run_cli, gh, tmp_path, f"/stage-results {sr.RUN}",
                            "postgresql+psycopg://stager:pw@127.0.0.1:9/results")
    assert code == 1, out + err
    (note,) = gh.comments_on(sr.PR)
    assert note["edits"] == 1
    assert note["body"].startswith("@maya staging failed, nothing was stored:")
    assert "Outcome: **failed**" in (tmp_path / "summary.md").read_text()
    assert not (tmp_path / "site").exists()


def test_refusals_are_recorded_as_staging_events(gh, tmp_path, run_cli, store_url):
    run_cli("store", "migrate", "--db", store_url)
    sr.sweep(gh, tmp_path).add_run()
    code, _, _ = _stage(run_cli, gh, tmp_path, "/stage-results 4242", store_url)
    assert code == 1
    code, _, _ = _stage(run_cli, gh, tmp_path, "/stage-results now", store_url, login="rita")
    assert code == 1
    with open_store(store_url) as st:
        events = st.events()
    assert [(e["run_id"], e["actor"], e["outcome"]) for e in events] == [
        ("4242", "maya", "refused"), (f"pr-{sr.PR}", "rita", "refused")]
    assert "there is no workflow run 4242" in events[0]["detail"]
    # each event links the reply that tells the outcome
    replies = {n["html_url"] for n in gh.comments_on(sr.PR)}
    assert {e["comment_url"] for e in events} == replies
    assert all(u.startswith(f"https://github.com/octo-org/infersweep/pull/{sr.PR}#issuecomment-")
               for u in replies)


def test_what_is_stored_is_exactly_what_was_gated(gh, tmp_path, run_cli):
    """An eval folder riding in another artifact is never checked, so never stored; the
    points and evals in the store are the ones the gates rebuilt from the job folders."""
    import io
    import zipfile

    from infersweep.stage import gates

    s = sr.sweep(gh, tmp_path)
    smuggled = tmp_path / "smuggled"
    sr.write_eval(smuggled / "evals" / "extra" / "eval", {**s.row, "tp": 4}, str(sr.RUN),
                  dataset=tmp_path / "gsm8k" / "test.jsonl")
    meta = zipfile.ZipFile(io.BytesIO(sr.changelog_zip()))
    members = [(n, meta.read(n)) for n in meta.namelist()]
    members += [(p.relative_to(smuggled).as_posix(), p.read_bytes())
                for p in sorted(smuggled.rglob("*")) if p.is_file()]
    bmk = sr.results_bmk(tmp_path, s.row)
    s.add_run(artifacts={"results_bmk": bmk, "changelog-metadata": sr.zip_members(members),
                         "sweep-rows": sr.rows_zip([s.row])})
    db = f"sqlite:///{tmp_path / 'exact.db'}"
    code, out, err = _stage(run_cli, gh, tmp_path, f"/stage-results {sr.RUN}", db)
    assert code == 0, out + err

    unpacked = tmp_path / "unpacked"
    with zipfile.ZipFile(io.BytesIO(bmk)) as zf:
        zf.extractall(unpacked)
    verdict = gates.judge(unpacked, [s.row], sr.thresholds_file(tmp_path), str(sr.RUN))
    assert verdict.passed, verdict.problems
    with open_store(db) as st:
        (run,) = st.staged_runs()
    assert len(run.evals) == len(verdict.evals) == 1
    assert run.evals[0]["recipe-fingerprint"] == verdict.evals[0]["recipe-fingerprint"]
    assert run.evals[0]["em-strict"] == verdict.evals[0]["em-strict"]
    assert sorted((p["conc"], p["tput_per_gpu"]) for p in run.points) == sorted(
        (p["conc"], p["tput_per_gpu"]) for p in verdict.points)
    assert run.recipes == verdict.recipes and len(run.recipes) == 1  # the job's recipe.yaml
    assert run.recipes[0]["recipe_fingerprint"] == run.points[0]["recipe_fingerprint"]
