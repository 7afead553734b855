"""Why a row has no recipe, in words a coverage report can group by.

A refusal is an :class:`InputError` like any other (the CLI prints its diagnostics), plus a
``reason`` shared by every row refused the same way ("recipe file not found") and a
``detail`` that says which file or setting ("recipes/x.yaml", "SYNTHETIC_ACCEPTANCE").
Errors raised without a reason (a template's own problems, a row that does not fit) are
grouped by their rule.
"""

from __future__ import annotations

from infersweep.diagnostics import Diagnostic, InputError

SINGLE_NODE = "single-node: no template for the framework"
ROW_SETTINGS = "refused by a template rule"
NO_CONFIG_FILE = "multi-node: no CONFIG_FILE"
BAD_CONFIG_FILE = "CONFIG_FILE is not recipes/<path>"
NOT_FOUND = "recipe file not found"
UNKNOWN_SETTING = "unknown setting"

# reasons for errors raised without one, by the rule of their first diagnostic
BY_RULE = {
    "row-template": "CONFIG_FILE problem",
    "row-fit": "row does not fit its recipe",
    "row-parallelism": "row does not fit its recipe",
    "row-refused": ROW_SETTINGS,
    "row-settings": "setting is not a number",
    "row-eval-only": "eval-only row",
    "row-schema": "not a matrix row",
    "recipe-selector": "CONFIG_FILE selector problem",
    "recipe-override": "override file problem",
    "recipe-sweep": "recipe is a sweep",
    "recipe": "recipe is not a mapping",
    "yaml-syntax": "recipe is not valid YAML",
    "duplicate-key": "recipe is not valid YAML",
    "yaml-value": "recipe is not valid YAML",
    "yaml-depth": "recipe is not valid YAML",
}


class RowRefused(InputError):
    def __init__(self, diagnostics: list[Diagnostic] | Diagnostic, reason: str, detail: str):
        super().__init__(diagnostics)
        self.reason = reason
        self.detail = detail


def classify(exc: InputError) -> tuple[str, str]:
    """(reason, detail) of a refused row."""
    if isinstance(exc, RowRefused):
        return exc.reason, exc.detail
    first = exc.diagnostics[0]
    reason = BY_RULE.get(first.rule) or (f"template problem ({first.rule})"
                                         if first.rule.startswith("template")
                                         else f"[{first.rule or 'input'}]")
    where = f"{first.path}:{first.line}" if first.line else first.path
    return reason, f"{where}: {first.message}"
