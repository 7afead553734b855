"""The changelog gate and changelog matrix on real git repositories."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
import yaml

from infersweep.matrix.rows import concs as row_concs
from tests.gitrepo import GitRepo, frozen_base_files
from tests.unit.test_policy_commands import parse_github_output

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
# a frozen catalog and changelog: line numbers and rows asserted here never follow the live files
FIVE_PRS = ("1683", "2433", "2606", "2670", "2643")

ENTRY = """- config-keys:
    - {key}
  description:
    - "{text}"
  pr-link: XXX
"""


def _entry(key="dsv4-fp4-mi355x-atom-disagg", text="Re-run on the new image."):
    return ENTRY.format(key=key, text=text)


@pytest.fixture
def repo(tmp_path) -> GitRepo:
    """The frozen catalog and changelog committed as the base on main."""
    r = GitRepo(tmp_path / "repo")
    files = frozen_base_files()
    r.commit("base", files)
    r.git("checkout", "-q", "-b", "pr")
    return r


def _append(repo: GitRepo, text: str, message="append") -> str:
    current = (repo.path / "perf-changelog.yaml").read_text()
    return repo.commit(message, {"perf-changelog.yaml": current + "\n" + text})


def _check(run_cli, repo, *extra):
    return run_cli("changelog", "check", "--repo", repo.path, "--base-ref", "main",
                   "--head-ref", "HEAD", *extra)


def test_valid_append_passes(repo, run_cli):
    _append(repo, _entry())
    code, out, err = _check(run_cli, repo)
    assert code == 0, err
    assert "1 entry appended" in out and "dsv4-fp4-mi355x-atom-disagg" in out


def test_pr_behind_main_is_judged_against_the_merge_base(repo, run_cli):
    _append(repo, _entry())
    repo.git("checkout", "-q", "main")
    _append(repo, _entry(text="Landed on main meanwhile."))
    repo.git("checkout", "-q", "pr")
    code, _, err = _check(run_cli, repo)
    assert code == 0, err


def _located(err: str, line: int, text: str) -> None:
    assert re.search(rf"perf-changelog\.yaml:{line}:\d+: .*{re.escape(text)}", err), err


def test_edited_line(repo, run_cli):
    path = repo.path / "perf-changelog.yaml"
    lines = path.read_text().splitlines(keepends=True)
    assert "Port the" in lines[8]
    lines[8] = lines[8].replace("Port", "Ported")
    repo.commit("edit", {"perf-changelog.yaml": "".join(lines)})
    code, _, err = _check(run_cli, repo)
    assert code == 1
    _located(err, 9, "existing line 9 was edited")
    assert "restore the line exactly" in err


def test_whitespace_only_edit_is_caught(repo, run_cli):
    text = (repo.path / "perf-changelog.yaml").read_text().replace("\n\n", "\n  \n", 1)
    repo.commit("ws", {"perf-changelog.yaml": text})
    code, _, err = _check(run_cli, repo)
    assert code == 1
    assert "whitespace changed" in err


def test_deleted_line(repo, run_cli):
    lines = (repo.path / "perf-changelog.yaml").read_text().splitlines(keepends=True)
    del lines[7]
    repo.commit("del", {"perf-changelog.yaml": "".join(lines)})
    code, _, err = _check(run_cli, repo)
    assert code == 1
    assert "existing line 8 was deleted" in err


def test_entry_inserted_in_the_middle(repo, run_cli):
    text = (repo.path / "perf-changelog.yaml").read_text()
    marker = "- config-keys:"
    text = text.replace(marker, _entry() + "\n" + marker, 1)
    repo.commit("middle", {"perf-changelog.yaml": text})
    code, _, err = _check(run_cli, repo)
    assert code == 1
    assert "inserted before existing line" in err and "not in the middle" in err


def test_missing_final_newline(repo, run_cli):
    current = (repo.path / "perf-changelog.yaml").read_text()
    repo.commit("nonl", {"perf-changelog.yaml": current + "\n" + _entry().rstrip("\n")})
    code, _, err = _check(run_cli, repo)
    assert code == 1
    assert "does not end with a newline" in err


def test_two_blank_lines_between_entries(repo, run_cli):
    current = (repo.path / "perf-changelog.yaml").read_text()
    repo.commit("blank", {"perf-changelog.yaml": current + "\n\n" + _entry()})
    code, _, err = _check(run_cli, repo)
    assert code == 1
    assert "more than one empty line" in err


def test_glob_that_matches_nothing(repo, run_cli):
    _append(repo, _entry(key="llama*-mi355x-*"))
    code, _, err = _check(run_cli, repo)
    assert code == 1
    _located(err, 16, "config key 'llama*-mi355x-*' is not in the catalog")
    assert "no key matches this glob" in err


def test_key_deleted_from_the_catalog_at_head(repo, run_cli):
    master = (repo.path / "configs" / "amd-master.yaml").read_text()
    cut = master.index("dsv4-fp4-mi355x-sglang:")
    end = master.index("dsv4-fp4-mi355x-atom-disagg:")
    repo.commit("drop sglang", {"configs/amd-master.yaml": master[:cut] + master[end:]})
    _append(repo, _entry(key="dsv4-fp4-mi355x-sglang"))
    # the working tree still has the key: the gate must judge the head ref
    (repo.path / "configs" / "amd-master.yaml").write_text(master)
    code, _, err = _check(run_cli, repo)
    assert code == 1
    assert "config key 'dsv4-fp4-mi355x-sglang' is not in the catalog at 'HEAD'" in err


def test_mixed_append_only_and_regular(repo, run_cli):
    _append(repo, _entry() + "  append-only: true\n\n" + _entry(key="dsv4-fp4-mi355x-atom"))
    code, _, err = _check(run_cli, repo)
    assert code == 1
    assert "append-only entries cannot share a pull request with regular entries" in err


def test_bad_entry_fields(repo, run_cli):
    _append(repo, _entry().replace("pr-link: XXX", "pr-link: TBD") + "  evals_only: true\n")
    code, _, err = _check(run_cli, repo)
    assert code == 1
    assert "unknown key 'evals_only'" in err and "did you mean 'evals-only'" in err
    assert "pr-link \"TBD\" is not a pull-request URL" in err


def test_pr_link_must_name_this_pr(repo, run_cli):
    _append(repo, _entry().replace(
        "pr-link: XXX", "pr-link: https://github.com/example/infersweep/pull/7"))
    code, _, err = _check(run_cli, repo, "--pr-number", "8")
    assert code == 1
    assert "another pull request than #8" in err
    code, _, err = _check(run_cli, repo, "--pr-number", "7")
    assert code == 0, err


def test_nothing_appended(repo, run_cli):
    repo.commit("no change")
    code, _, err = _check(run_cli, repo)
    assert code == 1
    assert "no entries were appended" in err


def test_unknown_ref(repo, run_cli):
    code, _, err = run_cli("changelog", "check", "--repo", repo.path, "--base-ref", "nope",
                           "--head-ref", "HEAD")
    assert code == 1
    assert "unknown git revision 'nope'" in err


def test_matrix_for_the_disagg_entry(repo, run_cli):
    _append(repo, _entry())
    code, out, err = run_cli("changelog", "matrix", "--repo", repo.path, "--base-ref", "main",
                             "--head-ref", "HEAD")
    assert code == 0, err
    result = json.loads(out)
    rows = result["multi_node"]["8k1k"]
    assert [r["conc"] for r in rows] == [[4, 8, 16, 32, 64, 128], [256, 512, 768, 1024, 2048]]
    assert all(len(r["recipe-fingerprint"]) == 64 for r in rows)
    assert rows[0]["recipe-fingerprint"] != rows[1]["recipe-fingerprint"]
    assert [r["eval-conc"] for r in result["multinode_evals"]] == [128, 2048]
    assert result["single_node"] == {} and result["evals"] == []


def _job_list(outputs: dict) -> dict[str, list[dict]]:
    return {name: json.loads(value) for name, value in outputs.items()
            if not name.startswith("has-") and name != "ref"}


def test_trim_and_canary_job_outputs(repo, run_cli, tmp_path, monkeypatch):
    _append(repo, _entry(key="dsv4-fp4-mi355x-*"))
    out_file = tmp_path / "github_output"
    rows_file = tmp_path / "sweep-rows.json"
    monkeypatch.setenv("GITHUB_OUTPUT", str(out_file))
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "summary.md"))
    code, out, err = run_cli("changelog", "matrix", "--repo", repo.path, "--base-ref", "main",
                             "--head-ref", "HEAD", "--job-outputs", "--canary",
                             "--rows-out", rows_file)
    assert code == 0, err
    jobs = _job_list(parse_github_output(out_file.read_text()))
    doc = json.loads(rows_file.read_text())
    rows, not_run = doc["rows"], doc.get("not-run", {})
    total = json.loads(out)
    points = sorted(r["conc"] for v in total["single_node"].values() for r in v)
    # every single-node point runs once: the canary (the cheapest point) or a shard's job,
    # where points that start the same server share one job
    assert not_run == {}
    [canary] = jobs["canary-single-node"]
    assert rows[canary["id"]]["conc"] in (1, [1]) and jobs["canary-multi-node"] == []
    single = [e for i in range(1, 11) for e in jobs[f"single-{i}"]]
    ran = [c for e in [canary, *single] for c in row_concs(rows[e["id"]])]
    assert sorted(ran) == points
    assert len(single) + 1 < len(points)  # fewer jobs (engine starts) than points
    multi = jobs["multi-1"]
    assert sorted(c for e in multi for c in rows[e["id"]]["conc"]) == [
        4, 8, 16, 32, 64, 128, 256, 512, 768, 1024, 2048]
    assert {e["runner"] for e in multi} == {rows[e["id"]]["runner"] for e in multi}
    summary = (tmp_path / "summary.md").read_text()
    assert "| single-node " in summary and "### Rows not launched" not in summary
    assert "::warning" not in out  # annotations never mix into the matrix JSON on stdout


def test_append_only_runs_only_new_points(repo, run_cli):
    master = (repo.path / "configs" / "amd-master.yaml").read_text()
    master = master.replace("conc-list: [4, 8, 16, 32, 64, 128]",
                            "conc-list: [2, 4, 8, 16, 32, 64, 128]")
    repo.commit("add c2", {"configs/amd-master.yaml": master})
    _append(repo, _entry() + "  append-only: true\n")
    code, out, err = run_cli("changelog", "matrix", "--repo", repo.path, "--base-ref", "main",
                             "--head-ref", "HEAD")
    assert code == 0, err
    result = json.loads(out)
    assert [r["conc"] for r in result["multi_node"]["8k1k"]] == [[2]]
    assert result["multinode_evals"] == []


def test_append_only_rejects_image_change(repo, run_cli):
    master = (repo.path / "configs" / "amd-master.yaml").read_text()
    master = master.replace("conc-list: [4, 8, 16, 32, 64, 128]",
                            "conc-list: [2, 4, 8, 16, 32, 64, 128]")
    master = master.replace("nightly_202609031453\n  model: deepseek-ai/DeepSeek-V4-Pro\n"
                            "  model-prefix: dsv4\n  precision: fp4\n  framework: atom-disagg",
                            "nightly_202610010000\n  model: deepseek-ai/DeepSeek-V4-Pro\n"
                            "  model-prefix: dsv4\n  precision: fp4\n  framework: atom-disagg")
    repo.commit("new image", {"configs/amd-master.yaml": master})
    _append(repo, _entry() + "  append-only: true\n")
    code, _, err = run_cli("changelog", "matrix", "--repo", repo.path, "--base-ref", "main",
                           "--head-ref", "HEAD")
    assert code == 1
    assert "may not remove or modify existing generated recipes" in err


OURS = ("recipe-fingerprint", "config-key")  # our fields beside InferenceX's


def _flat_digest(result: dict) -> tuple[int, str]:
    out = []
    for side in ("single_node", "multi_node"):
        for fam, rows in result.get(side, {}).items():
            out += [f"{side}/{fam}:" + json.dumps(
                {k: v for k, v in r.items() if k not in OURS}, sort_keys=True,
                separators=(",", ":")) for r in rows]
    for b in ("evals", "agentic_evals", "multinode_evals", "multinode_agentic_evals"):
        out += [f"{b}:" + json.dumps({k: v for k, v in r.items() if k not in OURS},
                                     sort_keys=True, separators=(",", ":"))
                for r in result.get(b, [])]
    return len(out), hashlib.sha256("\n".join(sorted(out)).encode()).hexdigest()


@pytest.mark.parametrize(("flags", "count", "digest"), [
    ((), 48, "955058c40296651a1b0aefce4cfb889b7f18a120dac521c90605b627a52cf36b"),
    (("--trim-conc",), 31, "fbdc4f27ddf591ead800e719a190d46728a589907a8d4419a3fc9dabef43be89"),
])
def test_five_inferencex_entries_match_process_changelog(inferencex, tmp_path, run_cli, flags,
                                                          count, digest):
    """InferenceX's AMD catalog; its changelog minus five AMD entries, then those appended.

    Expected digests: InferenceX's process_changelog output on the same change, rows
    compared without our recipe-fingerprint and config-key.
    """
    text = (inferencex / "perf-changelog.yaml").read_text()
    blocks = re.split(r"(?m)^(?=- config-keys:)", text)
    chosen = [b for b in blocks if any(f"/pull/{n}\n" in b for n in FIVE_PRS)]
    assert len(chosen) == 5
    base = "".join(b for b in blocks if b not in chosen)
    repo = GitRepo(tmp_path / "ix")
    repo.commit("base", {
        "configs/amd-master.yaml": (inferencex / "configs" / "amd-master.yaml").read_text(),
        "configs/runners.yaml": (inferencex / "configs" / "runners.yaml").read_text(),
        "perf-changelog.yaml": base,
    })
    entries = [b.rstrip() + "\n" for b in chosen]
    repo.commit("five", {"perf-changelog.yaml": base.rstrip("\n") + "\n\n"
                         + "\n".join(entries)})
    code, out, err = run_cli("changelog", "matrix", "--repo", repo.path, "--base-ref",
                             "HEAD~1", "--head-ref", "HEAD", *flags)
    assert code == 0, err
    result = json.loads(out)
    assert _flat_digest(result) == (count, digest)
    assert len(result["changelog_metadata"]["entries"]) == 5


# -- malformed appends: table-driven, with the assertions of tests/data/bad-input -----------
# (id, appended text, check exit, matrix exit, message fragment). Formatting problems refuse
# `check` but only warn in `matrix`, which plans the run from the entries.
_OK = _entry()
MALFORMED = [
    ("mapping-not-list", "config-keys: [dsv4-fp4-mi355x-atom-disagg]\n", 1, 1,
     "appended text must start a new entry with '- config-keys:'"),
    ("yaml-syntax", "- config-keys: [dsv4-fp4-mi355x-atom-disagg\n  pr-link: XXX\n", 1, 1,
     "perf-changelog.yaml:"),
    ("no-config-keys", "- config-keys:\n  description:\n    - \"x\"\n  pr-link: XXX\n", 1, 1,
     "config-keys"),
    ("config-keys-not-a-list", _OK.replace("config-keys:\n    - ", "config-keys: "), 1, 1,
     "config-keys"),
    ("no-description", "- config-keys:\n    - dsv4-fp4-mi355x-atom-disagg\n  pr-link: XXX\n",
     1, 1, "description"),
    ("bad-scenario-type", _OK + "  scenario-type: [fixed-seq]\n", 1, 1,
     "did you mean 'fixed-seq-len'?"),
    ("append-only-with-evals-only", _OK + "  append-only: true\n  evals-only: true\n", 1, 1,
     "append-only cannot be combined with evals-only"),
    ("tab-in-a-string", _OK.replace("Re-run on", "Re-run\ton"), 1, 0, "tab in an appended line"),
    ("crlf-line-endings", _OK.replace("\n", "\r\n"), 1, 0, "carriage return"),
    ("whitespace-only-separator", "  \n" + _OK, 1, 0, "whitespace-only line"),
    ("two-blank-lines-between-new-entries",
     _OK + "\n\n" + _entry(key="dsv4-fp4-mi355x-atom"), 1, 0, "more than one empty line"),
    ("blank-line-at-the-end", _OK + "\n", 1, 0, "the file ends with an empty line"),
]


@pytest.mark.parametrize(("case", "text", "check_exit", "matrix_exit", "message"), MALFORMED,
                         ids=[c[0] for c in MALFORMED])
def test_malformed_appends(repo, run_cli, tmp_path, case, text, check_exit, matrix_exit,
                           message):
    _append(repo, text)
    code, out, err = _check(run_cli, repo)
    assert "Traceback" not in out + err
    assert code == check_exit, err
    assert message in err
    rows = tmp_path / "sweep-rows.json"
    code, out, err = run_cli("changelog", "matrix", "--repo", repo.path, "--base-ref", "main",
                             "--head-ref", "HEAD", "--rows-out", rows)
    assert "Traceback" not in out + err
    assert code == matrix_exit, err
    assert message in err
    if matrix_exit:
        assert not rows.exists() and out == ""
    else:  # a warning, and the run is planned
        assert "warning: perf-changelog.yaml" in err and rows.exists()
        assert json.loads(out)["multi_node"]


def _documented_entry() -> str:
    """The entry docs/adding-a-config.md tells a contributor to append."""
    docs = (REPO / "docs" / "adding-a-config.md").read_text()
    section = docs[docs.index("## 3. Append a changelog entry"):]
    assert "after one empty line" in section.split("```")[0]
    return section.split("```yaml\n", 1)[1].split("```", 1)[0]


@pytest.mark.live_catalog
def test_live_changelog_accepts_the_documented_append(tmp_path, run_cli):
    """The live files, whatever they hold: the append the docs describe passes the gate."""
    r = GitRepo(tmp_path / "live")
    files = {f"configs/{p.name}": p.read_text() for p in (REPO / "configs").glob("*.yaml")}
    live = (REPO / "perf-changelog.yaml").read_text()
    r.commit("base", {**files, "perf-changelog.yaml": live})
    entry = _documented_entry()
    live_keys = [k for name, text in files.items() if name.endswith("-master.yaml")
                 for k in yaml.safe_load(text)]
    # the docs' example configs are added by the reader (tests/integration/
    # test_newcomer_walk.py walks that): here, each is replaced by a live key
    documented = yaml.safe_load(entry)[0]["config-keys"]
    spare = iter(k for k in live_keys if k not in documented)
    for name in documented:
        if name not in live_keys:
            entry = entry.replace(f"- {name}\n", f"- {next(spare)}\n")
    key = yaml.safe_load(entry)[0]["config-keys"][0]
    r.commit("append", {"perf-changelog.yaml": live + "\n" + entry})
    code, out, err = run_cli("changelog", "check", "--repo", r.path, "--base-ref", "HEAD~1",
                             "--head-ref", "HEAD")
    assert code == 0, err
    assert "1 entry appended" in out and key in out
    code, out, err = run_cli("changelog", "matrix", "--repo", r.path, "--base-ref", "HEAD~1",
                             "--head-ref", "HEAD")
    assert code == 0, err
    assert buckets_rows(json.loads(out)) > 0


def buckets_rows(result: dict) -> int:
    return sum(len(rows) for side in ("single_node", "multi_node")
               for rows in result[side].values())


def test_outputs_are_all_or_nothing(repo, run_cli, tmp_path):
    """A metadata file that fails to write at the end takes the rows file with it."""
    _append(repo, _entry())
    rows = tmp_path / "sweep-rows.json"
    target = Path("/proc/infersweep-meta.json")  # passes the up-front check, fails to write
    if not Path("/proc").is_dir():
        pytest.skip("needs Linux /proc")
    code, out, err = run_cli("changelog", "matrix", "--repo", repo.path, "--base-ref", "main",
                             "--head-ref", "HEAD", "--rows-out", rows, "--metadata-out", target)
    assert "Traceback" not in err
    if code == 0:
        pytest.skip("this system lets /proc be written")
    assert code == 1 and "cannot write --metadata-out" in err and "nothing was written" in err
    assert not rows.exists() and out == ""
