"""Property tests of the one YAML loader (infersweep.yamldoc): whatever the text, it either
loads or fails with a located InputError; valid mappings keep their keys' lines."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from infersweep import yamlbounds
from infersweep.diagnostics import InputError
from infersweep.yamldoc import parse_yaml

# Characters that drive YAML's grammar, so that random text reaches the parser's corners
# (indicators, anchors and aliases, tags, quotes, flow and block structure, odd breaks).
YAML_ALPHABET = st.sampled_from(list(
    ":-?[]{},&*!|>'\"%@`#\n\t \\" + "abcxyz019." + "\r\x85\u2028\ufeff\x00\x07é😀\ud800"))
YAML_TOKENS = st.sampled_from([
    "a: ", "- ", "&a ", "*a", "&b [", "*b, ", "]", "{", "}", ": ", "\n", "\n  ", "\n    ",
    "<<: ", "!!int ", "!!float ", "!!timestamp ", "!!binary ", "!!set ", "!!omap ",
    "!!python/name:os.system ", "2024-13-45", "2024-01-01", "yes", "~", "0x", "1e9999",
    "? ", "|\n  ", ">-\n ", "'", '"', "\\x", "%YAML 1.1\n---\n", "---\n", "...\n", "#c",
    ".nan", ".inf", "=", "!<tag:x> ", "!local ", "&", ":&c ", ",&c ", "*c", "\t&c ",
])
yamlish = st.lists(st.one_of(YAML_TOKENS, YAML_ALPHABET), max_size=40).map("".join)


def _assert_loads_or_located(text: str) -> None:
    try:
        parse_yaml(text, "f.yaml")
    except InputError as exc:
        assert exc.diagnostics
        for diag in exc.diagnostics:
            assert diag.path == "f.yaml"
            assert diag.line >= 1 and diag.col >= 1, diag
            assert diag.rule and diag.message


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(yamlish, st.text(max_size=200)))
@example("a: &a [*a]")
@example("a: &a {<<: *a}")
@example("a: !!timestamp foo")
@example("x: \ud800")
@example("a: \x00")
def test_arbitrary_text_loads_or_fails_located(text):
    _assert_loads_or_located(text)


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(yamlish, st.text(max_size=200)))
@example("a: {b:&x [1], c: *x}")
@example('{"a":&x [1], "b": *x}')
@example("\ufeff&x [1, *x]")
@example("- !!seq &x [1]\n- *x")
def test_a_text_without_anchor_syntax_has_no_aliases(text):
    """The shortcut that skips alias accounting is sound: libyaml builds no shared node
    from a text in which may_have_aliases finds no anchor."""
    import yaml

    if yamlbounds.may_have_aliases(text):
        return
    try:
        root = yaml.compose(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except (yaml.YAMLError, UnicodeEncodeError):
        return
    assert root is None or _count_distinct(root) == _count_nodes(root)


def _count_nodes(root) -> int:
    total, stack = 0, [root]
    while stack and total <= 10**5:  # a recursive alias would never end
        node = stack.pop()
        total += 1
        if isinstance(node.value, list):
            for part in node.value:
                stack.extend(part if isinstance(part, tuple) else (part,))
    return total


# --- valid mappings keep their data and the line and column of every key -------------------

_YAML11_WORDS = {"y", "n", "yes", "no", "on", "off", "true", "false", "null"}
keys = st.from_regex(r"[a-z][a-z0-9_-]{0,8}", fullmatch=True).filter(
    lambda k: k not in _YAML11_WORDS)
texts = st.text(st.characters(max_codepoint=0xFFFF, exclude_categories=("Cs",)), max_size=12)
scalars = st.one_of(st.integers(-10**12, 10**12), st.booleans(), st.none(), texts)
mappings = st.recursive(
    st.dictionaries(keys, st.one_of(scalars, st.lists(scalars, max_size=3)), max_size=4),
    lambda inner: st.dictionaries(keys, st.one_of(scalars, inner), min_size=1, max_size=4),
    max_leaves=20)


def _scalar(value) -> str:
    return json.dumps(value)  # JSON scalars are YAML flow scalars; strings stay double-quoted


def _emit(data: dict, indent: int, lines: list[str], pointer: tuple, where: dict) -> None:
    pad = " " * indent
    for key, value in data.items():
        where[pointer + (key,)] = (len(lines) + 1, indent + 1)
        if isinstance(value, dict) and value:
            lines.append(f"{pad}{key}:")
            _emit(value, indent + 2, lines, pointer + (key,), where)
        elif isinstance(value, list) and value:
            lines.append(f"{pad}{key}:")
            lines.extend(f"{pad}- {_scalar(item)}" for item in value)
        else:
            lines.append(f"{pad}{key}: {_scalar(value)}")


@settings(max_examples=200, deadline=None)
@given(mappings, st.integers(0, 3))
def test_valid_mappings_round_trip_with_key_lines(data, comment_lines):
    lines = ["# a comment"] * comment_lines
    where: dict[tuple, tuple[int, int]] = {}
    _emit(data, 0, lines, (), where)
    doc = parse_yaml("\n".join(lines) + "\n", "m.yaml")
    assert doc.data == (data or None)
    assert not doc.non_string_keys
    for pointer, (line, col) in where.items():
        assert doc.locate(pointer, key=True) == (line, col), pointer


@settings(max_examples=50, deadline=None)
@given(mappings.filter(bool), st.integers(0, 40))
def test_line_offset_shifts_every_key(data, offset):
    lines: list[str] = []
    where: dict[tuple, tuple[int, int]] = {}
    _emit(data, 0, lines, (), where)
    doc = parse_yaml("\n".join(lines) + "\n", "tail.yaml", line_offset=offset)
    for pointer, (line, col) in where.items():
        assert doc.locate(pointer, key=True) == (line + offset, col)


# --- the alias budget counts exactly the nodes aliases repeat -------------------------------

def _expanded(value) -> int:
    if isinstance(value, dict):
        return 1 + sum(_expanded(k) + _expanded(v) for k, v in value.items())
    if isinstance(value, list):
        return 1 + sum(_expanded(v) for v in value)
    return 1


@st.composite
def alias_documents(draw):
    """Anchored lists, each holding scalars and aliases of earlier anchors (no scalar
    anchors, so every repeated node comes from a container alias)."""
    lines = []
    for i in range(draw(st.integers(1, 6))):
        items = [str(draw(st.integers(0, 9))) for _ in range(draw(st.integers(0, 3)))]
        items += [f"*a{draw(st.integers(0, i - 1))}" for _ in range(draw(st.integers(0, 4)))
                  if i]
        lines.append(f"k{i}: &a{i} [{', '.join(draw(st.permutations(items)))}]")
    return "\n".join(lines) + "\n"


@settings(max_examples=200, deadline=None)
@given(alias_documents())
def test_alias_budget_is_exact(text):
    import yaml

    root = yaml.compose(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    data = yaml.safe_load(text)
    distinct = _count_distinct(root)
    repeated = _expanded(data) - distinct
    assert yamlbounds.measure(root, budget=repeated, max_depth=10**6) is None
    if repeated:
        v = yamlbounds.measure(root, budget=repeated - 1, max_depth=10**6)
        assert v is not None and v.rule == "yaml-alias-budget"
        mark, anchor = yamlbounds.container_alias(text, v.alias)
        assert text.splitlines()[mark.line][mark.column:].startswith(f"*{anchor}")


def _count_distinct(root) -> int:
    seen, stack = set(), [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node.value, list):
            for part in node.value:
                stack.extend(part if isinstance(part, tuple) else (part,))
    return len(seen)
