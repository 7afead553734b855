"""Finding srtctl for a checkout, and running its dry run over folders of recipes.

The srtctl here is a double that prints what `srtctl dry-run -f DIR` prints (the real one
runs in tests/integration/recipe_coverage/): each file's marker, an error paragraph for a
recipe holding ``bogus``, and an exit 3 for one holding ``crash``.
"""

from __future__ import annotations

import json
import sys
import textwrap

import pytest

from infersweep.recipe import srtctl
from infersweep.recipe.srtctl import Srtctl, SrtctlError, Verdict

DOUBLE = textwrap.dedent(f"""\
    #!{sys.executable}
    # a double of `srtctl dry-run -f DIR`: markers, error paragraphs, a crash
    import os, sys
    folder = sys.argv[3]
    names = sorted(n for n in os.listdir(folder) if n.endswith(".yaml"))
    print(f"Found {{len(names)}} YAML file(s) in: {{folder}}")
    for i, name in enumerate(names, 1):
        print(f"({{i}}/{{len(names)}}) Processing: {{name}}")
        text = open(os.path.join(folder, name)).read()
        if "crash" in text:
            print("Traceback (most recent call last): boom", file=sys.stderr)
            sys.exit(3)
        if "bogus" in text:
            print(f"  ❌ Error: Invalid config in {{folder}}/{{name}}: {{{{'bogus': ['Unknown")
            print("field.']}}")
            print()
        else:
            print("a panel of the sbatch script")
    print("Validated")
    """)


def _checkout(root, *backends):
    (root / "recipes").mkdir(parents=True)
    folder = root / "src" / "srtctl" / "backends"
    folder.mkdir(parents=True)
    for name in ("__init__", "base", *backends):
        (folder / f"{name}.py").write_text("")
    return root


def _venv(venv, source):
    """A venv holding an srtctl installed (editable) from ``source``."""
    (venv / "bin").mkdir(parents=True)
    exe = venv / "bin" / "srtctl"
    exe.write_text(DOUBLE)
    exe.chmod(0o755)
    info = venv / "lib" / "python3.11" / "site-packages" / "srtctl-0.3.0.dist-info"
    info.mkdir(parents=True)
    (info / "direct_url.json").write_text(json.dumps({"url": f"file://{source}",
                                                      "dir_info": {"editable": True}}))
    return exe


def test_srtctl_of_the_checkout_is_its_venvs_or_the_launch_caches(tmp_path):
    checkout = _checkout(tmp_path / "sha" / "src", "sglang", "vllm")
    _venv(checkout / ".venv", tmp_path / "elsewhere")  # installed from another checkout
    exe = _venv(tmp_path / "sha" / "venv", checkout)  # the launch cache's layout
    found = srtctl.locate(checkout, say=lambda text: None)
    assert found.exe == exe
    assert found.backends == {"sglang", "vllm"}
    assert found.commit is None  # not a git checkout
    assert found.supports({"backend": {"type": "vllm"}}) and found.supports({})
    assert not found.supports({"backend": {"type": "atom"}})


def test_without_one_it_is_installed_into_the_checkouts_venv(tmp_path, monkeypatch):
    checkout = _checkout(tmp_path / "srt-slurm", "sglang")
    said, installed = [], []

    def install(source, venv, say):
        say(f"installing into {venv}")
        installed.append((source, venv))
        _venv(venv, source)

    monkeypatch.setattr(srtctl, "_install", install)
    found = srtctl.locate(checkout, say=said.append)
    assert installed == [(checkout, checkout / ".venv")]
    assert found.exe == checkout / ".venv" / "bin" / "srtctl"
    assert said == [f"installing into {checkout / '.venv'}"]
    srtctl.locate(checkout, say=said.append)  # the second time, it is there
    assert len(installed) == 1


def test_a_checkout_without_srtctl_sources_is_refused(tmp_path):
    (tmp_path / "recipes").mkdir()
    with pytest.raises(SrtctlError, match="no src/srtctl/backends/") as exc:
        srtctl.locate(tmp_path)
    assert exc.value.diagnostics[0].rule == "srtctl-dry-run"


@pytest.fixture
def double(tmp_path):
    checkout = _checkout(tmp_path / "srt-slurm", "sglang")
    return Srtctl(_venv(checkout / ".venv", checkout), checkout, None, frozenset({"sglang"}))


@pytest.mark.parametrize("jobs", [1, 3])
def test_verdicts_come_back_in_order_identical_recipes_run_once(double, jobs):
    texts = ["name: a\n", "name: b\nbogus: 1\n", "name: a\n", "name: c\n"]
    ticks = []
    got = srtctl.dry_run(double, texts, jobs=jobs, tick=lambda: ticks.append(1))
    bad = Verdict(False, "{'bogus': ['Unknown field.']}")
    assert got == [Verdict(True), bad, Verdict(True), Verdict(True)]
    assert len(ticks) == 3  # three distinct recipes


def test_a_dry_run_that_dies_is_an_error_not_a_verdict(double):
    with pytest.raises(SrtctlError) as exc:
        srtctl.dry_run(double, ["name: a\n", "name: b\ncrash: 1\n"], jobs=1)
    message = exc.value.diagnostics[0].message
    assert "exited 3" in message and "Traceback (most recent call last): boom" in message


def test_nothing_to_run_runs_nothing(double):
    assert srtctl.dry_run(double, []) == []


def test_an_srtctl_that_cannot_start_is_an_error(double, tmp_path):
    gone = Srtctl(tmp_path / "missing" / "srtctl", double.checkout, None, double.backends)
    with pytest.raises(SrtctlError, match="cannot run .*missing/srtctl"):
        srtctl.dry_run(gone, ["name: a\n"])
