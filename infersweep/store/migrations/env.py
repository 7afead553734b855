"""Alembic's environment for the results store: run with the connection the store hands over
in ``config.attributes["connection"]`` (there is no alembic.ini and no URL here)."""

from __future__ import annotations

from alembic import context

from infersweep.store.tables import metadata

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=metadata,
                  render_as_batch=connection.dialect.name == "sqlite",
                  transaction_per_migration=False)
with context.begin_transaction():
    context.run_migrations()
