"""The site is swapped in whole: a failed build leaves the old one, nothing is left beside it."""

from __future__ import annotations

from pathlib import Path

import pytest

from infersweep.atomic import OutputError
from infersweep.report import build, fromrun, output, views
from tests import reportruns


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    return fromrun.load(reportruns.write_run(tmp_path_factory.mktemp("run"), "5",
                                             concs_one=(4, 8), concs_two=(64,)))


def _siblings(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.parent.iterdir() if p.name != folder.name)


@pytest.mark.parametrize("exchange", [True, False], ids=["renameat2", "two-renames"])
def test_a_rebuild_replaces_the_whole_site(run, tmp_path, monkeypatch, exchange):
    if not exchange:
        monkeypatch.setattr(output, "_exchange", lambda a, b: False)
    out = tmp_path / "parent" / "site"
    build([run], out)
    (out / "stale.html").write_text("from an older build")
    build([run], out)
    assert not (out / "stale.html").exists() and (out / "index.html").is_file()
    assert _siblings(out) == []
    assert oct(out.stat().st_mode & 0o777) == "0o755"


def test_a_failed_build_leaves_the_old_site_and_no_temporary_folder(run, tmp_path,
                                                                     monkeypatch):
    out = tmp_path / "site"
    build([run], out)
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}

    def broken(pairs):
        raise RuntimeError("the run pages broke mid-build")

    monkeypatch.setattr(views, "chart_sizes", broken)
    with pytest.raises(RuntimeError, match="mid-build"):
        build([run], out)
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert _siblings(out) == []
    with pytest.raises(RuntimeError):
        build([run], tmp_path / "new" / "deeper" / "site")
    assert not (tmp_path / "new").exists()  # the folders made for it are gone too


def test_bad_out_folders_are_refused_before_any_work(run, tmp_path):
    (tmp_path / "file").write_text("x")
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "notes.txt").write_text("keep")
    (tmp_path / "link").symlink_to(tmp_path / "home")
    for out, why in ((tmp_path / "file", "it is not a folder"),
                     (tmp_path / "home", "not empty and is not a report site"),
                     (tmp_path / "link", "it is a symbolic link.*give the folder it points to"),
                     (tmp_path / "file" / "site", "is not a directory")):
        with pytest.raises(OutputError, match=why):
            build([run], out)
    assert (tmp_path / "home" / "notes.txt").read_text() == "keep"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "home", "link"]
    (tmp_path / "empty").mkdir()
    build([run], tmp_path / "empty")  # an empty folder is fine
    assert (tmp_path / "empty" / output.MARKER).is_file()


def test_the_working_folder_and_its_parents_are_refused(run, tmp_path, monkeypatch):
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.chdir(site)
    for out in (Path("."), Path(".."), Path("/")):
        with pytest.raises(OutputError, match="it is the working folder or holds it"):
            build([run], out)
    assert list(site.iterdir()) == [] and sorted(p.name for p in tmp_path.iterdir()) == ["site"]
