"""`--output-format github`: the one renderer of diagnostics as GitHub workflow commands."""

from __future__ import annotations

import pytest

from infersweep import output
from infersweep.changelog.gate import compare
from infersweep.diagnostics import Diagnostic


@pytest.fixture(autouse=True)
def _text_again():
    output.select(output.TEXT)  # as every CLI run starts
    yield
    output.select(output.TEXT)


@pytest.mark.parametrize("diag,expected", [
    (Diagnostic("configs/amd-master.yaml", 12, 5, "bad value", "use 8", "schema"),
     "::error file=configs/amd-master.yaml,line=12,col=5,title=[schema]::bad value (use 8)"),
    (Diagnostic("configs/amd-master.yaml", 3, 0, "no column"),
     "::error file=configs/amd-master.yaml,line=3,col=1::no column"),
    (Diagnostic("perf-changelog.yaml", 0, 0, "not tied to a line", rule="io"),
     "::error file=perf-changelog.yaml,title=[io]::not tied to a line"),
    (Diagnostic("<git>", 0, 0, "unknown git revision 'mian'", rule="git-ref"),
     "::error title=[git-ref]::unknown git revision 'mian'"),
    (Diagnostic("--decision", 1, 2, "invalid JSON"),
     "::error::--decision: invalid JSON"),
    (Diagnostic("configs/runners.yaml@HEAD", 4, 1, "at a ref"),
     "::error file=configs/runners.yaml,line=4,col=1::at a ref"),
])
def test_annotation(diag, expected):
    assert output.annotation(diag) == expected


def test_message_and_properties_are_escaped():
    d = Diagnostic("dir,with:odd%name.yaml", 1, 1, "100% done\r\nnext: line", rule="a,b:c")
    assert output.annotation(d, output.WARNING) == (
        "::warning file=dir%2Cwith%3Aodd%25name.yaml,line=1,col=1,title=[a%2Cb%3Ac]::"
        "100%25 done%0D%0Anext: line")


def test_the_title_names_the_command_that_selected_github():
    output.select(output.GITHUB, "infersweep validate")
    d = Diagnostic("x.yaml", 2, 3, "m", rule="schema")
    assert output.annotation(d).startswith("::error file=x.yaml,line=2,col=3,"
                                           "title=infersweep validate [schema]::")


def test_an_absolute_path_under_the_checkout_is_made_relative(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "configs").mkdir()
    d = Diagnostic(str(tmp_path / "configs" / "a.yaml"), 1, 1, "m")
    assert output.annotation(d) == "::error file=configs/a.yaml,line=1,col=1::m"


def test_warn_prints_text_and_with_github_annotations(capsys):
    output.select(output.GITHUB)
    output.warn([Diagnostic("a.yaml", 1, 1, "careful", rule="r"), "a plain note"])
    out, err = capsys.readouterr()
    assert err.splitlines() == ["warning: a.yaml:1:1: [r] careful", "warning: a plain note"]
    assert out.splitlines() == ["::warning file=a.yaml,line=1,col=1,title=[r]::careful",
                                "::warning::a plain note"]


def test_text_prints_no_annotations(capsys):
    output.warn([Diagnostic("a.yaml", 1, 1, "careful")])
    out, _ = capsys.readouterr()
    assert out == ""


BASE = "- config-keys:\n    - a\n  description:\n    - \"x\"\n  pr-link: XXX\n"
NEW = "\n- config-keys:\n    - b\n  description:\n    - \"y\"\n  pr-link: XXX\n"


def test_an_edited_last_line_beside_an_identical_appended_line_is_an_edit():
    head = BASE.replace("pr-link: XXX", "pr-link: https://github.com/o/r/pull/5") + NEW
    diags, start = compare("perf-changelog.yaml", BASE, head)
    assert [str(d).split(" (the")[0] for d in diags] == [
        "perf-changelog.yaml:5:1: [changelog-edit] existing line 5 was edited "
        "(was '  pr-link: XXX', now '  pr-link: https://github.com/o/r/pull/5')"]
    assert head.splitlines()[start:start + 2] == ["", "- config-keys:"]


def test_a_real_insertion_in_the_middle_stays_an_insertion():
    head = BASE.replace("  description:", "  description:\n    - \"inserted\"") + NEW
    diags, _ = compare("perf-changelog.yaml", BASE, head)
    assert [d.rule for d in diags] == ["changelog-insert"]
    assert diags[0].message == "1 line(s) inserted before existing line 4"
