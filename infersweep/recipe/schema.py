"""The srt-slurm recipe and template schemas, checked by the one schema translator.

What is particular to recipes (names srtctl reserves, environment-variable names, the value
types of a flag) is worded in the schemas themselves (``x-message`` / ``x-hint``), so a recipe
and a master config get the same kind of message for the same kind of mistake.
"""

from __future__ import annotations

from typing import Any

from infersweep.config.schema import validate_doc
from infersweep.diagnostics import Diagnostic
from infersweep.yamldoc import YamlDoc

RECIPE_SCHEMA = "srt-slurm-v1-recipe"
TEMPLATE_SCHEMA = "srt-slurm-v1-template"


def validate(doc: YamlDoc, schema_name: str, data: Any = None) -> list[Diagnostic]:
    """Every violation of ``schema_name`` in ``doc`` (or in ``data``, shaped like ``doc``)."""
    return validate_doc(doc, schema_name, data=data)
