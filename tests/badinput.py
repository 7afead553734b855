"""The bad-input corpora: table-driven cases, one YAML file per command group under
``tests/data/bad-input/``. Each case is run and must fail cleanly.

A corpus file is a list of cases::

    - id: port-above-65535           # unique within the file
      args: [sim, serve, --port, "70000"]
      exit: 2                         # expected exit code
      message: "70000 is not in the range"   # fragment expected in stdout+stderr
      first_line: "[sim-port]"        # optional: fragment the output's first line must hold
      files:                          # optional: files written into the case's folder first
        cfg-master.yaml: |
          ...
      env: {PATH: ""}                 # optional: environment overrides ("" unsets)
      stdin: "..."                    # optional: standard input (subprocess cases)
      subprocess: false               # optional: run `python -m infersweep` in a child process
      absent: [out/result.json]       # optional: paths that must not exist afterwards
      created: []                     # optional: the only new paths allowed besides `files`
                                      #   (default: none at all, so no partial file is left)

``{dir}`` in ``args``, ``env`` and ``files`` is replaced by the case's folder, ``{repo}`` by the
repository as it is but with the frozen catalog and changelog (tests/data/catalog,
tests/data/changelog-base) in place of the live ones, so adding a config cannot change a case,
and ``{shared}`` by the reference data folder beside it (a case that names ``{shared}`` is
skipped where that folder is absent).

Every case asserts: the exit code, the message fragment, no ``Traceback`` in the output, no
exception escaping ``main`` (in-process), and no file left behind except those it declares;
with ``first_line``, that the first line printed (stdout, then stderr) is the cause.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from tests.livecatalog import frozen_checkout

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
CORPORA = Path(__file__).resolve().parent / "data" / "bad-input"


@dataclass
class Case:
    corpus: str
    id: str
    args: list[str]
    exit: int
    message: str
    first_line: str = ""
    files: dict[str, str] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    stdin: str | None = None
    subprocess: bool = False
    absent: list[str] = field(default_factory=list)
    created: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"{self.corpus}:{self.id}"

    @property
    def needs_shared(self) -> bool:
        text = yaml.safe_dump([self.args, self.env, self.files])
        return "{shared}" in text


def load_cases() -> list[Case]:
    cases = []
    for path in sorted(CORPORA.glob("*.yaml")):
        seen = set()
        for raw in yaml.safe_load(path.read_text()) or []:
            case = Case(corpus=path.stem, **raw)
            assert case.id not in seen, f"{path.name}: duplicate case id {case.id}"
            seen.add(case.id)
            cases.append(case)
    return cases


def _subst(text: str, folder: Path) -> str:
    repo = str(frozen_checkout()) if "{repo}" in text else ""
    return (text.replace("{dir}", str(folder)).replace("{repo}", repo)
            .replace("{shared}", str(SHARED)))


def _tree(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


def run_case(case: Case, folder: Path, run_inprocess, monkeypatch) -> tuple[int, str]:
    """Write the case's files into ``folder``, run it, return (exit code, stdout+stderr)."""
    for name, content in case.files.items():
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(_subst(content, folder))
    args = [_subst(str(a), folder) for a in case.args]
    env = {k: _subst(str(v), folder) for k, v in case.env.items()}
    if case.subprocess:
        child_env = {**os.environ, **env}
        for k, v in env.items():
            if v == "":
                child_env.pop(k, None)
        proc = subprocess.run([sys.executable, "-m", "infersweep", *args], cwd=folder,
                              env=child_env, input=case.stdin, capture_output=True, text=True,
                              timeout=120)
        return proc.returncode, proc.stdout + proc.stderr
    for k, v in env.items():
        if v == "":
            monkeypatch.delenv(k, raising=False)
        else:
            monkeypatch.setenv(k, v)
    code, out, err = run_inprocess(*args, cwd=folder)
    return code, out + err


def check_case(case: Case, folder: Path, run_inprocess, monkeypatch) -> None:
    before = _tree(folder)
    code, output = run_case(case, folder, run_inprocess, monkeypatch)
    assert "Traceback" not in output, output
    assert code == case.exit, f"exit {code}, expected {case.exit}:\n{output}"
    assert case.message in output, f"{case.message!r} not in:\n{output}"
    if case.first_line:
        first = output.splitlines()[0] if output else ""
        assert case.first_line in first, f"{case.first_line!r} not in the first line:\n{output}"
    for rel in case.absent:
        assert not (folder / _subst(rel, folder)).exists(), f"{rel} was left behind"
    written = set(case.files) | {str(p) for f in case.files for p in Path(f).parents}
    allowed = {_subst(c, folder) for c in case.created}
    new = _tree(folder) - before - written - allowed
    new = {p for p in new if not any(p.startswith(a.rstrip("/") + "/") for a in allowed)}
    assert not new, f"files left behind: {sorted(new)}"
