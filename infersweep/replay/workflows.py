"""What a replay needs to know from workflow files: every ``uses:`` (with its line) and every
``runs-on`` label, following local reusable workflows.

Read from the YAML node tree (not the data) for two reasons: the line of each value
is kept, for messages that point into the file, and the key ``on`` stays the string ``on``
instead of YAML 1.1's ``True``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from infersweep.yamldoc import load_yaml

LOCAL_WORKFLOW = re.compile(r"\./\.github/workflows/[^@\s]+\.ya?ml")
# owner/repo[/path]@ref: a remote action or reusable workflow
REMOTE = re.compile(r"(?P<owner>[\w.-]+)/(?P<repo>[\w.-]+)(?P<path>/[^@\s]*)?@(?P<ref>\S+)")
FULL_SHA = re.compile(r"[0-9a-f]{40}")
EXPRESSION = re.compile(r"\$\{\{.*?\}\}")


@dataclass(frozen=True)
class Use:
    """One ``uses:`` value: ``file`` relative to the folder it was found under, 1-based line,
    ``kind`` ``step`` or ``job`` (a called workflow)."""

    file: str
    line: int
    text: str
    kind: str

    @property
    def remote(self) -> re.Match | None:
        return REMOTE.fullmatch(self.text)

    @property
    def repository_ref(self) -> str | None:
        """``owner/repo@ref`` (a path inside the repository dropped), or None when local."""
        m = self.remote
        return f"{m['owner']}/{m['repo']}@{m['ref']}" if m else None


def _map_items(node):
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode):
                yield key.value, value


def _get(node, key):
    for name, value in _map_items(node):
        if name == key:
            return value
    return None


def compose(path: Path):
    """The node tree of one YAML file (None for an empty file), through the project's one
    YAML loader (duplicate keys and syntax errors reported at file:line:col)."""
    return load_yaml(path).root


def uses_in_file(path: Path, rel: str) -> list[Use]:
    """Every ``jobs.*.uses`` and ``jobs.*.steps[*].uses`` of a workflow file, or every
    ``runs.steps[*].uses`` of a composite action's ``action.yml``."""
    root = compose(path)
    found: list[Use] = []

    def add(node, kind):
        if isinstance(node, yaml.ScalarNode):
            found.append(Use(rel, node.start_mark.line + 1, node.value.strip(), kind))

    def steps(node):
        if isinstance(node, yaml.SequenceNode):
            for step in node.value:
                add(_get(step, "uses"), "step")

    for _, job in _map_items(_get(root, "jobs")):
        add(_get(job, "uses"), "job")
        steps(_get(job, "steps"))
    steps(_get(_get(root, "runs"), "steps"))
    return found


def workflow_files(directory: Path) -> list[Path]:
    return sorted(p for p in Path(directory).iterdir()
                  if p.suffix in (".yml", ".yaml") and p.is_file())


def uses_in_workflows(directory: str | Path) -> list[Use]:
    """Every ``uses:`` in the workflow files of ``directory`` (``.github/workflows``)."""
    directory = Path(directory).resolve()
    # .github/workflows/x.yml when the folder is a repository's, else <folder>/x.yml
    prefix = (f".github/{directory.name}" if directory.parent.name == ".github"
              else directory.name)
    found: list[Use] = []
    for path in workflow_files(directory):
        found.extend(uses_in_file(path, f"{prefix}/{path.name}"))
    return found


def reachable_workflows(workflow: Path, repo_dir: Path) -> list[Path]:
    """``workflow`` and every local workflow it calls (``uses: ./.github/workflows/X.yml``),
    transitively, in the order first met."""
    seen: list[Path] = []
    todo = [Path(workflow)]
    while todo:
        path = todo.pop(0).resolve()
        if path in seen or not path.is_file():
            continue
        seen.append(path)
        for use in uses_in_file(path, path.name):
            if use.kind == "job" and LOCAL_WORKFLOW.fullmatch(use.text):
                todo.append(repo_dir / use.text)
    return seen


def runs_on_labels(paths: list[Path]) -> list[str]:
    """The literal ``runs-on`` labels of the jobs in ``paths`` (a string or a list of
    strings; values that are expressions are left out: they come from inputs or a matrix)."""
    labels: list[str] = []
    for path in paths:
        for _, job in _map_items(_get(compose(path), "jobs")):
            node = _get(job, "runs-on")
            values = ([node] if isinstance(node, yaml.ScalarNode)
                      else node.value if isinstance(node, yaml.SequenceNode) else [])
            for value in values:
                if (isinstance(value, yaml.ScalarNode) and value.value
                        and not EXPRESSION.search(value.value) and value.value not in labels):
                    labels.append(value.value)
    return labels
