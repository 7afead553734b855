"""docs/troubleshooting.md has a row for every rule the tools print, and no other."""

from __future__ import annotations

import re

from tests.conftest import REPO
from tests.rulenames import rule_names

SECTION = "## Every rule"


def _documented() -> list[str]:
    text = (REPO / "docs" / "troubleshooting.md").read_text()
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `([a-z0-9-]+)` \|", section, flags=re.MULTILINE)


def test_every_rule_in_the_code_can_be_read():
    assert rule_names().unresolved == []


def test_the_documented_rules_are_the_rules_in_the_code():
    code = rule_names()
    documented = _documented()
    assert len(documented) == len(set(documented)), "a rule has two rows"
    in_family = {d for d in documented if any(d.startswith(f) for f in code.families)}
    assert sorted(code.names - set(documented)) == [], "rules without a row"
    assert sorted(set(documented) - code.names - in_family) == [], "rows for no rule"
    for family in code.families:
        assert any(d.startswith(family) for d in documented), f"no row for {family}*"
