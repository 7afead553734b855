"""YAML documents that remember where every value came from.

PyYAML silently keeps the last of two equal keys; here a duplicate key is an error.
The node tree is kept beside the data so that any later error (schema, cross-field rule,
glob) can be reported at the line and column of the value it is about, without paying for
position bookkeeping on the happy path.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from infersweep.diagnostics import Diagnostic, InputError

_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

Pointer = tuple  # a path into the data: keys and list indexes


class _DuplicateKey(Exception):
    def __init__(self, key, first: yaml.Mark, second: yaml.Mark):
        self.key, self.first, self.second = key, first, second


class _StrictLoader(_BaseLoader):
    """Safe loader that rejects duplicate mapping keys."""

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            seen: dict[Any, yaml.Mark] = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    first = seen.get(key)
                except TypeError:
                    continue  # unhashable key: let the base constructor report it
                if first is not None:
                    raise _DuplicateKey(key, first, key_node.start_mark)
                seen[key] = key_node.start_mark
        return super().construct_mapping(node, deep=deep)


_StrictLoader.add_constructor(
    "tag:yaml.org,2002:map",
    lambda loader, node: _construct_map(loader, node),
)


def _construct_map(loader: _StrictLoader, node):
    data: dict = {}
    yield data
    data.update(loader.construct_mapping(node))


@dataclass
class YamlDoc:
    """Parsed YAML data plus its node tree, for locating values by pointer."""

    path: str
    data: Any
    root: yaml.Node | None
    text: str = field(repr=False, default="")
    line_offset: int = 0  # lines before ``text`` in the file (when parsing a file's tail)

    def locate(self, pointer: Pointer, *, key: bool = False) -> tuple[int, int]:
        """(line, col), 1-based, of the value at ``pointer`` (or its key, with ``key=True``).

        Falls back to the deepest existing ancestor when the pointer does not exist
        (for instance a missing required field is reported at its parent mapping).
        """
        line, col = self._locate(pointer, key)
        return (line + self.line_offset, col)

    def _locate(self, pointer: Pointer, key: bool) -> tuple[int, int]:
        node = self.root
        if node is None:
            return (1, 1)
        mark = node.start_mark
        for part in pointer:
            if isinstance(node, yaml.MappingNode):
                for key_node, value_node in node.value:
                    if key_node.value == str(part) or key_node.value == part:
                        mark = key_node.start_mark if key else value_node.start_mark
                        node = value_node
                        break
                else:
                    break
            elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
                if 0 <= part < len(node.value):
                    node = node.value[part]
                    mark = node.start_mark
                else:
                    break
            else:
                break
        return (mark.line + 1, mark.column + 1)

    def diag(self, pointer: Pointer, message: str, hint: str = "", *, rule: str = "",
             key: bool = False) -> Diagnostic:
        line, col = self.locate(pointer, key=key)
        return Diagnostic(self.path, line, col, message, hint, rule)


def _yaml_error(path: str, exc: yaml.YAMLError, text: str, offset: int = 0) -> Diagnostic:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    line, col = (mark.line + 1, mark.column + 1) if mark else (0, 0)
    problem = getattr(exc, "problem", None) or str(exc)
    context = getattr(exc, "context", None)
    message = f"invalid YAML: {problem}" + (f" ({context})" if context else "")
    hint = "fix the YAML syntax"
    if mark is not None and "\t" in _line(text, line):
        message = "invalid YAML: tab character where YAML allows only spaces"
        hint = "indent with spaces, never tabs"
    return Diagnostic(path, line + offset if line else 0, col, message, hint, "yaml-syntax")


def _line(text: str, line: int) -> str:
    lines = text.splitlines()
    return lines[line - 1] if 0 < line <= len(lines) else ""


def parse_yaml(text: str, path: str = "<string>", line_offset: int = 0) -> YamlDoc:
    """Parse one YAML document; raise :class:`InputError` with a located diagnostic.

    ``line_offset`` is the number of lines that precede ``text`` in ``path``, so that a
    file's tail can be parsed alone and still be reported at its real lines.
    """
    loader = _StrictLoader(text)
    try:
        root = loader.get_single_node()
        data = loader.construct_document(root) if root is not None else None
    except _DuplicateKey as dup:
        raise InputError(Diagnostic(
            path, dup.second.line + 1 + line_offset, dup.second.column + 1,
            f"duplicate key '{dup.key}' (first defined at line "
            f"{dup.first.line + 1 + line_offset})",
            "YAML keeps only one of them; remove or rename one", "duplicate-key")) from None
    except yaml.YAMLError as exc:
        raise InputError(_yaml_error(path, exc, text, line_offset)) from None
    finally:
        loader.dispose()
    return YamlDoc(path, data, root, text, line_offset)


def load_yaml(path: str | Path) -> YamlDoc:
    p = Path(path)
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        raise InputError(Diagnostic(str(path), 0, 0, "file not found",
                                    "check the path", "io")) from None
    except OSError as exc:
        raise InputError(Diagnostic(str(path), 0, 0, f"cannot read file: {exc.strerror}",
                                    rule="io")) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InputError(Diagnostic(str(path), line, 1, "file is not valid UTF-8",
                                    "save the file as UTF-8", "encoding")) from None
    return parse_yaml(text, str(path))
