"""The first schema: runs, configs, points, evals, staging events.

Revision ID: 0001
Revises:
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "runs",
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
        sa.Column("staged_at", sa.String(32), nullable=False),
        sa.Column("updated_at", sa.String(32), nullable=False),
        sa.Column("ingest_count", sa.Integer, nullable=False),
        sa.UniqueConstraint("run_id", "attempt", name="uq_runs_run_attempt"),
    )
    op.create_table(
        "configs",
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
    op.create_table(
        "points",
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
        sa.Column("ordinal", sa.Integer, nullable=False),
        sa.Column("ingest_seq", sa.Integer, nullable=False),
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
        sa.Column("row_attempt", sa.Integer),
        sa.Column("row", sa.JSON, nullable=False),
        sa.UniqueConstraint("run_pk", "config_key", "recipe_name", "isl", "osl", "scale_down",
                            "conc", name="uq_points_natural"),
    )
    op.create_index("ix_points_config", "points", ["config_key"])
    op.create_index("ix_points_join", "points", ["run_pk", "config_key", "recipe_fingerprint"])
    op.create_table(
        "evals",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("run_pk", sa.Integer, sa.ForeignKey("runs.id", ondelete="CASCADE"),
                  nullable=False),
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
    )
    op.create_index("ix_evals_join", "evals", ["run_pk", "config_key", "recipe_fingerprint"])
    op.create_table(
        "staging_events",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.String(100), nullable=False),
        sa.Column("attempt", sa.Integer),
        sa.Column("actor", sa.String(100), nullable=False),
        sa.Column("outcome", sa.String(50), nullable=False),
        sa.Column("detail", sa.Text),
        sa.Column("comment_url", sa.Text),
        sa.Column("at", sa.String(32), nullable=False),
    )
    op.create_index("ix_staging_events_run", "staging_events", ["run_id", "attempt"])


def downgrade() -> None:
    op.drop_table("staging_events")
    op.drop_table("evals")
    op.drop_table("points")
    op.drop_table("configs")
    op.drop_table("runs")
