"""docs/adding-a-config.md followed literally, on a scratch clone of this repository's HEAD.

The doc's own fenced snippets are what runs, so the doc and this test cannot drift: each
block follows an HTML comment that says what to do with it:

* ``<!-- walk: run -->``: run the ``sh`` block with bash (``set -euo pipefail``) in the clone;
  it must exit 0;
* ``<!-- walk: append FILE -->``: append the block to FILE, after one empty line, as the doc
  tells the reader to;
* ``<!-- walk: write FILE from DOC -->``: write the block that DOC marks ``<!-- walk: FILE -->``;
* ``<!-- walk: manual (why) -->``: not run here (it needs a fleet, or sets up the shell).

Every fenced block of the doc must carry one of these marks, so a new command cannot be added
to the doc without the test running it (or saying why not).

The clone is made the way a newcomer's is: ``origin`` is a repository whose ``main`` is the
commit under test, and the walk starts on that ``main``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
MARK = re.compile(r"<!-- walk: (?P<what>[^>]*?) -->")
FENCE = re.compile(r"^```(?P<lang>\w*)\n(?P<body>.*?)^```\n", re.S | re.M)


@dataclass
class Step:
    action: str  # run | append | write | manual
    arg: str
    body: str
    line: int


def steps(doc: Path, strict: bool = True) -> list[Step]:
    """The marked blocks of ``doc`` in order; with ``strict``, every fenced block must be
    marked."""
    text = doc.read_text()
    out: list[Step] = []
    for fence in FENCE.finditer(text):
        before = text[: fence.start()].rstrip("\n").splitlines()
        marks = []
        while before and MARK.fullmatch(before[-1].strip()):
            marks.insert(0, MARK.fullmatch(before[-1].strip())["what"])
            before.pop()
        line = text[: fence.start()].count("\n") + 1
        assert marks or not strict, (f"{doc.name}:{line}: fenced block without a "
                                     "<!-- walk: ... --> mark")
        for what in marks:
            action, _, arg = what.partition(" ")
            assert action in ("run", "append", "write", "manual", "event.json") or \
                action.endswith((".json", ".yaml")), f"{doc.name}:{line}: unknown mark {what!r}"
            out.append(Step(action, arg, fence["body"], line))
    return out


def marked_block(doc: Path, name: str) -> str:
    found = [s.body for s in steps(doc, strict=False) if s.action == name]
    assert len(found) == 1, f"{doc.name} marks {len(found)} blocks as {name!r}"
    return found[0]


def _git(*args, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


@pytest.fixture
def clone(tmp_path) -> Path:
    """A newcomer's clone: origin/main is this repository's HEAD."""
    upstream, work = tmp_path / "upstream", tmp_path / "work"
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(REPO), str(upstream)],
                   check=True)
    _git("checkout", "-q", "-B", "main", cwd=upstream)
    subprocess.run(["git", "clone", "-q", "--branch", "main", str(upstream), str(work)],
                   check=True)
    return work


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GITHUB_", "INFERSWEEP_")) and k != "GIT_DIR"}
    env.update({
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        "HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "New Contributor", "GIT_AUTHOR_EMAIL": "new@example.invalid",
        "GIT_COMMITTER_NAME": "New Contributor", "GIT_COMMITTER_EMAIL": "new@example.invalid",
    })
    return env


def _append(path: Path, block: str) -> None:
    text = path.read_text()
    if not text.endswith("\n"):
        text += "\n"
    path.write_text(text + "\n" + block)


def test_adding_a_config_walks_literally(clone, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    env = _env(home)
    outputs: list[tuple[Step, str]] = []
    walked = steps(DOCS / "adding-a-config.md")
    for step in walked:
        if step.action == "manual":
            continue
        if step.action == "append":
            _append(clone / step.arg, step.body)
        elif step.action == "write":
            name, _, source = step.arg.partition(" from ")
            (clone / name).write_text(marked_block(DOCS / source, name))
        elif step.action == "run":
            done = subprocess.run(["bash", "-c", "set -euo pipefail\n" + step.body], cwd=clone,
                                  env=env, capture_output=True, text=True, timeout=300)
            assert done.returncode == 0, (
                f"adding-a-config.md:{step.line}: exit {done.returncode}\n{step.body}\n"
                f"stdout:\n{done.stdout[-3000:]}\nstderr:\n{done.stderr[-3000:]}")
            assert "Traceback" not in done.stdout + done.stderr
            outputs.append((step, done.stdout + done.stderr))
    assert {s.action for s in walked} >= {"run", "append", "write"}

    def output_of(command: str) -> str:
        return next(out for step, out in outputs if command in step.body)

    keys = ("dsv4-fp4-mi355x-sglang-mtp", "dsv4-fp4-mi355x-atom-disagg-1k1k")
    n_keys = sum(len(yaml.safe_load(f.read_text()) or {})
                 for f in (clone / "configs").glob("*-master.yaml"))  # the catalog's, plus the walk's two
    assert f"ok: {n_keys} config keys" in output_of("infersweep validate")
    explained = output_of("infersweep explain dsv4-fp4-mi355x-sglang-mtp")
    assert "| eval" in explained and "yes" in explained
    assert "1k1k" in output_of("infersweep explain 'dsv4-*-1k1k'")
    default = output_of("--conc 4 8 | head -3")
    assert "defaults/sglang.yaml (its framework's default" in default
    assert "# points (concurrency): 4 8" in default  # one job, one engine start
    assert "stageable: yes" in output_of("--output results/sglang-mtp-default")
    own = output_of("--output results/sglang-mtp-own")
    assert "ok: 1 template(s)" in own and "stageable: yes" in own
    assert "\n2\n" in own  # 4 and 8 share a server, 64 has its own
    checked = output_of("infersweep changelog check")
    assert "ok: 1 entry appended to perf-changelog.yaml" in checked
    assert all(k in checked for k in keys)
    matrix = json.loads((clone / "matrix.json").read_text())
    single = matrix["single_node"]["8k1k"]
    multi = matrix["multi_node"]["1k1k"]
    assert {(r["framework"], r["conc"]) for r in single} == {("sglang", c)
                                                             for c in (4, 8, 16, 32, 64)}
    assert [r["framework"] for r in multi] == ["atom-disagg"]
    assert multi[0]["conc"] == [4, 8, 16, 32, 64, 128]
    decided = output_of("infersweep policy decide")
    assert json.loads(decided[: decided.rindex("}") + 1])["decision"] == "run"
    # the walk committed on its own branch and left nothing behind
    assert _git("rev-parse", "--abbrev-ref", "HEAD", cwd=clone) == "add-dsv4-configs"
    assert _git("status", "--porcelain", "--untracked-files=no", cwd=clone) == ""


def test_every_block_of_the_pins_and_policy_payload_is_json():
    payload = json.loads(marked_block(DOCS / "pins-and-policy.md", "event.json"))
    assert payload["pull_request"]["labels"] == [{"name": "full-sweep-fail-fast"}]
