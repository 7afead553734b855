"""Recipes: the text of every recipe a staged run's jobs ran, each distinct text kept once.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-05
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "recipe_texts",
        sa.Column("sha256", sa.String(64), primary_key=True),
        sa.Column("text", sa.Text, nullable=False),
    )
    op.create_table(
        "run_recipes",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("run_pk", sa.Integer, sa.ForeignKey("runs.id", ondelete="CASCADE"),
                  nullable=False),
        sa.Column("config_key", sa.String(200), nullable=False),
        sa.Column("recipe_name", sa.String(300), nullable=False),
        sa.Column("recipe_fingerprint", sa.String(64)),
        sa.Column("text_sha256", sa.String(64), sa.ForeignKey("recipe_texts.sha256"),
                  nullable=False),
        sa.Column("ingest_seq", sa.Integer, nullable=False),
        sa.UniqueConstraint("run_pk", "config_key", "recipe_name",
                            name="uq_run_recipes_natural"),
    )


def downgrade() -> None:
    op.drop_table("run_recipes")
    op.drop_table("recipe_texts")
