"""Which catalog entry a launched row belongs to: the config key its results are recorded under.

``sweep run`` knows each row's key from the catalog; a benchmark job gets one row, so the key
travels in the row (``config-key``, written by ``changelog matrix``) and is checked against
the catalog at the job's commit. A row without one (an InferenceX row, ``matrix test-config``
output) is found in the catalog by its recipe fingerprint. The row's ``exp-name`` is never a
config key: several entries share one (``dsv4_8k1k`` for the ATOM, ATOM-MTP and SGLang
configs), and their results would be mixed in the store and the report.
"""

from __future__ import annotations

from pathlib import Path

from infersweep.changelog.buckets import recipe_fingerprint
from infersweep.config.catalog import default_config_files, default_runner_file, load_catalog
from infersweep.diagnostics import Diagnostic, InputError
from infersweep.matrix.generate import CONFIG_KEY, Selection, generate_keyed
from infersweep.matrix.rows import normalise

RULE = "launch-config-key"


def _refuse(source: str, message: str, hint: str) -> InputError:
    return InputError(Diagnostic(source, 0, 0, message, hint, RULE))


def keys_by_fingerprint(repo: Path) -> dict[str, set[str]] | None:
    """Recipe fingerprint -> the catalog keys with a row of that recipe (None: no catalog)."""
    files = default_config_files(repo)
    if not files:
        return None
    catalog = load_catalog(files, default_runner_file(repo), strict_runners=False)
    found: dict[str, set[str]] = {}
    for key, row in generate_keyed(catalog, Selection(evals="none")):
        found.setdefault(recipe_fingerprint(normalise(row)), set()).add(key)
    return found


def config_key(row: dict, repo: Path, *, given: str | None = None, source: str = "--row",
               warn=lambda line: None) -> str:
    """The row's catalog key: ``--config-key``, else the row's ``config-key``, else the one
    catalog entry with the row's recipe. A named key must exist in the catalog at ``repo``
    (when it has one); a row edited by hand (other lengths, say) keeps its key, with a
    warning that no row of that entry has its recipe."""
    named = row.get(CONFIG_KEY)
    if given and named and given != named:
        raise _refuse(source, f"--config-key {given} contradicts the row's config-key {named}",
                      "drop --config-key, or pass the row of that config")
    key = given or named
    catalog = keys_by_fingerprint(Path(repo))
    if catalog is None:
        if key:
            return str(key)
        raise _refuse(source, "the row names no config-key and --repo has no catalog "
                      "(configs/*-master.yaml) to find it in",
                      "pass --config-key KEY, or a row from `changelog matrix`")
    owners = catalog.get(recipe_fingerprint(normalise(row)), set())
    if key:
        if not any(key in keys for keys in catalog.values()):
            raise _refuse(source, f"config-key {key}: the catalog has no such key",
                          "launch a row of this commit's catalog (`changelog matrix`, "
                          "`matrix test-config`), or fix --config-key")
        if key not in owners:
            warn(f"warning: {source}: no row of {key} in the catalog has this row's recipe "
                 "(edited by hand?); its results are recorded under " + key)
        return str(key)
    if len(owners) == 1:
        return next(iter(owners))
    if not owners:
        raise _refuse(source, "the row names no config-key and matches no config of the "
                      "catalog (no entry renders its recipe)",
                      "pass --config-key KEY, or a row of this commit's catalog")
    raise _refuse(source, f"the row's recipe belongs to {len(owners)} configs: "
                  f"{', '.join(sorted(owners))}", "pass --config-key KEY")
