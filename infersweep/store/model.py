"""What the results store hands to the report: staged runs with their points and evals.

The store (``infersweep.store``) writes and reads these; the report
(``infersweep.report``) only reads them, so it can be built from a store or straight from a
run's aggregates. Points are rows of ``schemas/results-row.schema.json`` (what ``results
collect`` writes, every field kept); evals are rows of ``eval collect``; agentic results are
the entries of ``results collect``'s ``agentic`` list (the whole result inside).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class StagedRun:
    run_id: str                      # GitHub's numeric run id as text, or a local run's id
    attempt: int
    source: str                      # "github" or "local"
    staged_at: str                   # UTC, ISO 8601 with Z
    created_at: str | None = None    # when the run was created (GitHub) or started (local)
    head_sha: str | None = None
    pr_number: int | None = None
    labels: tuple[str, ...] = ()     # the PR's labels when the run was created
    url: str | None = None           # the run's page
    changelog: dict | None = None    # changelog_metadata.json: {base_ref, head_ref, entries}
    points: list[dict] = field(default_factory=list)  # results-row rows
    evals: list[dict] = field(default_factory=list)   # eval collect rows
    # agentic-coding results as `results collect` lists them: config_key, name, result_file,
    # problems (empty: only gated results are staged) and the whole result
    agentic: list[dict] = field(default_factory=list)
    # the recipes its jobs ran: config_key, recipe_name, recipe_fingerprint, text (recipe.yaml)
    recipes: list[dict] = field(default_factory=list)

    @property
    def label(self) -> str:
        """How people name the run: its id, and the attempt when there was a rerun."""
        return self.run_id if self.attempt <= 1 else f"{self.run_id} (attempt {self.attempt})"
