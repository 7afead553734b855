"""The recipes a run's jobs ran, as the store keeps them: one per config and recipe name.

Every job folder holds the ``recipe.yaml`` it ran beside its ``manifest.json`` (a local
``sweep run`` folder, and the ``results/`` job folders of a ``results_bmk`` artifact). The
text is kept whole; the store writes each distinct text once (``recipe_texts``) and links it
to the run, config, recipe name and recipe fingerprint (``run_recipes``). The report's
compare page diffs them (``infersweep recipe diff``) where a config's recipe changed between
two runs. A folder without recipe texts (an aggregate file alone) stages without them.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import orjson
import sqlalchemy as sa

from infersweep.diagnostics import Diagnostic, InputError
from infersweep.store.tables import recipe_texts, run_recipes

RECIPE = "recipe.yaml"
MAX_BYTES = 1 << 20  # a rendered recipe is a few kB; anything near this is not one


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _attempt(manifest: Path) -> int:
    try:
        attempt = orjson.loads(manifest.read_bytes())["provenance"]["attempt"]
    except (OSError, ValueError, KeyError, TypeError):
        return 0
    return attempt if isinstance(attempt, int) and not isinstance(attempt, bool) else 0


def _read(path: Path) -> str:
    data = path.read_bytes()
    if len(data) > MAX_BYTES:
        raise InputError(Diagnostic(str(path), 0, 0, f"{len(data):,} bytes: too large for a "
                                    f"recipe (at most {MAX_BYTES:,})",
                                    "restore the recipe.yaml the job ran", "store-input"))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise InputError(Diagnostic(str(path), line, col, "not UTF-8 text",
                                    "restore the recipe.yaml the job ran",
                                    "store-input")) from None


def of_jobs(gathered) -> list[dict]:
    """The recipe of every job ``results collect`` gathered (``Gathered``) whose folder is
    here and holds one: ``config_key``, ``recipe_name``, ``recipe_fingerprint`` (its points'),
    ``text``. Of two folders of one recipe (a rerun's attempts), the newest attempt's."""
    fingerprints = {(e["config_key"], e["recipe_name"]): e.get("recipe_fingerprint")
                    for e in gathered.expected}
    best: dict[tuple, tuple[int, Path]] = {}
    for job in gathered.jobs:
        manifest = Path(job["manifest"])
        if not (manifest.parent / RECIPE).is_file():
            continue
        key = (job["config_key"], job["recipe_name"])
        attempt = _attempt(manifest)
        if key not in best or attempt > best[key][0]:
            best[key] = (attempt, manifest.parent / RECIPE)
    return [{"config_key": k[0], "recipe_name": k[1], "recipe_fingerprint": fingerprints.get(k),
             "text": _read(path)} for k, (_, path) in sorted(best.items())]


def check(recipes: list[dict]) -> list[Diagnostic]:
    problems, seen = [], set()
    for i, r in enumerate(recipes):
        where = f"recipe {i + 1}"
        if not isinstance(r, dict) or not all(isinstance(r.get(k), str) and r.get(k)
                                              for k in ("config_key", "recipe_name", "text")):
            problems.append(Diagnostic(where, 0, 0, "a recipe needs config_key, recipe_name "
                                       "and text (non-empty strings)", rule="store-row"))
            continue
        key = (r["config_key"], r["recipe_name"])
        if key in seen:
            problems.append(Diagnostic(where, 0, 0, f"a second recipe for {key[0]} "
                                       f"{key[1]}", "pass one recipe per job", "store-row"))
        seen.add(key)
    return problems


def write(conn, insert, run_pk: int, seq: int, recipes: list[dict]) -> None:
    """The run's recipes as of this ingest (``seq``): texts added once, links upserted, the
    links an earlier ingest of the run held and this one does not removed, and texts no run
    links any more dropped. ``insert`` is the dialect's insert (for ON CONFLICT)."""
    if recipes:
        texts = {sha256(r["text"]): r["text"] for r in recipes}
        conn.execute(insert(recipe_texts).on_conflict_do_nothing(index_elements=["sha256"]),
                     [{"sha256": k, "text": v} for k, v in sorted(texts.items())])
        ins = insert(run_recipes)
        conn.execute(ins.on_conflict_do_update(
            index_elements=["run_pk", "config_key", "recipe_name"],
            set_={c: ins.excluded[c] for c in ("recipe_fingerprint", "text_sha256",
                                               "ingest_seq")}),
            [{"run_pk": run_pk, "config_key": r["config_key"], "recipe_name": r["recipe_name"],
              "recipe_fingerprint": r.get("recipe_fingerprint"), "text_sha256": sha256(r["text"]),
              "ingest_seq": seq} for r in recipes])
    conn.execute(sa.delete(run_recipes).where(run_recipes.c.run_pk == run_pk,
                                              run_recipes.c.ingest_seq != seq))
    conn.execute(sa.delete(recipe_texts).where(~sa.exists().where(
        run_recipes.c.text_sha256 == recipe_texts.c.sha256)))


def read(conn, run_pks: list[int], keys=None) -> dict[int, list[dict]]:
    """run pk -> its recipes (as :func:`of_jobs` gives them), of configs ``keys`` when given;
    a text shared by several runs is one string."""
    r = run_recipes.c
    s = (sa.select(r.run_pk, r.config_key, r.recipe_name, r.recipe_fingerprint, r.text_sha256)
         .where(r.run_pk.in_(run_pks)).order_by(r.run_pk, r.config_key, r.recipe_name))
    if keys is not None:
        s = s.where(r.config_key.in_(keys))
    links = conn.execute(s).all()
    wanted = sorted({row.text_sha256 for row in links})
    texts: dict[str, str] = {}
    for i in range(0, len(wanted), 500):
        texts.update(conn.execute(sa.select(recipe_texts.c.sha256, recipe_texts.c.text).where(
            recipe_texts.c.sha256.in_(wanted[i:i + 500]))).all())
    out: dict[int, list[dict]] = {}
    for row in links:
        out.setdefault(row.run_pk, []).append({
            "config_key": row.config_key, "recipe_name": row.recipe_name,
            "recipe_fingerprint": row.recipe_fingerprint, "text": texts[row.text_sha256]})
    return out
