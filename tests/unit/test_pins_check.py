"""``infersweep pins check``: the lock is well formed and nothing else names another commit."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from infersweep.cli import main
from infersweep.diagnostics import InputError
from infersweep.pins.check import check, is_commit_like
from infersweep.pins.lock import load_lock, sha_problem

REPO_ROOT = Path(__file__).resolve().parents[2]

SRT = "81d46274f508e18ab14d1f123b75132005818dcf"
ATOM = "f95ef3ec30a16876a676e0af96d60f8e0605c7c5"
OLD = "527525d43ce2c1d33aa1d429aae0d8f338637b49"  # an earlier pin
WRONG = "10a58d2ebb4d756c423424049c736b909b72e14f"
OTHER = "c87d7b34b009be920896126013ad6dc74c5a99d5"


def lock_text(srt_commit=SRT, *, extra="", dialect="v1", superseded=""):
    return textwrap.dedent(f"""\
        # yaml-language-server: $schema=../schemas/runtimes.schema.json
        runtimes:
          srt-slurm:
            repository: https://github.com/example/srt-slurm
            commit: {srt_commit}
            recipe-dialect: {dialect}
            mentions: [srt-slurm, srt_slurm, srtctl]
        {superseded}
          atom:
            repository: https://github.com/example/ATOM
            commit: {ATOM}
            mentions: [atomesh, atom revision]
        {extra}""")


def make_repo(tmp_path: Path, files: dict[str, str], lock: str | None = None) -> Path:
    (tmp_path / "configs").mkdir(exist_ok=True)
    (tmp_path / "configs" / "runtimes.yaml").write_text(lock if lock is not None else lock_text())
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return tmp_path


def problems(root) -> list[str]:
    return [str(d) for d in check(root).problems]


# -- the real repository ------------------------------------------------------------------------

def test_the_repository_lock_pins_srt_slurm_in_full():
    lock = load_lock(REPO_ROOT / "configs" / "runtimes.yaml")
    pin = lock.srt_slurm
    assert sha_problem(pin.commit) is None and len(pin.commit) == 40
    assert pin.recipe_dialect in ("v1", "v2")
    assert pin.repository.startswith("https://github.com/")
    assert (REPO_ROOT / "configs" / "runtimes.yaml").read_text().startswith(
        "# yaml-language-server: $schema=../schemas/runtimes.schema.json\n")


@pytest.mark.live_catalog
def test_the_repository_agrees_with_its_lock():
    report = check(REPO_ROOT)
    assert report.problems == [], "\n".join(map(str, report.problems))


# -- SHAs in the lock ---------------------------------------------------------------------------

@pytest.mark.parametrize(("value", "rule", "words"), [
    ("81d4627", "pin-short-sha", "short SHA (7 characters)"),
    ("81d46274f508", "pin-short-sha", "short SHA (12 characters)"),
    (SRT.upper(), "pin-malformed-sha", "upper-case"),
    ("main", "pin-malformed-sha", "not a commit SHA"),
    ("v1.0.68", "pin-malformed-sha", "not a commit SHA"),
    ("f4dc16b802d3e5326cbbb73055b621fb0d6264e0f982ed2389d91182a976fd7f", "pin-malformed-sha",
     "64 hex characters"),
    ("81d46274f508e18ab14d1f123b75132005818dcz", "pin-malformed-sha", "not a commit SHA"),
    (1234567, "pin-malformed-sha", "read as a number"),
])
def test_sha_problems(value, rule, words):
    got = sha_problem(value)
    assert got is not None and got[0] == rule and words in got[1]


def test_short_sha_in_the_lock_is_located(tmp_path, capsys):
    root = make_repo(tmp_path, {}, lock_text("81d4627"))
    with pytest.raises(SystemExit) as exc:
        main(["pins", "check", "--root", str(root)])
    assert exc.value.code == 1
    err = capsys.readouterr().err
    assert ("configs/runtimes.yaml:5:13: [pin-short-sha] srt-slurm: commit '81d4627' is a "
            "short SHA (7 characters)") in err
    assert "git rev-parse 81d4627" in err
    assert err.count("error:") == 1  # the schema's pattern error is not repeated


def test_unquoted_decimal_sha_is_explained(tmp_path):
    root = make_repo(tmp_path, {}, lock_text("1234567"))
    [problem] = problems(root)
    assert "read as a number" in problem and "quote" in problem


@pytest.mark.parametrize(("lock", "words"), [
    (lock_text(dialect="v3"), "'recipe-dialect' is \"v3\", expected one of \"v1\", \"v2\""),
    (lock_text(extra="    branch: main\n"), "unknown key 'branch'"),
    (lock_text().replace("    recipe-dialect: v1\n", ""), "missing required key 'recipe-dialect'"),
    ("runtimes:\n  atom:\n    repository: https://x/y\n    commit: " + ATOM + "\n",
     "missing required key 'srt-slurm'"),
    (lock_text().replace("https://github.com/example/srt-slurm", "github.com/example/srt"),
     "does not match"),
])
def test_schema_problems(tmp_path, lock, words):
    root = make_repo(tmp_path, {}, lock)
    found = problems(root)
    assert any(words in p for p in found), found


def test_superseded_commits_must_be_full_shas_too(tmp_path):
    root = make_repo(tmp_path, {}, lock_text(superseded="    superseded: [527525d]\n"))
    [problem] = problems(root)
    assert "superseded" in problem and "short SHA" in problem


def test_duplicate_key_in_the_lock_is_reported(tmp_path):
    root = make_repo(tmp_path, {}, lock_text().replace(
        "    recipe-dialect: v1\n", "    recipe-dialect: v1\n    commit: " + OLD + "\n"))
    with pytest.raises(InputError, match="duplicate key 'commit'"):
        check(root)


# -- references elsewhere -------------------------------------------------------------------------

def test_the_seed_thread_mistake_is_caught_everywhere(tmp_path, capsys):
    root = make_repo(tmp_path, {
        "perf-changelog.yaml": f"""\
            - config-keys: [dsv4-fp4-mi355x-atom-disagg]
              description:
                - "Runtime: srt-slurm PR #7 pinned at {WRONG}"
              pr-link: https://github.com/example/infersweep/pull/XXX
            """,
        "runners/launch_mi355x-amds.sh": f"""\
            #!/usr/bin/env bash
            SRT_SLURM_COMMIT="{OTHER}"
            """,
        "docs/bringup.md": "The AMD runtime uses srt-slurm at `76e7d76961`.\n"
                       "NVIDIA/srt-slurm v1.0.38 (c88ef731) for the GB200 lanes.\n",
        "benchmarks/multi_node/srt-slurm/atom.yaml": "# rendered for srtctl 5ecfb13d\nname: x\n",
        ".github/workflows/run-sweep.yml": f"env:\n  SRT_SLURM_COMMIT: {OLD}\n",
    })
    with pytest.raises(SystemExit) as exc:
        main(["pins", "check", "--root", str(root)])
    assert exc.value.code == 1
    err = capsys.readouterr().err
    expected = [
        f"perf-changelog.yaml:3:43: [pin-mismatch] '{WRONG}' refers to srt-slurm but "
        f"configs/runtimes.yaml pins {SRT}",
        f"runners/launch_mi355x-amds.sh:2:19: [pin-mismatch] '{OTHER}' refers to srt-slurm",
        "docs/bringup.md:1:36: [pin-mismatch] '76e7d76961' refers to srt-slurm",
        "docs/bringup.md:2:27: [pin-mismatch] 'c88ef731' refers to srt-slurm",
        "benchmarks/multi_node/srt-slurm/atom.yaml:1:23: [pin-mismatch] '5ecfb13d'",
        f".github/workflows/run-sweep.yml:2:21: [pin-mismatch] '{OLD}'",
    ]
    for line in expected:
        assert line in err, err
    assert "6 errors" in err
    assert "quote the pinned commit, or bump the pin" in err


def test_matching_references_pass_full_or_prefix(tmp_path, capsys):
    root = make_repo(tmp_path, {
        "perf-changelog.yaml": f'- description: ["srt-slurm pinned at {SRT}"]\n',
        "runners/launch_x.sh": f"SRT_SLURM_COMMIT={SRT}\n",
        "docs/a.md": f"srt-slurm `{SRT[:8]}` (tag inferencex-runtime-{SRT[:12]}); "
                     f"ATOM revision {ATOM}\n",
        "docs/b.md": f"https://github.com/example/srt-slurm/commit/{SRT}\n",
    })
    main(["pins", "check", "--root", str(root), "-v"])
    out = capsys.readouterr().out
    assert "pins check: 2 pins well formed; 5 references" in out
    assert f"docs/a.md:1:12: {SRT[:8]} matches the srt-slurm pin" in out


@pytest.mark.parametrize("line", [
    "srt-slurm run 33825304569 staged on 2026-09-04 (PR #2542)",  # decimal ids and dates
    "srt-slurm image rocm/atom-dev@sha256:f4dc16b802d3e5326cbbb73055b621fb0d6264e0f982ed2389d91182a976fd7f",
    "srt-slurm image digest sha256:f4dc16b802d3",  # truncated digest
    "use upstream vLLM 426e59f, srt-slurm v1.0.36 and aiperf be758d6",  # others' commits first
    "srtctl accepts deadbeef and facade as words",  # hex-only English words
    "srt-slurm commit 0d7ca6f95abc # pins: ignore",
    "the 0d7ca6f95 integration was merged before srt-slurm existed",  # mention after the token
    "nothing about the runtime here: c87d7b34b009",  # no mention at all
])
def test_things_that_are_not_references(tmp_path, line):
    root = make_repo(tmp_path, {"docs/notes.md": line + "\n"})
    assert problems(root) == []


def test_tests_and_the_lock_itself_are_not_scanned(tmp_path):
    root = make_repo(tmp_path, {"tests/test_x.py": f"SRT_SLURM_COMMIT = '{WRONG}'\n",
                                ".venv/lib/x.py": f"srt-slurm {WRONG}\n"})
    assert problems(root) == []


def test_package_source_is_scanned(tmp_path):
    root = make_repo(tmp_path, {"infersweep/launch/srt.py": f"SRT_SLURM_COMMIT = '{WRONG}'\n"})
    [problem] = problems(root)
    assert problem.startswith("infersweep/launch/srt.py:1:21:")


def test_superseded_pins_are_accepted_only_in_the_changelog(tmp_path):
    root = make_repo(tmp_path, {
        "perf-changelog.yaml": f'- description: ["validated with srt-slurm {OLD}"]\n',
        "docs/a.md": f"srt-slurm {OLD}\n",
    }, lock_text(superseded=f"    superseded: [{OLD}]\n"))
    [problem] = problems(root)
    assert problem.startswith("docs/a.md:1:11:")


def test_catalog_router_version_must_match_the_engine_pin(tmp_path):
    catalog = """\
        dsv4-fp4-mi355x-atom-disagg:
          router:
            name: atomesh
            version: 087b82d9aa
        other:
          router: {name: sglang-router, version: 0a1b2c3d4e}
        """
    root = make_repo(tmp_path, {"configs/amd-master.yaml": catalog})
    [problem] = problems(root)
    assert problem.startswith("configs/amd-master.yaml:4:14: [pin-mismatch] '087b82d9aa' "
                              "refers to atom")


def test_a_line_about_two_sources_accepts_either_pin(tmp_path):
    root = make_repo(tmp_path, {"docs/a.md": f"srt-slurm {SRT[:12]} with AToMesh {ATOM[:12]}\n"
                                             f"srt-slurm and atomesh at {WRONG[:9]}\n"})
    [problem] = problems(root)
    assert problem.startswith("docs/a.md:2:26:") and "srt-slurm or atom" in problem


def test_bad_lock_skips_the_scan_but_reports_the_lock(tmp_path):
    root = make_repo(tmp_path, {"docs/a.md": f"srt-slurm {WRONG}\n"}, lock_text("main"))
    found = problems(root)
    assert len(found) == 1 and "pin-malformed-sha" in found[0]


def test_missing_lock_is_a_clear_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["pins", "check", "--root", str(tmp_path)])
    assert exc.value.code == 1
    assert "runtimes.yaml: [io] file not found" in capsys.readouterr().err


@pytest.mark.parametrize(("token", "expected"), [
    ("81d4627", True), ("deadbeef", False), ("20260903", False), ("a" * 40, True),
    ("1234567890" * 4, True),
])
def test_commit_like(token, expected):
    assert is_commit_like(token) is expected


# -- show -----------------------------------------------------------------------------------------

def test_show_prints_fields_for_scripts(tmp_path, capsys):
    root = make_repo(tmp_path, {})
    main(["pins", "show", "srt-slurm", "--root", str(root), "--field", "commit"])
    assert capsys.readouterr().out.strip() == SRT
    main(["pins", "show", "--root", str(root), "--format", "env"])
    out = capsys.readouterr().out
    assert f"SRT_SLURM_COMMIT={SRT}\n" in out and "SRT_SLURM_RECIPE_DIALECT=v1\n" in out


def test_show_unknown_pin(tmp_path, capsys):
    root = make_repo(tmp_path, {})
    with pytest.raises(SystemExit):
        main(["pins", "show", "srt-slurn", "--root", str(root)])
    assert "did you mean 'srt-slurm'?" in capsys.readouterr().err


# -- files that are not plain UTF-8 text ----------------------------------------------------------

def write_bytes(root: Path, rel: str, data: bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("data", [
    f"Cafébot launches srt-slurm {WRONG} here\n".encode("latin-1"),  # not UTF-8
    b"\x00\x01binary header\nsrt-slurm " + WRONG.encode() + b"\n\x00",  # NUL bytes
    b"\xef\xbb\xbfsrt-slurm " + WRONG.encode() + b"\r\n",  # BOM and CRLF
])
def test_a_mismatched_pin_in_a_file_that_is_not_clean_utf8_is_found(tmp_path, data):
    root = make_repo(tmp_path, {})
    write_bytes(root, "runners/launch.sh", data)
    found = problems(root)
    assert len(found) == 1 and "runners/launch.sh:" in found[0]
    assert f"'{WRONG}' refers to srt-slurm" in found[0]


def test_an_unreadable_file_is_an_error_not_a_pass(tmp_path, capsys):
    root = make_repo(tmp_path, {})
    (root / "docs").mkdir()
    (root / "docs" / "notes.md").symlink_to("/proc/self/mem")  # a file whose read fails (EIO)
    with pytest.raises(SystemExit) as info:
        main(["pins", "check", "--root", str(root)])
    err = capsys.readouterr().err
    assert info.value.code == 1
    assert "docs/notes.md: [pins-unscanned] not scanned for pinned commits: cannot be read" in err


def test_a_large_file_without_mentions_is_a_warning(tmp_path, capsys):
    root = make_repo(tmp_path, {"docs/big.md": "x" * 300 + "\n"})
    main(["pins", "check", "--root", str(root), "--max-file-size", "100"])
    captured = capsys.readouterr()
    assert ("warning: docs/big.md: not scanned for pinned commits: larger than 100 bytes "
            "(301 bytes) (it names no pinned source; --strict makes this an error)") in captured.err
    assert "1 file not scanned (see the warnings)" in captured.out
    with pytest.raises(SystemExit):
        main(["pins", "check", "--root", str(root), "--max-file-size", "100", "--strict"])


def test_a_large_file_naming_a_source_is_searched_by_streaming(tmp_path):
    root = make_repo(tmp_path, {})
    filler = b"y" * 3000
    write_bytes(root, "docs/huge.log", filler + b"built by SRTCTL " + filler)
    report = check(root, max_bytes=1000)
    [problem] = report.problems
    assert problem.rule == "pins-unscanned" and "mentions srt-slurm" in problem.message
    from infersweep.pins.check import mentions_in_file
    pins = report.lock.valid_pins()
    # a mention split across two read blocks is still found
    assert mentions_in_file(root / "docs/huge.log", pins, chunk=3005) == ("srt-slurm",)


def test_output_format_github_annotates_each_mismatch(tmp_path, capsys, monkeypatch):
    root = make_repo(tmp_path, {"runners/launch_x.sh": f'SRT_SLURM_COMMIT="{OTHER}"\n'})
    monkeypatch.chdir(root)
    with pytest.raises(SystemExit) as exc:
        main(["pins", "check", "--output-format", "github"])
    assert exc.value.code == 1
    captured = capsys.readouterr()
    assert captured.out.splitlines()[0].startswith(
        "::error file=runners/launch_x.sh,line=1,col=19,title=infersweep pins check "
        f"[pin-mismatch]::'{OTHER}' refers to srt-slurm but configs/runtimes.yaml pins {SRT}")
    assert captured.err.startswith("error: runners/launch_x.sh:1:19: [pin-mismatch]")
