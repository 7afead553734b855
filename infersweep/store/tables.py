"""The store's tables (SQLAlchemy Core), as the newest migration leaves them.

Every point and eval keeps its full row as JSON (``row``) beside indexed columns for the keys
and the main metrics, so a staged run is reconstructed exactly while queries stay cheap.
Times are UTC ISO 8601 text (``2026-12-01T10:00:00Z``): it sorts, and reads the same on
SQLite and PostgreSQL. The migrations under ``migrations/versions`` create these; a test
checks that both agree.
"""

from __future__ import annotations

import sqlalchemy as sa

metadata = sa.MetaData()

runs = sa.Table(
    "runs", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("run_id", sa.String(100), nullable=False),
    sa.Column("attempt", sa.Integer, nullable=False),
    sa.Column("source", sa.String(20), nullable=False),
    sa.Column("workflow", sa.String(200)),
    sa.Column("head_sha", sa.String(64)),
    sa.Column("pr_number", sa.Integer),
    sa.Column("labels", sa.JSON, nullable=False),
    sa.Column("changelog", sa.JSON),
    sa.Column("url", sa.Text),
    sa.Column("created_at", sa.String(32)),
    sa.Column("staged_at", sa.String(32), nullable=False),   # first staging; kept on restaging
    sa.Column("updated_at", sa.String(32), nullable=False),  # the newest ingest
    sa.Column("ingest_count", sa.Integer, nullable=False),
    sa.UniqueConstraint("run_id", "attempt", name="uq_runs_run_attempt"),
)

configs = sa.Table(
    "configs", metadata,
    sa.Column("config_key", sa.String(200), primary_key=True),
    sa.Column("model", sa.String(200)),
    sa.Column("model_prefix", sa.String(100)),
    sa.Column("hw", sa.String(100)),
    sa.Column("framework", sa.String(100)),
    sa.Column("precision", sa.String(50)),
    sa.Column("spec_decoding", sa.String(50)),
    sa.Column("disagg", sa.Boolean),
    sa.Column("is_multinode", sa.Boolean),
    sa.Column("updated_at", sa.String(32), nullable=False),
)

points = sa.Table(
    "points", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("run_pk", sa.Integer, sa.ForeignKey("runs.id", ondelete="CASCADE"),
              nullable=False),
    sa.Column("config_key", sa.String(200), sa.ForeignKey("configs.config_key"),
              nullable=False),
    sa.Column("recipe_name", sa.String(300), nullable=False),
    sa.Column("isl", sa.Integer, nullable=False),
    sa.Column("osl", sa.Integer, nullable=False),
    sa.Column("scale_down", sa.Float, nullable=False),
    sa.Column("conc", sa.Integer, nullable=False),
    sa.Column("ordinal", sa.Integer, nullable=False),   # position in the run's aggregate
    sa.Column("ingest_seq", sa.Integer, nullable=False),  # the run's ingest that wrote it
    sa.Column("topology", sa.String(200)),
    sa.Column("recipe_fingerprint", sa.String(64)),
    sa.Column("successful", sa.Boolean, nullable=False),
    sa.Column("tput_per_gpu", sa.Float),
    sa.Column("output_tput_per_gpu", sa.Float),
    sa.Column("input_tput_per_gpu", sa.Float),
    sa.Column("median_intvty", sa.Float),
    sa.Column("p99_intvty", sa.Float),
    sa.Column("median_ttft", sa.Float),
    sa.Column("p99_ttft", sa.Float),
    sa.Column("median_e2el", sa.Float),
    sa.Column("num_prefill_gpu", sa.Integer),
    sa.Column("num_decode_gpu", sa.Integer),
    sa.Column("image", sa.Text),
    sa.Column("srt_slurm_commit", sa.String(64)),
    sa.Column("engine_revision", sa.String(100)),
    sa.Column("job_id", sa.String(100)),
    sa.Column("row_attempt", sa.Integer),  # the attempt that measured it (a rerun copies)
    sa.Column("row", sa.JSON, nullable=False),
    sa.UniqueConstraint("run_pk", "config_key", "recipe_name", "isl", "osl", "scale_down",
                        "conc", name="uq_points_natural"),
    sa.Index("ix_points_config", "config_key"),
    sa.Index("ix_points_join", "run_pk", "config_key", "recipe_fingerprint"),
)

evals = sa.Table(
    "evals", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("run_pk", sa.Integer, sa.ForeignKey("runs.id", ondelete="CASCADE"),
              nullable=False),
    # sha256 of eval collect's own de-duplication key (never null, unlike its parts)
    sa.Column("eval_key", sa.String(64), nullable=False),
    sa.Column("config_key", sa.String(200)),
    sa.Column("recipe_fingerprint", sa.String(64)),
    sa.Column("task", sa.String(100), nullable=False),
    sa.Column("conc", sa.Integer),
    sa.Column("model", sa.String(200)),
    sa.Column("n_samples", sa.Integer),
    sa.Column("em_strict", sa.Float),
    sa.Column("em_flexible", sa.Float),
    sa.Column("ordinal", sa.Integer, nullable=False),
    sa.Column("ingest_seq", sa.Integer, nullable=False),
    sa.Column("row", sa.JSON, nullable=False),
    sa.UniqueConstraint("run_pk", "eval_key", name="uq_evals_natural"),
    sa.Index("ix_evals_join", "run_pk", "config_key", "recipe_fingerprint"),
)

staging_events = sa.Table(
    "staging_events", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    # not a foreign key: a refused request names a run that was never ingested
    sa.Column("run_id", sa.String(100), nullable=False),
    sa.Column("attempt", sa.Integer),
    sa.Column("actor", sa.String(100), nullable=False),
    sa.Column("outcome", sa.String(50), nullable=False),
    sa.Column("detail", sa.Text),
    sa.Column("comment_url", sa.Text),
    sa.Column("at", sa.String(32), nullable=False),
    sa.Index("ix_staging_events_run", "run_id", "attempt"),
)

# One agentic-coding result per point: a row's recipe (fingerprint), its KV-offload mode
# (offloading and backend) and concurrency, in a config of a run. The headline numbers are
# columns; ``result`` is the whole result as `agentic process` wrote it.
agentic_points = sa.Table(
    "agentic_points", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("run_pk", sa.Integer, sa.ForeignKey("runs.id", ondelete="CASCADE"),
              nullable=False),
    sa.Column("config_key", sa.String(200), sa.ForeignKey("configs.config_key"),
              nullable=False),
    sa.Column("recipe_fingerprint", sa.String(64), nullable=False),
    sa.Column("kv_offloading", sa.String(50), nullable=False),
    sa.Column("kv_offload_backend", sa.String(100), nullable=False),  # "" without offload
    sa.Column("conc", sa.Integer, nullable=False),
    sa.Column("name", sa.String(300), nullable=False),       # the result file's name
    sa.Column("result_file", sa.Text, nullable=False),       # where it was found
    sa.Column("ordinal", sa.Integer, nullable=False),
    sa.Column("ingest_seq", sa.Integer, nullable=False),
    sa.Column("exp_name", sa.String(300)),
    sa.Column("image", sa.Text),
    sa.Column("num_gpus", sa.Integer),
    sa.Column("tput_per_gpu", sa.Float),
    sa.Column("output_tput_per_gpu", sa.Float),
    sa.Column("input_tput_per_gpu", sa.Float),
    sa.Column("median_intvty", sa.Float),
    sa.Column("median_ttft", sa.Float),
    sa.Column("p90_ttft", sa.Float),
    sa.Column("p99_ttft", sa.Float),
    sa.Column("median_e2el", sa.Float),
    sa.Column("server_gpu_cache_hit_rate", sa.Float),
    sa.Column("server_cpu_cache_hit_rate", sa.Float),
    sa.Column("theoretical_cache_hit_rate", sa.Float),
    sa.Column("gpu_kv_cache_usage", sa.Float),
    sa.Column("error_rate", sa.Float),
    sa.Column("num_requests_total", sa.Integer),
    sa.Column("num_requests_successful", sa.Integer),
    sa.Column("publishable", sa.Boolean, nullable=False),
    sa.Column("scaled", sa.Boolean, nullable=False),     # a scaled-down local run
    sa.Column("result", sa.JSON, nullable=False),
    sa.UniqueConstraint("run_pk", "config_key", "recipe_fingerprint", "kv_offloading",
                        "kv_offload_backend", "conc", name="uq_agentic_points_natural"),
    sa.Index("ix_agentic_points_config", "config_key"),
)

# The recipe each job of a run ran (its recipe.yaml), by config and recipe name; the text is
# kept once per distinct content in ``recipe_texts`` (most runs repeat the last one's).
recipe_texts = sa.Table(
    "recipe_texts", metadata,
    sa.Column("sha256", sa.String(64), primary_key=True),
    sa.Column("text", sa.Text, nullable=False),
)

run_recipes = sa.Table(
    "run_recipes", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("run_pk", sa.Integer, sa.ForeignKey("runs.id", ondelete="CASCADE"),
              nullable=False),
    sa.Column("config_key", sa.String(200), nullable=False),
    sa.Column("recipe_name", sa.String(300), nullable=False),
    sa.Column("recipe_fingerprint", sa.String(64)),
    sa.Column("text_sha256", sa.String(64), sa.ForeignKey("recipe_texts.sha256"),
              nullable=False),
    sa.Column("ingest_seq", sa.Integer, nullable=False),
    sa.UniqueConstraint("run_pk", "config_key", "recipe_name", name="uq_run_recipes_natural"),
)
