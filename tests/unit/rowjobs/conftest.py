"""The first workload's rows (the recipe tests' fixture)."""

from tests.unit.recipe.conftest import dsv4_rows  # noqa: F401
