"""Config keys have one charset, the one every key of InferenceX's catalogs fits."""

from __future__ import annotations

import pytest

from infersweep.config.keycharset import key_problem, shown
from infersweep.yamldoc import load_yaml
from tests.conftest import INFERENCEX, shared_absent


def test_every_inferencex_key_fits_the_charset():
    catalogs = sorted((INFERENCEX / "configs").glob("*-master.yaml"))
    if not catalogs:
        shared_absent(f"InferenceX's catalogs ({INFERENCEX / 'configs'}) are not present")
    keys = [key for path in catalogs for key in load_yaml(path).data]
    assert len(keys) > 100
    assert [k for k in keys if key_problem(k)] == []


@pytest.mark.parametrize("key", ["dsv4-fp4-mi355x-atom", "glm5.1-fp8-b200-tilert", "cfg",
                                 "70b-fp8-h100-vllm", "a" * 100])
def test_keys_in_the_charset(key):
    assert key_problem(key) is None


@pytest.mark.parametrize("key, said", [
    ("cfg-$(id)", "'$', '(', ')'"), ("cfg;rm -rf ~", "';', ' ', '~'"),
    ("<img src=x onerror=alert(1)>", "'<'"), ("@maya", "'@'"),
    ("../../../../tmp/evil", "'/'"), ("cfg\x1b[0m", None), ("cfg\nx", "'\\n'"),
    ("Cfg", "'C'"), ("cfg_2", "'_'"), ("-cfg", "begin with a letter or digit"),
    ("a" * 101, "longer than 100"), ("dsv4-\u0663", "'\u0663'"), ("caf\u00e9", "'\u00e9'"),
])
def test_keys_outside_the_charset(key, said):
    problem = key_problem(key)
    if said is None:  # '[' is a glob character: the schema reports it
        assert problem is None
        return
    assert problem is not None and said in problem
    assert all(c.isprintable() for c in problem)


def test_shown_escapes_control_characters():
    assert shown("a\x1b[31mb\r\n") == "a\\x1b[31mb\\r\\n"
    assert shown("x" * 100, 10) == "xxxxxxx..."
