"""Agentic-coding results: one row per run, config, recipe, KV-offload mode and concurrency.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-04
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "agentic_points",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("run_pk", sa.Integer, sa.ForeignKey("runs.id", ondelete="CASCADE"),
                  nullable=False),
        sa.Column("config_key", sa.String(200), sa.ForeignKey("configs.config_key"),
                  nullable=False),
        sa.Column("recipe_fingerprint", sa.String(64), nullable=False),
        sa.Column("kv_offloading", sa.String(50), nullable=False),
        sa.Column("kv_offload_backend", sa.String(100), nullable=False),
        sa.Column("conc", sa.Integer, nullable=False),
        sa.Column("name", sa.String(300), nullable=False),
        sa.Column("result_file", sa.Text, nullable=False),
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
        sa.Column("scaled", sa.Boolean, nullable=False),
        sa.Column("result", sa.JSON, nullable=False),
        sa.UniqueConstraint("run_pk", "config_key", "recipe_fingerprint", "kv_offloading",
                            "kv_offload_backend", "conc", name="uq_agentic_points_natural"),
    )
    op.create_index("ix_agentic_points_config", "agentic_points", ["config_key"])


def downgrade() -> None:
    op.drop_table("agentic_points")
