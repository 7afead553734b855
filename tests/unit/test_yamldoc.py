"""The YAML loader's limits and located failures: alias bombs, recursive aliases, depth,
values a tag cannot construct, characters YAML forbids, and keys that are not text."""

from __future__ import annotations

import pytest

from infersweep import yamlbounds
from infersweep.diagnostics import InputError
from infersweep.yamldoc import load_yaml, parse_yaml


def _laughs(levels: int, width: int = 9) -> str:
    names = "abcdefghij"
    lines = ["a: &a [" + ",".join(["lol"] * width) + "]"]
    for i in range(1, levels):
        lines.append(f"{names[i]}: &{names[i]} [" + ",".join([f"*{names[i - 1]}"] * width) + "]")
    return "\n".join(lines) + "\n"


def _error(text: str, path: str = "f.yaml", **kw):
    with pytest.raises(InputError) as exc:
        parse_yaml(text, path, **kw)
    (diag,) = exc.value.diagnostics
    return diag


def test_billion_laughs_is_refused_at_the_alias_that_exceeds_the_budget():
    text = _laughs(10)  # 9**10 strings from about 400 bytes
    assert len(text) < 500
    diag = _error(text)
    assert diag.rule == "yaml-alias-budget"
    line = text.splitlines()[diag.line - 1]
    assert line[diag.col - 1:].startswith("*")
    assert "billion laughs" in diag.hint and "10,000 nodes" in diag.message


def test_reuse_within_the_budget_loads_and_keeps_shared_values():
    text = "base: &b {tp: 8, ep: 1}\n" + "".join(f"k{i}: *b\n" for i in range(50))
    doc = parse_yaml(text)
    assert doc.data["k49"] == {"tp": 8, "ep": 1}


def test_budget_grows_with_the_file_and_is_capped():
    assert yamlbounds.alias_budget(10) == yamlbounds.ALIAS_NODES_FLOOR
    assert yamlbounds.alias_budget(50_000) == 500_000
    assert yamlbounds.alias_budget(10**9) == yamlbounds.ALIAS_NODES_CAP


@pytest.mark.parametrize(("text", "line", "col"), [
    ("a: &a [*a]\n", 1, 8),
    ("a: &a\n  b: *a\n", 2, 6),
    ("a: &a {<<: *a}\n", 1, 12),  # a merge key that merges itself
    ("x: 1\nl: &l\n- 1\n- [2, *l]\n", 4, 7),
])
def test_recursive_alias_is_refused_at_the_alias(text, line, col):
    diag = _error(text)
    assert (diag.rule, diag.line, diag.col) == ("yaml-alias-recursive", line, col)
    assert "'*" in diag.message


def test_deep_alias_chain_is_refused_not_a_traceback():
    lines = ["a0: &a0 [x]"] + [f"a{i}: &a{i} [*a{i - 1}]" for i in range(1, 3000)]
    diag = _error("\n".join(lines) + "\n")
    assert diag.rule == "yaml-depth"
    assert diag.line == yamlbounds.MAX_DEPTH  # a62 nested in a63: 65 levels under the root
    assert "more than 64" in diag.message


def test_deep_plain_nesting_is_refused_at_the_first_level_too_deep():
    diag = _error("a: " + "[" * 500 + "]" * 500 + "\n")
    assert (diag.rule, diag.line, diag.col) == ("yaml-depth", 1, 4 + 63)


def test_depth_at_the_limit_loads():
    depth = yamlbounds.MAX_DEPTH - 1  # the root mapping is the first level
    doc = parse_yaml("a: " + "[" * depth + "]" * depth + "\n")
    assert doc.data["a"] is not None


def test_errors_keep_the_line_offset_of_a_tail():
    diag = _error("- a: &a [*a]\n", line_offset=100)
    assert diag.line == 101


@pytest.mark.parametrize(("text", "fragment"), [
    ("n: 2024-13-45\n", "'2024-13-45' is not a valid timestamp: month must be in 1..12"),
    ("n: !!int\n", "'' is not a valid int"),
    ("n: !!float abc\n", "'abc' is not a valid float"),
    ("n: !!timestamp soon\n", "'soon' is not a valid timestamp"),
])
def test_value_its_tag_cannot_construct_is_located(text, fragment):
    diag = _error(text)
    assert (diag.rule, diag.line, diag.col) == ("yaml-value", 1, 4)
    assert fragment in diag.message
    assert "quote it" in diag.hint


def test_forbidden_character_is_located_by_character_not_byte():
    diag = _error("a: 1\nb: ééé\x07\n")
    assert (diag.line, diag.col, diag.rule) == (2, 7, "yaml-syntax")
    assert "#x0007" in diag.message


def test_unpaired_surrogate_is_an_encoding_error():
    diag = _error("a: 1\nb: x\ud800\n")
    assert (diag.line, diag.col, diag.rule) == (2, 5, "encoding")


def test_non_string_keys_are_recorded_where_they_are():
    doc = parse_yaml("ok: 1\n123: a\nyes: b\n2024-01-01: c\n~: d\n'quoted': e\n<<: {m: 1}\n")
    found = [(k.text, k.tag, k.line, k.col) for k in doc.non_string_keys]
    assert found == [("123", "int", 2, 1), ("yes", "bool", 3, 1),
                     ("2024-01-01", "timestamp", 4, 1), ("~", "null", 5, 1)]


def test_file_reader_errors(tmp_path):
    bad = tmp_path / "x.yaml"
    bad.write_bytes(b"a: 1\nb: \xff\n")
    with pytest.raises(InputError, match=r"x.yaml:2:1: \[encoding\]"):
        load_yaml(bad)


def test_every_yaml_read_in_the_package_goes_through_yamldoc():
    """One loader, so that its limits protect every input: master configs, runners, the
    runtimes lock, changelog entries, the files `pins check` scans."""
    import re
    from pathlib import Path

    import infersweep

    package = Path(infersweep.__file__).parent
    direct = re.compile(r"yaml\.(safe_load|load|full_load|unsafe_load|compose|parse)\b"
                        r"|CSafeLoader|yaml\.SafeLoader")
    offenders = [f"{p.relative_to(package)}:{n}" for p in sorted(package.rglob("*.py"))
                 if p.name not in ("yamldoc.py", "yamlbounds.py")
                 for n, line in enumerate(p.read_text().splitlines(), start=1)
                 if direct.search(line)]
    assert offenders == []


def test_pins_scan_of_an_alias_bomb_returns_at_once():
    from infersweep.pins.check import scan_yaml

    class Report:
        references: list = []
        problems: list = []

    scan_yaml("bomb.yaml", _laughs(10), [], "configs/runtimes.yaml", Report())
    assert Report.references == [] and Report.problems == []
