"""The results store: staged runs, their configs, points and evals, and staging events.

One ingest is one transaction: the run's rows are upserted on their natural keys (run id,
attempt, config key, recipe, ISL, OSL, scale-down, concurrency for points; run id, attempt and
``eval collect``'s own key for evals), rows of an earlier ingest of the same run that the new
one no longer holds are removed, and other runs are never touched. A database error anywhere
rolls every row of it back.
"""

from __future__ import annotations

import datetime as _dt
import functools
import hashlib
import time
from dataclasses import dataclass, field

import orjson
import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.dialects import postgresql, sqlite

from infersweep.diagnostics import Diagnostic, InputError
from infersweep.gcpause import cyclic_gc_paused
from infersweep.store import agentic as agenticmod
from infersweep.store import checks, connect
from infersweep.store import recipes as recipemod
from infersweep.store.model import StagedRun
from infersweep.store.tables import agentic_points, configs, evals, points, runs, staging_events

MIGRATIONS = "infersweep.store:migrations"
SOURCES = ("github", "local")
POINT_KEY = ("config_key", "recipe_name", "isl", "osl", "scale_down", "conc")
# indexed point columns filled from the row's field of the same name
POINT_COLUMNS = ("topology", "recipe_fingerprint", "tput_per_gpu", "output_tput_per_gpu",
                 "input_tput_per_gpu", "median_intvty", "p99_intvty", "median_ttft",
                 "p99_ttft", "median_e2el", "num_prefill_gpu", "num_decode_gpu", "image",
                 "srt_slurm_commit", "engine_revision", "job_id")
CONFIG_COLUMNS = {"model": "model", "model_prefix": "infmax_model_prefix", "hw": "hw",
                  "framework": "framework", "precision": "precision",
                  "spec_decoding": "spec_decoding", "disagg": "disagg",
                  "is_multinode": "is_multinode"}


@dataclass
class RunInfo:
    """Who and what a staged run is, beside its rows."""
    run_id: str
    attempt: int = 1
    source: str = "local"            # "github" or "local"
    created_at: str | None = None    # ISO 8601; stored as UTC
    head_sha: str | None = None
    pr_number: int | None = None
    labels: tuple[str, ...] = ()     # the PR's labels when the run was created
    url: str | None = None
    changelog: dict | None = None    # changelog_metadata.json
    workflow: str | None = None      # e.g. .github/workflows/run-sweep.yml


@dataclass
class IngestSummary:
    run_id: str
    attempt: int
    points_inserted: int = 0
    points_updated: int = 0
    points_removed: int = 0          # held by an earlier ingest of this run, not by this one
    evals_inserted: int = 0
    evals_updated: int = 0
    evals_removed: int = 0
    agentic_inserted: int = 0
    agentic_updated: int = 0
    agentic_removed: int = 0
    seconds: float = 0.0
    configs: list[str] = field(default_factory=list)

    @property
    def line(self) -> str:
        return (f"run {self.run_id} attempt {self.attempt}: {self.points_inserted} point(s) "
                f"inserted, {self.points_updated} updated, {self.points_removed} removed; "
                f"{self.evals_inserted} eval(s) inserted, {self.evals_updated} updated, "
                f"{self.evals_removed} removed; {self._agentic_part()}{len(self.configs)} "
                f"config(s) in {self.seconds:.2f}s")

    def _agentic_part(self) -> str:
        if not (self.agentic_inserted or self.agentic_updated or self.agentic_removed):
            return ""
        return (f"{self.agentic_inserted} agentic result(s) inserted, {self.agentic_updated} "
                f"updated, {self.agentic_removed} removed; ")


def now_text() -> str:
    """Staging times keep microseconds, so two stagings in one second still sort."""
    return _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def eval_key(row: dict) -> str:
    """``eval collect``'s de-duplication key as a short, never-null text."""
    key = [row.get("config-key"), row.get("recipe-fingerprint"), row.get("run-id"),
           row.get("task")]
    if row.get("config-key") is None:
        key.append(row.get("source"))
    return hashlib.sha256(orjson.dumps(key)).hexdigest()


def _alembic(connection) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", MIGRATIONS)
    cfg.attributes["connection"] = connection
    return cfg


@functools.cache
def head_revision() -> str:
    return ScriptDirectory.from_config(_alembic(None)).get_current_head()


def _known(revision: str) -> bool:
    try:
        return ScriptDirectory.from_config(_alembic(None)).get_revision(revision) is not None
    except Exception:  # alembic raises several kinds for an unknown id
        return False


class Store:
    """A results store on one database; see :func:`open_store`."""

    def __init__(self, target: connect.Target):
        self.target = target
        self.engine = connect.engine_for(target)
        self.head = head_revision()
        self.revision: str | None = None
        self.exists = True
        path = target.sqlite_path
        if path is not None and not path.exists():
            self.exists = False  # nothing is created until migrate()
            return
        if path is not None and path.is_dir():
            raise InputError(Diagnostic(path.as_posix(), 0, 0, "is a folder, not a SQLite file",
                                        "pass a file path", "store-url"))
        self.revision = self._read_revision()
        if self.revision is not None and self.revision != self.head and not _known(self.revision):
            self.close()
            raise InputError(Diagnostic(
                target.shown, 0, 0, f"the store's schema (revision {self.revision}) is newer "
                f"than this infersweep's ({self.head})",
                "upgrade infersweep to the version that last migrated this store", "store-schema"))

    # -- schema --------------------------------------------------------------------------

    def _read_revision(self) -> str | None:
        try:
            with self.engine.connect() as conn:
                return MigrationContext.configure(conn).get_current_revision()
        except sa.exc.DBAPIError as exc:
            self.close()
            raise connect.unreachable(self.target, exc) from None

    def _require_current(self) -> None:
        if self.revision == self.head:
            return
        db = self.target.shown if self.target.origin == "--db" else None  # else it is found
        run = "infersweep store migrate" + (f" --db '{db}'" if db else "")
        if not self.exists:
            msg = "there is no results store here yet"
            run += "`, or stage a run: `infersweep store ingest FOLDER"
        elif self.revision is None:
            msg = "the store has no schema yet"
        else:
            msg = (f"the store's schema (revision {self.revision}) is older than this "
                   f"infersweep's ({self.head})")
        raise InputError(Diagnostic(self.target.sqlite_path.as_posix() if
                                    self.target.sqlite_path else self.target.shown,
                                    0, 0, msg, f"run `{run}`", "store-schema"))

    def migrate(self) -> str:
        """Bring the schema to the newest revision (a no-op when it is there); the revision."""
        path = self.target.sqlite_path
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
        try:
            with connect.writer(self.engine).begin() as conn:
                command.upgrade(_alembic(conn), "head")
        except sa.exc.DBAPIError as exc:
            raise self._db_error("migrating the store", exc) from None
        self.exists = True
        self.revision = self._read_revision()
        return self.revision

    def _db_error(self, doing: str, exc: Exception) -> InputError:
        """A database error as a message: a connection that failed or was lost (the server
        went away, psycopg's errors without a SQLSTATE) names the server and what to check;
        anything else is the database refusing the work. Either way it was rolled back."""
        lost = isinstance(exc, sa.exc.DBAPIError) and (
            exc.connection_invalidated
            or (self.target.dialect == "postgresql" and isinstance(exc, sa.exc.OperationalError)
                and getattr(exc.orig, "sqlstate", None) is None))
        if lost:
            d = connect.unreachable(self.target, exc).diagnostics[0]
            return InputError(Diagnostic(d.path, 0, 0, f"{doing}: the connection failed or was "
                                         "lost, and everything of it was rolled back: "
                                         + d.message.removeprefix("cannot connect to "),
                                         d.hint + "; then run the same command again",
                                         "store-db"))
        return InputError(Diagnostic(
            self.target.shown, 0, 0, f"{doing}: the database refused it, and everything of it "
            f"was rolled back: {connect._first_line(exc)}",
            "fix the cause and run the same command again; staging is idempotent", "store-db"))

    # -- writing -------------------------------------------------------------------------

    def _insert(self, table):
        return (postgresql.insert(table) if self.target.dialect == "postgresql"
                else sqlite.insert(table))

    def check(self, run: RunInfo, point_rows, eval_rows, agentic=(), recipes=()) -> None:
        """What :meth:`ingest` refuses, found without touching the database."""
        self._check(run, point_rows, eval_rows, list(agentic), list(recipes))

    def _check(self, run: RunInfo, point_rows, eval_rows, agentic=(), recipes=()) -> dict:
        problems = checks.check_run_id(run.run_id, run.attempt)
        if run.source not in SOURCES:
            problems.append(Diagnostic("run", 0, 0, f"source {run.source!r} is not one of "
                                       f"{', '.join(SOURCES)}", rule="store-run"))
        if run.pr_number is not None and (isinstance(run.pr_number, bool)
                                          or not isinstance(run.pr_number, int)
                                          or run.pr_number < 1):
            problems.append(Diagnostic("run", 0, 0, f"PR number {run.pr_number!r} is not a "
                                       "positive integer", rule="store-run"))
        labels = list(run.labels or ())
        if not all(isinstance(x, str) for x in labels):
            problems.append(Diagnostic("run", 0, 0, "labels must be strings", rule="store-run"))
        if run.changelog is not None and not isinstance(run.changelog, dict):
            problems.append(Diagnostic("changelog_metadata.json", 0, 0, "the changelog "
                                       "metadata is not a JSON object", rule="store-run"))
        row_problems = checks.check_points(point_rows)
        problems += row_problems + checks.check_evals(eval_rows)
        problems += agenticmod.check(list(agentic), checks.non_finite)
        problems += recipemod.check(list(recipes))
        seen: dict[tuple, int] = {}
        for i, r in enumerate([] if row_problems else point_rows):
            k = _point_key(r)
            if k in seen:
                problems.append(Diagnostic(r["result_file"], 0, 0, f"point {i + 1} is the same "
                                           f"point as point {seen[k] + 1} ({' '.join(map(str, k))})",
                                           "pass one row per point, as `results collect` "
                                           "writes them", "store-row"))
            seen.setdefault(k, i)
        if problems:
            raise InputError(problems)
        return {"run_id": run.run_id, "attempt": run.attempt, "source": run.source,
                "workflow": run.workflow, "head_sha": run.head_sha, "pr_number": run.pr_number,
                "labels": labels, "changelog": run.changelog, "url": run.url,
                "created_at": checks.utc_text(run.created_at, "run created_at")}

    def ingest(self, run: RunInfo, points: list[dict], evals: list[dict],
               agentic: list[dict] = (), recipes: list[dict] = ()) -> IngestSummary:
        """Stage one run's rows, all or nothing; staging it again updates them in place.

        ``agentic``: the run's agentic results as ``results collect`` lists them (each one
        gated; see :mod:`infersweep.store.agentic`). ``recipes``: the recipes its jobs ran
        (:func:`infersweep.store.recipes.of_jobs`). A store with no schema at all (a new
        file, an empty database) gets its tables first; one with an older schema is refused
        until ``migrate()``."""
        t0 = time.perf_counter()
        agentic, recipes = list(agentic), list(recipes)
        values = self._check(run, points, evals, agentic, recipes)
        if self.revision is None:
            self.migrate()
        self._require_current()
        summary = IngestSummary(run.run_id, run.attempt)
        try:
            with connect.writer(self.engine).begin() as conn:
                self._write(conn, values, points, evals, summary)
                self._write_agentic(conn, values, agentic, summary)
                run_pk, seq = conn.execute(
                    sa.select(runs.c.id, runs.c.ingest_count).where(
                        runs.c.run_id == values["run_id"],
                        runs.c.attempt == values["attempt"])).one()
                recipemod.write(conn, self._insert, run_pk, seq, recipes)
        except sa.exc.DBAPIError as exc:
            raise self._db_error(f"ingesting run {run.run_id} attempt {run.attempt}",
                                 exc) from None
        summary.seconds = time.perf_counter() - t0
        return summary

    def _write(self, conn, values: dict, point_rows, eval_rows, summary) -> None:
        stamp = now_text()
        ins = self._insert(runs).values(**values, staged_at=stamp, updated_at=stamp,
                                        ingest_count=1)
        conn.execute(ins.on_conflict_do_update(
            index_elements=["run_id", "attempt"],
            set_={**{k: ins.excluded[k] for k in values}, "updated_at": stamp,
                  "ingest_count": runs.c.ingest_count + 1}))
        run_pk, seq = conn.execute(
            sa.select(runs.c.id, runs.c.ingest_count)
            .where(runs.c.run_id == values["run_id"], runs.c.attempt == values["attempt"])).one()
        self._write_configs(conn, point_rows, stamp)
        summary.configs = sorted({r["config_key"] for r in point_rows})

        have = {tuple(r) for r in conn.execute(
            sa.select(*[points.c[k] for k in POINT_KEY]).where(points.c.run_pk == run_pk))}
        rows = point_params(run_pk, seq, point_rows)
        for r in point_rows:
            if _point_key(r) in have:
                summary.points_updated += 1
            else:
                summary.points_inserted += 1
        if rows:
            ins = self._insert(points)
            keep = set(POINT_KEY) | {"run_pk", "id"}
            conn.execute(ins.on_conflict_do_update(
                index_elements=["run_pk", *POINT_KEY],
                set_={c.name: ins.excluded[c.name] for c in points.c if c.name not in keep}),
                rows)
        summary.points_removed = conn.execute(sa.delete(points).where(
            points.c.run_pk == run_pk, points.c.ingest_seq != seq)).rowcount

        have_e = {k for (k,) in conn.execute(
            sa.select(evals.c.eval_key).where(evals.c.run_pk == run_pk))}
        erows = []
        for i, r in enumerate(eval_rows):
            k = eval_key(r)
            erows.append({"run_pk": run_pk, "eval_key": k, "config_key": r["config-key"],
                          "recipe_fingerprint": r["recipe-fingerprint"], "task": r["task"],
                          "conc": r["conc"], "model": r["model"], "n_samples": r["n-samples"],
                          "em_strict": r["em-strict"], "em_flexible": r["em-flexible"],
                          "ordinal": i, "ingest_seq": seq, "row": r})
            if k in have_e:
                summary.evals_updated += 1
            else:
                summary.evals_inserted += 1
            have_e.add(k)
        if erows:
            ins = self._insert(evals)
            keep = {"run_pk", "eval_key", "id"}
            conn.execute(ins.on_conflict_do_update(
                index_elements=["run_pk", "eval_key"],
                set_={c.name: ins.excluded[c.name] for c in evals.c if c.name not in keep}),
                erows)
        summary.evals_removed = conn.execute(sa.delete(evals).where(
            evals.c.run_pk == run_pk, evals.c.ingest_seq != seq)).rowcount

    def _write_agentic(self, conn, values: dict, entries: list[dict], summary) -> None:
        run_pk, seq = conn.execute(
            sa.select(runs.c.id, runs.c.ingest_count)
            .where(runs.c.run_id == values["run_id"], runs.c.attempt == values["attempt"])).one()
        self._write_config_values(conn, {e["config_key"]: agenticmod.config_values(e)
                                         for e in reversed(entries)}, now_text())
        summary.configs = sorted(set(summary.configs) | {e["config_key"] for e in entries})
        key_cols = [agentic_points.c[k] for k in agenticmod.KEY]
        have = {tuple(r) for r in conn.execute(
            sa.select(*key_cols).where(agentic_points.c.run_pk == run_pk))}
        rows = []
        for i, e in enumerate(entries):
            if agenticmod.key(e) in have:
                summary.agentic_updated += 1
            else:
                summary.agentic_inserted += 1
            rows.append({**agenticmod.columns(e), "run_pk": run_pk, "ordinal": i,
                         "ingest_seq": seq, "result": e["result"]})
        if rows:
            ins = self._insert(agentic_points)
            keep = set(agenticmod.KEY) | {"run_pk", "id"}
            conn.execute(ins.on_conflict_do_update(
                index_elements=["run_pk", *agenticmod.KEY],
                set_={c.name: ins.excluded[c.name] for c in agentic_points.c
                      if c.name not in keep}), rows)
        summary.agentic_removed = conn.execute(sa.delete(agentic_points).where(
            agentic_points.c.run_pk == run_pk, agentic_points.c.ingest_seq != seq)).rowcount

    def _write_configs(self, conn, point_rows, stamp: str) -> None:
        first: dict[str, dict] = {}
        for r in point_rows:
            first.setdefault(r["config_key"], r)
        if not first:
            return
        self._write_config_values(conn, {k: {col: r.get(field) for col, field in
                                             CONFIG_COLUMNS.items()}
                                         for k, r in first.items()}, stamp)

    def _write_config_values(self, conn, by_key: dict[str, dict], stamp: str) -> None:
        if not by_key:
            return
        rows = [{"config_key": k, "updated_at": stamp, **v} for k, v in sorted(by_key.items())]
        ins = self._insert(configs)
        conn.execute(ins.on_conflict_do_update(
            index_elements=["config_key"],
            set_={c: ins.excluded[c] for c in (*CONFIG_COLUMNS, "updated_at")}), rows)

    def record_event(self, run_id: str, attempt: int | None, actor: str, outcome: str,
                     detail: str | None = None, comment_url: str | None = None) -> int:
        """Note who asked to stage a run, when, and how it ended; the event's id."""
        self._require_current()
        problems = []
        if not isinstance(run_id, str) or not run_id.strip() or len(run_id) > 100:
            problems.append(f"run id {run_id!r} is not 1-100 characters")
        if attempt is not None and (isinstance(attempt, bool) or not isinstance(attempt, int)
                                    or attempt < 1):
            problems.append(f"attempt {attempt!r} is not an integer >= 1")
        for what, v, n in (("actor", actor, 100), ("outcome", outcome, 50)):
            if not isinstance(v, str) or not v.strip() or len(v) > n:
                problems.append(f"{what} {v!r} is not 1-{n} characters")
        if problems:
            raise InputError([Diagnostic("staging event", 0, 0, p, rule="store-event")
                              for p in problems])
        try:
            with connect.writer(self.engine).begin() as conn:
                return conn.execute(sa.insert(staging_events).values(
                    run_id=run_id, attempt=attempt, actor=actor, outcome=outcome,
                    detail=detail, comment_url=comment_url, at=now_text())
                    .returning(staging_events.c.id)).scalar_one()
        except sa.exc.DBAPIError as exc:
            raise self._db_error("recording a staging event", exc) from None

    # -- reading -------------------------------------------------------------------------

    def _read(self, doing: str, fn):
        self._require_current()
        try:
            with self.engine.connect() as conn:
                return fn(conn)
        except sa.exc.DBAPIError as exc:
            raise self._db_error(doing, exc) from None

    def events(self, run_id: str | None = None) -> list[dict]:
        """Staging events, oldest first (of one run when ``run_id`` is given)."""
        def q(conn):
            s = sa.select(staging_events).order_by(staging_events.c.at, staging_events.c.id)
            if run_id is not None:
                s = s.where(staging_events.c.run_id == run_id)
            return [dict(r._mapping) for r in conn.execute(s)]
        return self._read("reading staging events", q)

    def staged_runs(self, config_keys=None) -> list[StagedRun]:
        """Every staged run, oldest staging first, with its points and evals as ingested.

        With ``config_keys``, only runs holding one of those configs, and only their points
        and evals."""
        keys = None if config_keys is None else sorted(set(config_keys))
        with cyclic_gc_paused():  # every point's row decoded into a dict that is kept
            return self._read("reading staged runs", lambda conn: self._runs(conn, keys, None))

    def previous_run(self, config_key: str, before_run_id: str,
                     before_staged_at: str | None) -> StagedRun | None:
        """The newest run of ``config_key`` staged before ``before_staged_at`` (any time when
        None) other than ``before_run_id`` (none of its attempts), with only that config's
        points and evals; None when there is none."""
        def q(conn):
            s = (sa.select(runs.c.id).where(
                runs.c.run_id != before_run_id,
                sa.exists().where(points.c.run_pk == runs.c.id,
                                  points.c.config_key == config_key))
                .order_by(runs.c.staged_at.desc(), runs.c.id.desc()).limit(1))
            if before_staged_at is not None:
                s = s.where(runs.c.staged_at < before_staged_at)
            pk = conn.execute(s).scalar()
            if pk is None:
                return None
            found = self._runs(conn, [config_key], [pk])
            return found[0] if found else None
        return self._read("reading the previous staged run", q)

    def _runs(self, conn, keys, pks) -> list[StagedRun]:
        s = sa.select(runs).order_by(runs.c.staged_at, runs.c.run_id, runs.c.attempt)
        if pks is not None:
            s = s.where(runs.c.id.in_(pks))
        if keys is not None:
            s = s.where(sa.or_(
                sa.exists().where(points.c.run_pk == runs.c.id, points.c.config_key.in_(keys)),
                sa.exists().where(evals.c.run_pk == runs.c.id, evals.c.config_key.in_(keys)),
                sa.exists().where(agentic_points.c.run_pk == runs.c.id,
                                  agentic_points.c.config_key.in_(keys))))
        out: dict[int, StagedRun] = {}
        for r in conn.execute(s):
            out[r.id] = StagedRun(
                run_id=r.run_id, attempt=r.attempt, source=r.source, staged_at=r.staged_at,
                created_at=r.created_at, head_sha=r.head_sha, pr_number=r.pr_number,
                labels=tuple(r.labels or ()), url=r.url, changelog=r.changelog)
        if not out:
            return []
        ids = list(out)
        for table, target in ((points, "points"), (evals, "evals")):
            s = (sa.select(table.c.run_pk, table.c.row).where(table.c.run_pk.in_(ids))
                 .order_by(table.c.run_pk, table.c.ordinal))
            if keys is not None:
                s = s.where(table.c.config_key.in_(keys))
            for pk, row in conn.execute(s):
                getattr(out[pk], target).append(row)
        a = agentic_points.c
        s = (sa.select(a.run_pk, a.config_key, a.name, a.result_file, a.result)
             .where(a.run_pk.in_(ids)).order_by(a.run_pk, a.ordinal))
        if keys is not None:
            s = s.where(a.config_key.in_(keys))
        for pk, key, name, file, result in conn.execute(s):
            out[pk].agentic.append({"config_key": key, "name": name, "result_file": file,
                                    "problems": [], "result": result})
        for pk, found in recipemod.read(conn, ids, keys).items():
            out[pk].recipes = found
        return list(out.values())

    def agentic_points(self, run_id: str | None = None) -> list[dict]:
        """Every staged agentic result's columns (identity, headline numbers, publishable,
        scaled) with its run id and attempt; of one run when ``run_id`` is given."""
        def q(conn):
            a = agentic_points.c
            cols = [c for c in agentic_points.c if c.name not in ("id", "run_pk", "result")]
            s = (sa.select(runs.c.run_id, runs.c.attempt, *cols)
                 .join_from(agentic_points, runs, a.run_pk == runs.c.id)
                 .order_by(runs.c.staged_at, runs.c.run_id, runs.c.attempt, a.ordinal))
            if run_id is not None:
                s = s.where(runs.c.run_id == run_id)
            return [dict(r._mapping) for r in conn.execute(s)]
        return self._read("listing agentic results", q)

    def overview(self) -> list[dict]:
        """One line per staged run: identity, times, point and eval counts, configs."""
        def q(conn):
            n_points = (sa.select(sa.func.count()).where(points.c.run_pk == runs.c.id)
                        .scalar_subquery())
            n_evals = (sa.select(sa.func.count()).where(evals.c.run_pk == runs.c.id)
                       .scalar_subquery())
            n_agentic = (sa.select(sa.func.count())
                         .where(agentic_points.c.run_pk == runs.c.id).scalar_subquery())
            n_local = (sa.select(sa.func.count())
                       .where(agentic_points.c.run_pk == runs.c.id,
                              agentic_points.c.publishable.is_(False)).scalar_subquery())
            s = (sa.select(runs.c.id, runs.c.run_id, runs.c.attempt, runs.c.source,
                           runs.c.pr_number, runs.c.head_sha, runs.c.staged_at,
                           runs.c.updated_at, runs.c.ingest_count,
                           n_points.label("points"), n_evals.label("evals"),
                           n_agentic.label("agentic"),
                           n_local.label("agentic_not_publishable"))
                 .order_by(runs.c.staged_at, runs.c.run_id, runs.c.attempt))
            found = [dict(r._mapping) for r in conn.execute(s)]
            per_run: dict[int, list[str]] = {}
            pairs = sa.union(sa.select(points.c.run_pk, points.c.config_key),
                             sa.select(agentic_points.c.run_pk, agentic_points.c.config_key))
            for pk, key in sorted(conn.execute(pairs), key=lambda r: (r[1], r[0])):
                per_run.setdefault(pk, []).append(key)
            for r in found:
                r["configs"] = per_run.get(r.pop("id"), [])
            return found
        return self._read("listing staged runs", q)

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def point_params(run_pk: int, seq: int, point_rows: list[dict]) -> list[dict]:
    """The ``points`` table's values for a run's rows (indexed columns and the whole row)."""
    out = []
    for i, r in enumerate(point_rows):
        out.append({**dict(zip(POINT_KEY, _point_key(r), strict=True)), "run_pk": run_pk,
                    "ordinal": i, "ingest_seq": seq, "successful": r["successful"],
                    "row_attempt": r["attempt"], "row": r,
                    **{c: r.get(c) for c in POINT_COLUMNS}})
    return out


def _point_key(r: dict) -> tuple:
    return (r["config_key"], r["recipe_name"], r["isl"], r["osl"], float(r["scale_down"]),
            r["conc"])


def open_store(url: str | None = None) -> Store:
    """The store at ``url``, else ``$INFERSWEEP_DB_URL``, else ``results/infersweep.db``.

    Reaching it is checked here (a clear error names what to check), and so is a schema newer
    than this code. A store whose schema is behind opens, and every method but
    :meth:`Store.migrate` says to run ``infersweep store migrate``; one with no schema yet is
    created by :meth:`Store.migrate` or by its first :meth:`Store.ingest`."""
    return Store(connect.resolve(url))
