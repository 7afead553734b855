"""Fresh prompts for every run and every point unless a seed is given (issue 9): the seed's
derivation, the client's options, and the executors that hand the run to the client."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from infersweep.bench import dataset, seeds
from infersweep.bench.runner import BenchArgs, resolve_seed
from infersweep.config.catalog import load_catalog
from infersweep.matrix.generate import Selection, generate_keyed
from infersweep.recipe.render import render_row
from infersweep.rowjobs import local
from infersweep.rowjobs.executor import Provenance
from infersweep.rowjobs.jobtag import JobTag
from infersweep.rowjobs.recipes import tag_recipe
from tests.conftest import REPO

POINT = BenchArgs(model="m", random_input_len=64, random_output_len=16, num_prompts=40,
                  max_concurrency=4, result_filename="recipe-c4.json")


def prompts(a: BenchArgs) -> list[list[int]]:
    plan = dataset.make_plan(a.num_prompts, a.random_input_len, a.random_output_len,
                             a.random_range_ratio, resolve_seed(a).value)
    return [dataset.token_ids(plan, i).tolist() for i in range(len(plan))]


def test_two_points_of_one_run_send_different_prompts():
    a = replace(POINT, run_id="run-7-a1")
    b = replace(a, max_concurrency=8, num_prompts=80, result_filename="recipe-c8.json")
    sa, sb = resolve_seed(a), resolve_seed(b)
    assert sa.origin == sb.origin == "run" and sa.value != sb.value
    first_a, first_b = prompts(a), prompts(b)[:40]
    assert not any(p == q for p in first_a for q in first_b)


def test_the_same_point_of_another_run_sends_different_prompts():
    assert resolve_seed(replace(POINT, run_id="run-7-a1")).value != \
        resolve_seed(replace(POINT, run_id="run-7-a2")).value
    assert prompts(replace(POINT, run_id="r1")) != prompts(replace(POINT, run_id="r2"))


def test_the_same_run_and_point_derive_the_same_seed_and_it_reruns_exactly():
    a = replace(POINT, run_id="run-7-a1")
    s = resolve_seed(a)
    assert resolve_seed(a) == s
    assert s.describe() == {"seed": s.value, "seed_origin": "run", "run_id": "run-7-a1",
                            "point": s.point}
    assert "concurrency=4" in s.point and "file=recipe-c4.json" in s.point
    # the recorded seed, given back with --seed, sends exactly those prompts
    again = replace(POINT, seed=s.value, run_id=None)
    assert resolve_seed(again).origin == "option" and prompts(again) == prompts(a)


def test_without_run_id_every_invocation_is_fresh():
    one, two = resolve_seed(POINT), resolve_seed(POINT)
    assert one.origin == two.origin == "random" and one.run_id != two.run_id
    assert one.value != two.value


def test_an_explicit_seed_gives_the_prompts_it_always_gave():
    """A result that recorded seed 0 (the old default) or any seed reruns unchanged: the
    seed reaches the plan as given, whatever the run or point."""
    for seed in (0, 7, 4_000_000_000):
        a = replace(POINT, seed=seed, run_id="any-run")
        assert resolve_seed(a).value == seed
        plan = dataset.make_plan(40, 64, 16, 1.0, seed)
        old = np.random.default_rng([seed, 2, 0]).integers(0, dataset.DEFAULT_VOCAB, size=40)
        assert np.array_equal(plan.offsets, old)
        assert resolve_seed(replace(a, max_concurrency=64)).value == seed


def test_derived_seeds_fit_one_word_and_the_pure_generator_agrees():
    from infersweep.bench import seeded

    values = {seeds.derive(f"run-{k}", "p") for k in range(200)}
    assert len(values) == 200 and all(0 <= v < 2**32 for v in values)
    v = max(values)
    pure = seeded.Generator([v, 2, 0]).integers(0, 32000, 20)
    assert list(pure) == np.random.default_rng([v, 2, 0]).integers(0, 32000, 20).tolist()


def test_run_id_option_and_environment(run_cli, monkeypatch):
    seen = []
    monkeypatch.delenv(seeds.RUN_ID_ENV, raising=False)
    monkeypatch.setattr("infersweep.bench.runner.run", lambda a: seen.append(a) or 0)
    assert run_cli("bench", "serve", "--model", "m")[0] == 0
    monkeypatch.setenv(seeds.RUN_ID_ENV, "from-env")
    assert run_cli("bench", "serve", "--model", "m")[0] == 0
    assert run_cli("bench", "serve", "--model", "m", "--run-id", "from-option")[0] == 0
    assert run_cli("bench", "serve", "--model", "m", "--seed", "3")[0] == 0
    assert [(a.run_id, a.seed) for a in seen] == [
        (None, None), ("from-env", None), ("from-option", None), ("from-env", 3)]


@pytest.fixture(scope="module")
def rendered_row():
    catalog = load_catalog([REPO / "tests" / "data" / "catalog" / "amd-master.yaml"],
                           REPO / "tests" / "data" / "catalog" / "runners.yaml",
                           strict_runners=False)
    rows = [r for _, r in generate_keyed(catalog, Selection(
        config_keys=["dsv4-fp4-mi355x-atom-disagg"], evals="none"))]
    return rows[0], render_row(rows[0], REPO)


def test_the_srt_slurm_recipe_gives_the_run_to_the_benchmark_step(rendered_row):
    import jsonschema

    _, rendered = rendered_row
    tagged = tag_recipe(rendered, JobTag("33825304569", 2, "mi355x-amds_0"))
    assert tagged.recipe["benchmark"]["env"] == {seeds.RUN_ID_ENV: "33825304569-a2"}
    assert "env" not in rendered.recipe["benchmark"]  # the rendered recipe is left alone
    schema = json.loads((REPO / "schemas" / "srt-slurm-v1-recipe.schema.json").read_text())
    assert list(jsonschema.Draft202012Validator(schema).iter_errors(tagged.recipe)) == []


def test_the_local_executor_gives_the_run_to_the_benchmark_step(rendered_row, tmp_path,
                                                                   monkeypatch):
    class Proc:
        pid = 4242

    monkeypatch.setattr(local.lifeline, "spawn", lambda *a, **k: Proc())
    row, rendered = rendered_row
    prov = Provenance(config_key="k", image=None, srt_slurm_commit=None, atom_revision=None,
                      run_id="local-20260101T000000Z-ab12", attempt=3)
    local.LocalExecutor().submit(rendered, row, tmp_path, provenance=prov)
    spec = json.loads((Path(tmp_path) / local.SPEC_FILE).read_text())
    assert spec["bench_env"][seeds.RUN_ID_ENV] == "local-20260101T000000Z-ab12-a3"
