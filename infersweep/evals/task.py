"""The GSM8K task lm-eval runs: its own ``gsm8k`` definition, with the data from local files.

With ``--test-file``/``--train-file`` the task is written as a YAML that ``include``\\ s the
installed lm-eval's ``gsm8k.yaml`` and replaces only the data source (prompts, 5-shot
sampling from the train split, stop strings, both filters and the metric stay lm-eval's), so
no byte of the run comes from the network. Without them the built-in task is used as it is
(it loads ``openai/gsm8k`` from the Hugging Face hub), as on a cluster with lm-eval's source.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from infersweep.atomic import write_atomic
from infersweep.diagnostics import Diagnostic, InputError

LOCAL_TASK = "gsm8k_local"
BUILTIN_TASK = "gsm8k"


def builtin_yaml() -> Path:
    import lm_eval

    return Path(lm_eval.__file__).parent / "tasks" / "gsm8k" / "gsm8k.yaml"


def check_jsonl(path: str, what: str) -> int:
    """Rows in a GSM8K-format JSONL file; InputError naming the file and line otherwise."""
    n = 0
    try:
        with open(path, encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except ValueError as exc:
                    raise InputError(Diagnostic(path, lineno, 1, f"{what}: not JSON ({exc.msg})",
                                                "expected one GSM8K row per line")) from None
                if not (isinstance(row, dict) and isinstance(row.get("question"), str)
                        and isinstance(row.get("answer"), str) and "####" in row["answer"]):
                    raise InputError(Diagnostic(
                        path, lineno, 1, f"{what}: not a GSM8K row",
                        "expected {\"question\": ..., \"answer\": \"... #### N\"}"))
                n += 1
    except FileNotFoundError:
        raise InputError(Diagnostic(path, 0, 0, f"{what}: file not found", "check the path")) \
            from None
    except UnicodeDecodeError:
        raise InputError(Diagnostic(path, 0, 0, f"{what}: not UTF-8 text")) from None
    except OSError as exc:
        raise InputError(Diagnostic(path, 0, 0, f"{what}: cannot read ({exc.strerror})")) \
            from None
    if n == 0:
        raise InputError(Diagnostic(path, 0, 0, f"{what}: no rows"))
    return n


def write_local_task(task_dir: Path, test_file: str, train_file: str) -> str:
    """Write the local task's YAML into ``task_dir``; returns its task name."""
    text = "\n".join([
        "# lm-eval's own gsm8k task with the data read from local JSONL files",
        f"include: {json.dumps(str(builtin_yaml()))}",
        f"task: {LOCAL_TASK}",
        "tag: []",
        "dataset_path: json",
        "dataset_name: null",
        "dataset_kwargs:",
        "  data_files:",
        f"    train: {json.dumps(os.path.abspath(train_file))}",
        f"    test: {json.dumps(os.path.abspath(test_file))}",
        "",
    ])
    write_atomic(task_dir / f"{LOCAL_TASK}.yaml", text, "task file")
    return LOCAL_TASK


def offline_env() -> None:
    """No hub traffic: datasets otherwise sends a download counter even for local JSON."""
    os.environ["HF_DATASETS_OFFLINE"] = "1"
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ.setdefault("HF_DATASETS_DISABLE_PROGRESS_BARS", "1")
