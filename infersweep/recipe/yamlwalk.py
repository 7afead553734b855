"""Walk a parsed YAML node tree, and locate text inside a scalar at its real line and column."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import yaml

from infersweep.diagnostics import Diagnostic
from infersweep.yamldoc import YamlDoc

MERGE_TAG = "tag:yaml.org,2002:merge"


@dataclass(frozen=True)
class Scalar:
    pointer: tuple  # path to the value (for a key: path to the value it introduces)
    node: yaml.ScalarNode
    is_key: bool

    @property
    def text(self) -> str:
        return str(self.node.value)


def scalars(doc: YamlDoc) -> Iterator[Scalar]:
    """Every scalar key and value, each once per place it is reachable from (aliases included)."""
    yield from _walk(doc.root, (), set())


def _walk(node, pointer: tuple, active: set) -> Iterator[Scalar]:
    if node is None or id(node) in active:
        return
    if isinstance(node, yaml.ScalarNode):
        yield Scalar(pointer, node, False)
        return
    active = active | {id(node)}
    if isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            yield from _walk(item, pointer + (i,), active)
    elif isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if key.tag == MERGE_TAG:  # `<<: *anchor` merges into this mapping
                merged = value.value if isinstance(value, yaml.SequenceNode) else [value]
                for m in merged:
                    yield from _walk(m, pointer, active)
                continue
            if isinstance(key, yaml.ScalarNode):
                yield Scalar(pointer + (key.value,), key, True)
                yield from _walk(value, pointer + (key.value,), active)


def diag_at(doc: YamlDoc, scalar: Scalar, needle: str, message: str, hint: str = "",
            rule: str = "") -> Diagnostic:
    """A diagnostic at ``needle``'s position inside ``scalar`` (its own line in a block scalar)."""
    start, end = scalar.node.start_mark, scalar.node.end_mark
    line, col = start.line + 1, start.column + 1
    raw = doc.text[start.index:end.index] if doc.text else ""
    at = raw.find(needle) if needle else -1
    if at >= 0:
        before = doc.text[:start.index + at]
        line = before.count("\n") + 1
        col = start.index + at - (before.rfind("\n") + 1) + 1
    return Diagnostic(doc.path, line + doc.line_offset, col, message, hint, rule)
