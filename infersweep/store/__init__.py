"""The results store: staged runs in SQLite (default) or PostgreSQL, migrated by Alembic.

Public API::

    store = open_store(url)          # url, else $INFERSWEEP_DB_URL, else results/infersweep.db
    store.migrate()                  # -> the schema revision
    store.ingest(RunInfo(...), points, evals)   # -> IngestSummary; one transaction
    store.record_event(run_id, attempt, actor, outcome, detail, comment_url=None)
    store.staged_runs(config_keys=None)         # -> list[StagedRun]
    store.previous_run(config_key, before_run_id, before_staged_at)  # -> StagedRun | None
    store.close()
    points, evals, changelog = load_run_dir(path)
    changelog = read_changelog(path)               # changelog_metadata.json at or below
"""

from infersweep.store.connect import DEFAULT_PATH, URL_ENV
from infersweep.store.model import StagedRun
from infersweep.store.rundir import load_run_dir, read_changelog, read_run_dir
from infersweep.store.store import IngestSummary, RunInfo, Store, open_store

__all__ = ["DEFAULT_PATH", "URL_ENV", "IngestSummary", "RunInfo", "StagedRun", "Store",
           "load_run_dir", "open_store", "read_changelog", "read_run_dir"]
