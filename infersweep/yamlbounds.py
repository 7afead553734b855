"""Bounds on what a YAML node graph may expand to: alias repetition and nesting depth.

PyYAML builds an alias as a second reference to the anchored node, so a few hundred bytes of
nested aliases (a "billion laughs" file) load quickly but make every later consumer (schema
validation, JSON output, a recursive walk) visit billions of nodes; a recursive alias makes
them loop forever. The graph is measured before it is constructed, with the size every alias
would stand for, and refused past a budget that grows with the file.

A normal file is settled by one cheap pass (a plain tree, not too deep). Otherwise the full
measure visits container nodes in document order, so the first visit of a node is its
anchor and every later visit is an alias; the k-th such revisit is the k-th alias event of
the file, which is how an error is put on the alias's own line and column (the composed
graph keeps no mark for aliases, and the parser's events are read only on that error path).
"""

from __future__ import annotations

from dataclasses import dataclass

import yaml

# Deeper than any config; far below what a recursive consumer (jsonschema, json) can take.
MAX_DEPTH = 64
# Nodes that aliases may repeat: ALIAS_NODES_PER_CHAR per character of the file, at least
# ALIAS_NODES_FLOOR (room for a small file that reuses a block a few times) and at most
# ALIAS_NODES_CAP (what schema validation gets through in a second or two).
ALIAS_NODES_PER_CHAR = 10
ALIAS_NODES_FLOOR = 10_000
ALIAS_NODES_CAP = 1_000_000

_SCALAR = yaml.ScalarNode
_MAPPING = yaml.MappingNode


def alias_budget(size: int) -> int:
    """How many nodes aliases may repeat in a document of ``size`` characters."""
    return min(ALIAS_NODES_CAP, max(ALIAS_NODES_FLOOR, ALIAS_NODES_PER_CHAR * size))


@dataclass(frozen=True)
class Violation:
    """Why the graph is refused. ``alias`` is the 0-based index of the offending alias
    among the aliases of container nodes in document order (None: plain nesting at ``node``)."""

    rule: str  # yaml-alias-budget | yaml-alias-recursive | yaml-depth
    alias: int | None
    node: yaml.Node
    produced: int = 0  # nodes repeated through aliases, when the budget ran out
    depth: int = 0  # nesting depth reached, for yaml-depth


# Where an anchor (``&name``) can start: at the start of the text or of a line, or after a
# blank, a flow indicator or the ':' of a flow pair. Anything else with '&' in it (``TP & EP``
# in a comment, ``?a=1&b=2`` in a URL) cannot be one; a text with no match has no anchors,
# hence no aliases (an alias of an undefined anchor is a syntax error), and only its depth
# needs checking.
_BEFORE_ANCHOR = frozenset(" \t\r\n\x85\u2028\u2029\ufeff[]{},:")
_NOT_IN_ANCHOR = frozenset(" \t\r\n\x85\u2028\u2029\ufeff[]{},")


def may_have_aliases(text: str) -> bool:
    """False only when no '&' in ``text`` can start an anchor (checked per '&': a regular
    expression over the whole text costs more than the rest of the bound)."""
    at = text.find("&")
    while at != -1:
        after = text[at + 1: at + 2]
        if (at == 0 or text[at - 1] in _BEFORE_ANCHOR) and after and after not in _NOT_IN_ANCHOR:
            return True
        at = text.find("&", at + 1)
    return False


def _children(node) -> list:
    if node.__class__ is _MAPPING:
        return [part for pair in node.value for part in pair]
    return node.value


def measure(root: yaml.Node | None, budget: int, max_depth: int = MAX_DEPTH, *,
            aliases: bool = True) -> Violation | None:
    """The first violation in document order, or None when the graph is within bounds.

    A normal file is a plain tree within the depth, which one cheap pass establishes (it
    tracks node identity only when the text may have aliases, see :func:`may_have_aliases`);
    only a graph with shared nodes or too deep is measured in full.
    """
    if root is None or root.__class__ is _SCALAR:
        return None
    if _plain_tree_within(root, max_depth, track_shared=aliases):
        return None
    return _measure_graph(root, budget, max_depth)


def _measure_graph(root: yaml.Node, budget: int, max_depth: int) -> Violation | None:
    done: dict[int, tuple[int, int]] = {}  # id -> (expanded node count, expanded depth)
    open_: set[int] = set()
    produced = 0
    aliases = 0
    # (node, level of the node, exiting?)
    stack: list[tuple[yaml.Node, int, bool]] = [(root, 1, False)]
    while stack:
        node, level, exiting = stack.pop()
        nid = id(node)
        if exiting:
            open_.discard(nid)
            size, depth = 1, 0
            for child in _children(node):
                if child.__class__ is _SCALAR:
                    size += 1
                else:
                    s, d = done[id(child)]
                    size += s
                    depth = max(depth, d)
            done[nid] = (size, depth + 1)
            continue
        if nid in open_:
            return Violation("yaml-alias-recursive", aliases, node)
        seen = done.get(nid)
        if seen is not None:  # an alias of a node already complete
            size, depth = seen
            produced += size
            if produced > budget:
                return Violation("yaml-alias-budget", aliases, node, produced=produced)
            if level - 1 + depth > max_depth:
                return Violation("yaml-depth", aliases, node, depth=level - 1 + depth)
            aliases += 1
            continue
        if level > max_depth:
            return Violation("yaml-depth", None, node, depth=level)
        open_.add(nid)
        stack.append((node, level, True))
        for child in reversed(_children(node)):
            if child.__class__ is not _SCALAR:
                stack.append((child, level + 1, False))
    return None


def _plain_tree_within(root: yaml.Node, max_depth: int, track_shared: bool) -> bool:
    """True when no container is deeper than ``max_depth`` and (with ``track_shared``) none
    is reached twice. Order does not matter here: any finding leads to the full measure."""
    seen: set[int] | None = set() if track_shared else None
    stack = [(root, 1)]
    pop, push = stack.pop, stack.append
    while stack:
        node, level = pop()
        if level > max_depth:
            return False
        if seen is not None:
            nid = id(node)
            if nid in seen:
                return False
            seen.add(nid)
        level += 1
        if node.__class__ is _MAPPING:
            for key, value in node.value:
                if value.__class__ is not _SCALAR:
                    push((value, level))
                if key.__class__ is not _SCALAR:
                    push((key, level))
        else:
            for value in node.value:
                if value.__class__ is not _SCALAR:
                    push((value, level))
    return True


def container_alias(text: str, index: int, loader=None) -> tuple[yaml.Mark, str] | None:
    """(mark, anchor name) of the ``index``-th alias of a container node in ``text``."""
    loader = loader or getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    containers: dict[str, bool] = {}  # anchor -> anchors a container (latest definition)
    seen = 0
    try:
        for event in yaml.parse(text, Loader=loader):
            if isinstance(event, yaml.AliasEvent):
                if containers.get(event.anchor, False):
                    if seen == index:
                        return event.start_mark, event.anchor
                    seen += 1
            elif isinstance(event, yaml.NodeEvent) and event.anchor is not None:
                containers[event.anchor] = isinstance(event, yaml.CollectionStartEvent)
    except yaml.YAMLError:
        return None
    return None
