"""YAML documents that remember where every value came from.

PyYAML silently keeps the last of two equal keys; here a duplicate key is an error.
The node tree is kept beside the data so that any later error (schema, cross-field rule,
glob) can be reported at the line and column of the value it is about, without paying for
position bookkeeping on the happy path.

This is the one YAML reader of the package: every input file (master configs, runners, the
runtimes lock, changelog entries, the files `pins check` scans) comes through
:func:`parse_yaml`, which turns every way a text can fail to load into an
:class:`InputError` at a line and column: syntax, encoding, duplicate keys, values a tag
cannot construct (``2024-13-45``), and aliases that would expand too far or into themselves
(see :mod:`infersweep.yamlbounds`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from infersweep import yamlbounds
from infersweep.diagnostics import Diagnostic, InputError

_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

Pointer = tuple  # a path into the data: keys and list indexes

STR_TAG = "tag:yaml.org,2002:str"
MERGE_TAG = "tag:yaml.org,2002:merge"


class _DuplicateKey(Exception):
    def __init__(self, key, first: yaml.Mark, second: yaml.Mark):
        self.key, self.first, self.second = key, first, second


class _StrictLoader(_BaseLoader):
    """Safe loader that rejects duplicate mapping keys and records keys that are not text."""

    def __init__(self, stream):
        super().__init__(stream)
        self.non_string_keys: list[yaml.Node] = []

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            seen: dict[Any, yaml.Mark] = {}
            for key_node, _ in node.value:
                if key_node.tag != STR_TAG:
                    if key_node.tag == MERGE_TAG:
                        continue
                    self.non_string_keys.append(key_node)
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


@dataclass(frozen=True)
class NonStringKey:
    text: str  # as written
    tag: str  # what YAML made of it: int, float, bool, null, timestamp, ...
    line: int
    col: int


@dataclass
class YamlDoc:
    """Parsed YAML data plus its node tree, for locating values by pointer."""

    path: str
    data: Any
    root: yaml.Node | None
    text: str = field(repr=False, default="")
    line_offset: int = 0  # lines before ``text`` in the file (when parsing a file's tail)
    # mapping keys YAML reads as something other than text (``123:``, ``yes:``, a date)
    non_string_keys: list[NonStringKey] = field(default_factory=list, repr=False)

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
                    if _key_matches(key_node, part):
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


def _key_matches(key_node: yaml.Node, part) -> bool:
    if isinstance(part, str):
        return key_node.value == part
    if key_node.value == str(part):
        return True
    if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == STR_TAG:
        return False
    try:  # a key YAML read as a bool, null or date: compare what it was read as
        return yaml.constructor.SafeConstructor().construct_object(key_node) == part
    except Exception:  # noqa: BLE001 - not constructible: not this key
        return False


def _mark_diag(path: str, mark, offset: int, message: str, hint: str, rule: str) -> Diagnostic:
    return Diagnostic(path, mark.line + 1 + offset, mark.column + 1, message, hint, rule)


def _yaml_error(path: str, exc: yaml.YAMLError, text: str, offset: int = 0) -> Diagnostic:
    if isinstance(exc, yaml.reader.ReaderError):
        return _reader_error(path, exc, text, offset)
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
    problem = getattr(exc, "problem", None) or str(exc)
    context = getattr(exc, "context", None)
    message = f"invalid YAML: {problem}" + (f" ({context})" if context else "")
    hint = "fix the YAML syntax"
    if mark is not None and "\t" in _line(text, line):
        message = "invalid YAML: tab character where YAML allows only spaces"
        hint = "indent with spaces, never tabs"
    return Diagnostic(path, line + offset, col, message, hint, "yaml-syntax")


def _reader_error(path: str, exc, text: str, offset: int) -> Diagnostic:
    """A character YAML does not allow; libyaml gives its offset in UTF-8 bytes."""
    raw = text.encode("utf-8", "surrogatepass")
    before = raw[: max(0, exc.position)].decode("utf-8", "replace")
    line = before.count("\n") + 1
    col = len(before) - (before.rfind("\n") + 1) + 1
    char = exc.character
    what = f"#x{char:04x}" if isinstance(char, int) else repr(char)
    return Diagnostic(path, line + offset, col, f"invalid YAML: character {what} is not allowed "
                      f"({exc.reason})", "remove it, or write it as an escape inside a "
                      "double-quoted string", "yaml-syntax")


def _line(text: str, line: int) -> str:
    lines = text.splitlines()
    return lines[line - 1] if 0 < line <= len(lines) else ""


def _unencodable(path: str, text: str, offset: int) -> Diagnostic | None:
    """Text that is not valid Unicode (a lone surrogate) cannot be handed to the parser."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        before = text[: exc.start]
        line = before.count("\n") + 1
        col = exc.start - (before.rfind("\n") + 1) + 1
        return Diagnostic(path, line + offset, col, "text is not valid Unicode (an unpaired "
                          "surrogate)", "save the file as UTF-8", "encoding")
    return None


def _bounds_error(path: str, text: str, v: yamlbounds.Violation, budget: int,
                  offset: int) -> Diagnostic:
    found = yamlbounds.container_alias(text, v.alias) if v.alias is not None else None
    mark, name = found if found else (v.node.start_mark, "")
    alias = f"alias '*{name}'" if name else "an alias"
    if v.rule == "yaml-alias-recursive":
        return _mark_diag(path, mark, offset, f"{alias} refers to a node that contains it "
                          "(a recursive alias)", "an alias may only repeat a complete node "
                          "defined before it", v.rule)
    if v.rule == "yaml-alias-budget":
        return _mark_diag(path, mark, offset, f"{alias} makes aliases repeat more than "
                          f"{budget:,} nodes (the limit for a file of {len(text):,} "
                          "characters)", "write the repeated parts out, or nest aliases less "
                          "deeply: this is how a 'billion laughs' file looks", v.rule)
    where = f"{alias} nests" if v.alias is not None else "this value nests"
    return _mark_diag(path, mark, offset, f"{where} the document {v.depth} levels deep, more "
                      f"than {yamlbounds.MAX_DEPTH}", "flatten the structure", v.rule)


def _construct_error(path: str, loader_cls, root, exc: Exception, offset: int) -> Diagnostic:
    """Locate a value its tag cannot construct (``2024-13-45``, ``!!int x``) at its node."""
    if root is None:
        return Diagnostic(path, 1 + offset, 1, f"cannot read this YAML: {exc}",
                          "check the tags and values", "yaml-value")
    probe = loader_cls("")
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.ScalarNode):
            try:
                probe.construct_object(node, deep=True)
            except Exception as bad:  # noqa: BLE001 - any constructor failure is the user's value
                tag = node.tag.rsplit(":", 1)[-1]
                detail = f": {bad}" if isinstance(bad, (ValueError, OverflowError)) else ""
                return _mark_diag(path, node.start_mark, offset,
                                  f"{node.value!r} is not a valid {tag}{detail}",
                                  "quote it to keep it as text, or correct it", "yaml-value")
        elif isinstance(node, yaml.MappingNode):
            stack.extend(reversed([n for pair in node.value for n in pair]))
        else:
            stack.extend(reversed(node.value))
    mark = root.start_mark
    return _mark_diag(path, mark, offset, f"cannot read this YAML: {exc}",
                      "check the tags and values", "yaml-value")


def _non_string_keys(loader: _StrictLoader, offset: int) -> list[NonStringKey]:
    return [NonStringKey(k.value, k.tag.rsplit(":", 1)[-1], k.start_mark.line + 1 + offset,
                         k.start_mark.column + 1) for k in loader.non_string_keys]


def parse_yaml(text: str, path: str = "<string>", line_offset: int = 0) -> YamlDoc:
    """Parse one YAML document; raise :class:`InputError` with a located diagnostic.

    ``line_offset`` is the number of lines that precede ``text`` in ``path``, so that a
    file's tail can be parsed alone and still be reported at its real lines.
    """
    bad_text = _unencodable(path, text, line_offset)
    if bad_text is not None:
        raise InputError(bad_text)
    loader = _StrictLoader(text)
    root = None
    try:
        root = loader.get_single_node()
        budget = yamlbounds.alias_budget(len(text))
        violation = yamlbounds.measure(root, budget,
                                       aliases=yamlbounds.may_have_aliases(text))
        if violation is not None:
            raise InputError(_bounds_error(path, text, violation, budget, line_offset))
        data = loader.construct_document(root) if root is not None else None
    except InputError:
        raise
    except _DuplicateKey as dup:
        raise InputError(Diagnostic(
            path, dup.second.line + 1 + line_offset, dup.second.column + 1,
            f"duplicate key '{dup.key}' (first defined at line "
            f"{dup.first.line + 1 + line_offset})",
            "YAML keeps only one of them; remove or rename one", "duplicate-key")) from None
    except yaml.YAMLError as exc:
        raise InputError(_yaml_error(path, exc, text, line_offset)) from None
    except RecursionError:  # only without libyaml, whose parser stops at 1000 levels itself
        raise InputError(Diagnostic(path, 1 + line_offset, 1, "the document nests too deeply "
                                    "to read", "flatten the structure", "yaml-depth")) from None
    except Exception as exc:  # noqa: BLE001 - a safe constructor failing on the user's value
        raise InputError(_construct_error(path, _StrictLoader, root, exc, line_offset)) from None
    finally:
        loader.dispose()
    return YamlDoc(path, data, root, text, line_offset, _non_string_keys(loader, line_offset))


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
