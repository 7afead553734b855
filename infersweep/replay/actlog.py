"""act's ``--json`` log read into per-job results a test or a person can act on.

Each line act prints with ``--json`` is one JSON object. The fields used here (act 0.2.89):
``job`` (``<workflow name>/<job name>``, for a called workflow
``<caller job name>[-<matrix row>]/<called workflow name>/<job name>``, padded with spaces),
``jobID``, ``jobResult`` on a job's last line (``success``/``failure``; ``skipped`` is logged
only at debug level, so the runner passes ``-v``), ``stepID``/``step``/``stage`` and
``stepResult`` on a step's last line, ``command`` for workflow commands a step printed
(``set-output`` with ``name``/``arg``, ``error``/``warning``/``notice`` with ``kvPairs`` and
``arg``, ``summary`` with ``content``) and ``raw_output`` for a step's own output lines.
Lines with no ``job`` are act's own (the artifact server, ``Error: Job 'x' failed``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

ANNOTATION_COMMANDS = ("error", "warning", "notice")


@dataclass(frozen=True)
class Annotation:
    """A ``::error``/``::warning``/``::notice`` a step printed (GitHub shows these on the
    PR's diff when ``file`` and ``line`` are given)."""

    level: str
    message: str
    file: str | None = None
    line: int | None = None
    col: int | None = None
    title: str | None = None
    job: str = ""
    step: str = ""

    def __str__(self) -> str:
        where = ":".join(str(x) for x in (self.file, self.line, self.col) if x is not None)
        return f"{self.level}: {where + ': ' if where else ''}{self.message}"


@dataclass
class StepRecord:
    id: str  # the step's id: (``decide``), its index (``2``) or act's ``--setup-job``
    name: str
    stage: str = ""  # Pre, Main or Post (empty for act's own set-up and complete steps)
    result: str | None = None  # success, failure, skipped; None: never finished
    outputs: dict[str, str] = field(default_factory=dict)


@dataclass
class JobRecord:
    key: str  # act's job name, e.g. "Run Sweep/Decide"
    job_id: str  # the id in the workflow, e.g. "policy" (not unique across called workflows)
    result: str | None = None  # success, failure, skipped; None: started, never finished
    matrix: dict = field(default_factory=dict)
    steps: list[StepRecord] = field(default_factory=list)
    annotations: list[Annotation] = field(default_factory=list)
    summary: str = ""
    output: list[str] = field(default_factory=list)  # the steps' own output lines
    errors: list[str] = field(default_factory=list)  # act's error lines for this job

    def step(self, step_id: str, stage: str = "Main") -> StepRecord:
        for record in self.steps:
            if record.id == step_id and (record.stage == stage or not stage):
                return record
        raise KeyError(f"job {self.key!r} has no step {step_id!r} ({stage}); it has "
                       f"{[s.id for s in self.steps]}")

    @property
    def outputs(self) -> dict[str, dict[str, str]]:
        """Step outputs by step id (what ``steps.<id>.outputs`` holds)."""
        return {s.id: s.outputs for s in self.steps if s.outputs}

    @property
    def ran(self) -> bool:
        return self.result not in (None, "skipped") or bool(self.steps)


@dataclass
class ActLog:
    jobs: dict[str, JobRecord] = field(default_factory=dict)
    messages: list[str] = field(default_factory=list)  # act's own lines (no job)
    unparsed: list[str] = field(default_factory=list)  # lines that were not JSON

    def job(self, name: str) -> JobRecord:
        """The job whose key, key's last part (the job's name) or id is ``name``; exactly one
        must match (a called workflow's jobs share ids: use the key then)."""
        if name in self.jobs:
            return self.jobs[name]
        hits = [j for j in self.jobs.values()
                if name in (j.job_id, j.key.rsplit("/", 1)[-1])]
        if len(hits) != 1:
            raise KeyError(f"{len(hits)} jobs match {name!r}; jobs: {sorted(self.jobs)}")
        return hits[0]

    def results(self) -> dict[str, str | None]:
        return {key: job.result for key, job in self.jobs.items()}

    @property
    def annotations(self) -> list[Annotation]:
        return [a for job in self.jobs.values() for a in job.annotations]

    def feed(self, line: str) -> tuple[str, JobRecord | None] | None:
        """Take one log line; return (event, job) for lines worth a progress message:
        ``started`` (a job's first line) or ``finished`` (its result)."""
        line = line.rstrip("\n")
        if not line.strip():
            return None
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            self.unparsed.append(line)
            return None
        if not isinstance(entry, dict):
            self.unparsed.append(line)
            return None
        name = str(entry.get("job") or "").strip()
        if not name:
            if entry.get("level") != "debug":
                self.messages.append(str(entry.get("msg", "")))
            return None
        event = None
        job = self.jobs.get(name)
        if job is None:
            job = self.jobs[name] = JobRecord(name, str(entry.get("jobID", "")),
                                              matrix=entry.get("matrix") or {})
            event = "started"
        self._step_fields(job, entry)
        if "jobResult" in entry:
            job.result = entry["jobResult"]
            event = "finished"
        return (event, job) if event else None

    def _step_fields(self, job: JobRecord, entry: dict) -> None:
        ids = entry.get("stepID") or entry.get("stepid")
        record = None
        if ids and not isinstance(ids, str):
            step_id = str(ids[-1]) if isinstance(ids, list) and ids else str(ids)
            stage = str(entry.get("stage", ""))
            record = next((s for s in job.steps if s.id == step_id and s.stage == stage), None)
            if record is None:
                record = StepRecord(step_id, str(entry.get("step", "")), stage)
                job.steps.append(record)
            if "stepResult" in entry:
                record.result = entry["stepResult"]
        command = entry.get("command")
        if command == "set-output" and record is not None and "name" in entry:
            record.outputs[str(entry["name"])] = str(entry.get("arg", ""))
        elif command in ANNOTATION_COMMANDS:
            pairs = entry.get("kvPairs") or {}
            job.annotations.append(Annotation(
                command, str(entry.get("arg", "")), pairs.get("file"), _int(pairs.get("line")),
                _int(pairs.get("col")), pairs.get("title"), job.key,
                record.name if record else ""))
        elif command == "summary":
            job.summary += str(entry.get("content", ""))
        elif entry.get("raw_output"):
            job.output.extend(str(entry.get("msg", "")).splitlines())
        elif entry.get("level") == "error" and not command:
            job.errors.append(str(entry.get("msg", "")))


def _int(value) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def parse_log(path: str | Path) -> ActLog:
    """An :class:`ActLog` from a saved ``--json`` log."""
    log = ActLog()
    with open(path, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            log.feed(line)
    return log
