"""The recipes a run's jobs ran, in the store: read from the job folders' recipe.yaml, each
distinct text kept once, re-staging replaces a run's links, texts no run links are dropped,
and a recipe that is not text is refused with its path."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from infersweep.diagnostics import InputError
from infersweep.store import RunInfo, open_store, read_run_dir
from tests.unit.store.store_data import DISAGG, ONE, SINGLE, TP4, sweep_folder


def _recipe(root, key, name, text):
    (root / key / name / "recipe.yaml").write_text(text)


@pytest.fixture
def store(tmp_path):
    s = open_store(f"sqlite:///{tmp_path / 'store.db'}")
    s.migrate()
    yield s
    s.close()


def _texts(s) -> int:
    with s.engine.connect() as c:
        return c.execute(sa.text("SELECT count(*) FROM recipe_texts")).scalar()


def _ingest(s, folder, run_id):
    d = read_run_dir(folder)
    s.ingest(RunInfo(run_id), d.points, d.evals, d.agentic, d.recipes)
    return d


def test_job_folders_give_their_recipes_with_the_points_fingerprint(tmp_path):
    root = sweep_folder(tmp_path / "run")
    _recipe(root, DISAGG, ONE, "name: one\n")  # the single-node job has none: left out
    d = read_run_dir(root)
    fp = {p["recipe_fingerprint"] for p in d.points if p["recipe_name"] == ONE}
    assert d.recipes == [{"config_key": DISAGG, "recipe_name": ONE,
                          "recipe_fingerprint": fp.pop(), "text": "name: one\n"}]


def test_texts_are_kept_once_and_restaging_replaces_a_runs_recipes(store, tmp_path):
    a = sweep_folder(tmp_path / "a", run_id="local-a")
    b = sweep_folder(tmp_path / "b", run_id="local-b")
    for root in (a, b):
        _recipe(root, DISAGG, ONE, "name: one\n")
        _recipe(root, SINGLE, TP4, "name: tp4\n")
    _ingest(store, a, "local-a")
    _ingest(store, b, "local-b")
    assert _texts(store) == 2  # two runs, the same two texts
    runs = {r.run_id: r for r in store.staged_runs()}
    assert [x["text"] for x in runs["local-b"].recipes] == ["name: one\n", "name: tp4\n"]
    assert runs["local-a"].recipes[0]["text"] is not None

    _recipe(a, DISAGG, ONE, "name: one\nslurm: {time_limit: '1:00:00'}\n")
    (a / SINGLE / TP4 / "recipe.yaml").unlink()
    _ingest(store, a, "local-a")
    again = {r.run_id: r for r in store.staged_runs()}
    assert [x["recipe_name"] for x in again["local-a"].recipes] == [ONE]
    assert again["local-a"].recipes[0]["text"].startswith("name: one\nslurm")
    assert _texts(store) == 3  # b still links both old texts

    only = {r.run_id: r for r in store.staged_runs(config_keys=[SINGLE])}
    assert [x["recipe_name"] for x in only["local-b"].recipes] == [TP4]


def test_a_recipe_that_is_not_text_is_refused_with_its_path(tmp_path):
    root = sweep_folder(tmp_path / "run", single=False)
    (root / DISAGG / ONE / "recipe.yaml").write_bytes(b"model: x\nname: \xff\n")
    with pytest.raises(InputError, match="recipe.yaml:2:7: .*not UTF-8 text"):
        read_run_dir(root)


def test_two_recipes_for_one_job_are_refused(store, tmp_path):
    d = read_run_dir(sweep_folder(tmp_path / "run", single=False))
    twice = [{"config_key": DISAGG, "recipe_name": ONE, "text": "a"}] * 2
    with pytest.raises(InputError, match="a second recipe"):
        store.ingest(RunInfo("local-1"), d.points, [], [], twice)
