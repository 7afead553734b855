"""A real scratch git repository for tests (commits files, returns commit ids)."""

from __future__ import annotations

import subprocess
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
REPO = DATA.parent.parent

# A changelog entry a pull request appends to the frozen changelog (for the gate's tests).
APPENDED_ENTRY = """
- config-keys:
    - dsv4-fp4-mi355x-atom-disagg
  description:
    - "Re-run the disaggregated configuration."
  pr-link: XXX
"""


def frozen_base_files() -> dict[str, str]:
    """The frozen catalog (tests/data/catalog) and changelog (tests/data/changelog-base) as
    the files of a base commit: tests that assert rows or line numbers build on these, never on
    the live files, so adding a config or a changelog entry cannot break them."""
    files = {f"configs/{p.name}": p.read_text() for p in (DATA / "catalog").glob("*.yaml")}
    files["perf-changelog.yaml"] = (DATA / "changelog-base" / "perf-changelog.yaml").read_text()
    # the recipe templates and fleets as they are: what `changelog matrix` renders each row
    # with to know which rows a benchmark job can launch, and for how long
    templates = REPO / "benchmarks"
    files.update({p.relative_to(REPO).as_posix(): p.read_text()
                  for p in sorted(templates.rglob("*.yaml"))})
    files["configs/fleets.yaml"] = (REPO / "configs" / "fleets.yaml").read_text()
    return files


class GitRepo:
    def __init__(self, path: Path):
        self.path = path
        path.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "-b", "main")
        self.git("config", "user.email", "tests@example.invalid")
        self.git("config", "user.name", "tests")
        self.git("config", "commit.gpgsign", "false")

    def git(self, *args: str) -> str:
        return subprocess.run(["git", "-C", str(self.path), *args], check=True,
                              capture_output=True, text=True).stdout.strip()

    def write(self, rel: str, content: str | bytes) -> None:
        target = self.path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content)

    def commit(self, message: str, files: dict[str, str | bytes] | None = None) -> str:
        for rel, content in (files or {}).items():
            self.write(rel, content)
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD")
