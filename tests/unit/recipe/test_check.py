"""`recipe check`: the shipped templates pass, rendered recipes pass, and each kind of mistake
is reported at its line and column."""

from __future__ import annotations

import re

import pytest

from infersweep.recipe.check import check, kind_of
from infersweep.recipe.template import row_fields
from infersweep.yamldoc import parse_yaml
from tests.unit.recipe.conftest import TEMPLATES

SHIPPED = sorted(TEMPLATES.glob("*.yaml"))


def test_shipped_templates_pass(run_cli):
    # live files: only what holds for any valid content (a new template must pass too)
    assert len(SHIPPED) >= 2
    code, out, err = run_cli("recipe", "check", *SHIPPED)
    assert (code, out, err) == (0, f"ok: {len(SHIPPED)} template(s), 0 recipe(s)\n", "")


def test_without_files_every_template_and_catalog_row_is_checked(run_cli, frozen_repo):
    code, out, err = run_cli("recipe", "check", "--repo", frozen_repo)
    assert (code, err) == (0, "")
    match = re.fullmatch(r"ok: (\d+) template\(s\), 0 recipe\(s\), (\d+) catalog row\(s\) "
                         r"render\n", out)
    assert match, out
    # the multi-node templates and framework defaults (the single-node ones are checked when
    # their rows render)
    assert int(match[1]) == len(sorted((TEMPLATES.parents[2]).rglob("*.yaml")))
    assert int(match[2]) >= 2  # at least the seed config's 1P1D and 2P1D rows


def test_rendered_recipes_pass(run_cli, tmp_path, dsv4_rows, repo_root):
    import json
    for i, row in enumerate(dsv4_rows):
        code, _, err = run_cli("recipe", "render", "--row", json.dumps(row), "--repo",
                               repo_root, "--output", tmp_path / f"r{i}.yaml")
        assert code == 0, err
    code, out, _ = run_cli("recipe", "check", tmp_path / "r0.yaml", tmp_path / "r1.yaml")
    assert (code, out) == (0, "ok: 0 template(s), 2 recipe(s)\n")


def test_reference_recipes_fail_the_v1_atom_schema(run_cli, reference):
    code, _, err = run_cli("recipe", "check", *sorted(reference.glob("atom_*.yaml")))
    assert code == 1
    assert "'type' is \"infera\", expected one of \"atomesh\", \"atom\"" in err
    assert "unknown key 'enable_kv_events' in backend" in err
    assert err.count("[recipe-concurrency] the benchmark command loops over concurrencies") == 2


def _diags(text: str, kind: str = "auto"):
    doc = parse_yaml(text, "t.yaml")
    return check(doc, kind)


BASE = """\
name: t
model: {path: "hf:{{ row.model }}", container: "{{ row.image }}", precision: fp4}
resources:
  gpu_type: mi355x
  gpus_per_node: 8
  prefill_nodes: 1
  decode_nodes: 1
  prefill_workers: 1
  decode_workers: 1
frontend: {type: atomesh}
backend:
  type: atom
  atom_config:
    prefill: {block-size: 16}
    decode: {block-size: 16}
"""


def test_minimal_template_is_clean():
    assert _diags(BASE) == ("template", [])


@pytest.mark.parametrize("edit,where,rule,fragment", [
    (("  decode_workers: 1\n", "  decode_workers: 1\n  gpus_per_decode: 16\n"), (10, 20),
     "topology", "a decode worker needs 16 GPUs but a node has 8"),
    (("  prefill_workers: 1\n", "  prefill_workers: 3\n"), (8, 20), "topology",
     "do not split evenly into 3 prefill workers"),
    (("  gpus_per_node: 8\n", "  gpus_per_node: 8\n  agg_nodes: 1\n"), (6, 3), "topology",
     "either disaggregated"),
    (("frontend: {type: atomesh}", "frontend: {type: atomesh, args: {backend: atom}}"),
     (10, 34), "schema", "'backend' is managed by srtctl"),
    (("    prefill: {block-size: 16}", "    prefill: {block-size: 16, kv-transfer-config: x}"),
     (14, 31), "schema", "'kv-transfer-config' is managed by srtctl"),
    (("  type: atom\n", "  type: atom\n  connector: nixl\n"), (13, 14), "schema",
     "'connector' must be \"mooncake\""),
    (("  type: atom\n", "  type: atom\n  mooncake_protocol: udp\n"), (13, 22), "schema",
     "expected one of \"rdma\", \"tcp\", null"),
    (("name: t\n", "name: t\nslurm: {time_limit: 8h}\n"), (2, 21), "schema",
     "'time_limit' is \"8h\""),
])
def test_mistakes_are_located(edit, where, rule, fragment):
    kind, diags = _diags(BASE.replace(*edit))
    assert kind == "template"
    assert [(d.line, d.col, d.rule) for d in diags] == [(*where, rule)], diags
    assert fragment in diags[0].message


def test_kind_detection():
    assert kind_of(parse_yaml(BASE, "t")) == "template"
    rendered = BASE.replace("{{ row.model }}", "m").replace("{{ row.image }}", "i")
    rendered += "benchmark: {type: custom, command: run}\n"
    assert kind_of(parse_yaml(rendered, "t")) == "recipe"
    assert _diags(rendered) == ("recipe", [])


def test_recipe_without_benchmark_is_incomplete():
    rendered = BASE.replace("{{ row.model }}", "m").replace("{{ row.image }}", "i")
    kind, diags = _diags(rendered, "recipe")
    assert [d.message for d in diags] == ["missing required key 'benchmark' in the document"]


def test_placeholders_know_the_row_fields():
    fields = row_fields()
    assert {"image", "model", "precision", "router.version", "isl", "osl",
            "max-model-len", "prefill.tp"} <= set(fields)
    kind, diags = _diags(BASE.replace("{{ row.image }}", "{{ row.prefill.additional-settings }}"))
    assert [d.message for d in diags] == ["'prefill.additional-settings' is not a single value"]


@pytest.mark.parametrize("edit,where,message,hint", [
    (("  gpus_per_node: 8\n", "  gpus_per_node: 8.0\n"), (5, 18),
     "'gpus_per_node' must be an integer, got 8.0", "write 8"),
    (("frontend: {type: atomesh}", "frontend: {type: atomesh, env: {1ST: x}}"), (10, 33),
     'key "1ST" is not a valid name in frontend.env', "an environment variable name"),
    (("frontend: {type: atomesh}", "frontend: {type: atomesh, args: {policy: {a: 1}}}"),
     (10, 42), "'policy' must be a string, number, true/false, or a list of them, got",
     ""),
    (("    prefill: {block-size: 16}", "    prefill: {block-size: 16, server_port: 1}"),
     (14, 31), "'server_port' is managed by srtctl and cannot be set in "
     "backend.atom_config.prefill", "srtctl sets model, host, server-port"),
    (("name: t\n", "name: t\nsbatch_directives: {no_requeue: ''}\n"), (2, 21),
     'key "no_requeue" is not a valid name in sbatch_directives', "letters, digits and '-'"),
    (("name: t\n", "name: t\nenvironment: {yes: '1'}\n"), (2, 15),
     "key yes is read as true or false", "quote it"),
])
def test_recipe_wording_comes_from_the_schema(edit, where, message, hint):
    """Names srtctl reserves, variable names and flag values are worded by schema annotations;
    whole numbers and key types are checked as in every other file."""
    _, diags = _diags(BASE.replace(*edit))
    assert [(d.line, d.col) for d in diags] == [where], diags
    assert message in diags[0].message
    assert hint in diags[0].hint
