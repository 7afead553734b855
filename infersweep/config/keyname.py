"""A config key names its entry: ``<model-prefix>-<precision>-<sku>-<framework>[-suffix]``.

InferenceX calls the convention "not required, but typical"; every key of its catalogs
follows it. A key of fewer parts that does not begin with the model prefix is not in the
convention and is left alone; a key whose parts contradict the entry's own fields is an error: the key is what
people select, read in the changelog and find in results, the fields are what runs. The SKU
is the runner label's first part (``mi355x`` of ``mi355x-disagg`` and of
``cluster:mi355x-amds``), or a worker pool's ``hardware``. The framework part only
contradicts when it names another known framework: ``trtllm`` for ``trt`` is a spelling of
the same engine, ``dynamo-sglang`` for ``sglang`` is not.
"""

from __future__ import annotations

from infersweep.config.rules import search_spaces
from infersweep.diagnostics import Diagnostic
from infersweep.yamldoc import YamlDoc

CONVENTION = "<model-prefix>-<precision>-<sku>-<framework>[-suffix]"
CONVENTION_PARTS = 4


def label_sku(label: str) -> str:
    return label.removeprefix("cluster:").split("-", 1)[0]


def _skus(entry: dict) -> set[str]:
    found = {label_sku(entry["runner"])}
    for *_, ss in search_spaces(entry):
        for role in ("prefill", "decode"):
            block = ss.get(role)
            if isinstance(block, dict) and isinstance(block.get("hardware"), str):
                found.add(block["hardware"])
    return found


def _framework_named(rest: str, frameworks: set[str]) -> str | None:
    """The longest known framework ``rest`` begins with, at a part boundary."""
    best = None
    for fw in frameworks:
        if (rest == fw or rest.startswith(fw + "-")) and (best is None or len(fw) > len(best)):
            best = fw
    return best


def check_key(doc: YamlDoc, key: str, entry: dict, *, labels: dict, frameworks: set[str],
              skip: set[str]) -> list[Diagnostic]:
    """Contradictions between ``key`` and the entry's fields; ``skip``: fields already
    reported as wrong (their error is the cause, not the key)."""
    prefix, precision, framework = entry["model-prefix"], entry["precision"], entry["framework"]
    sku = label_sku(entry["runner"])

    def contradiction(part: str, said: str, field: str, value: str) -> list[Diagnostic]:
        line = doc.locate((key, field))[0]
        return [doc.diag((key,), f"config key '{key}' names {part} '{said}', but its "
                         f"{field} (line {line}) is {value}",
                         f"fix '{field}' or rename the key: keys are {CONVENTION}",
                         rule="config-key", key=True)]

    if not key.startswith(prefix + "-") and len(key.split("-")) < CONVENTION_PARTS:
        return []  # not a name in the convention at all ('cfg'): nothing to contradict
    if "model-prefix" not in skip and not key.startswith(prefix + "-"):
        return contradiction("model prefix", key.split("-", 1)[0], "model-prefix", f"'{prefix}'")
    rest = key[len(prefix) + 1:]
    head, _, rest = rest.partition("-")
    if "precision" not in skip and head != precision:
        return contradiction("precision", head, "precision", f"'{precision}'")
    head, _, rest = rest.partition("-")
    if "runner" not in skip and entry["runner"] in labels and head not in _skus(entry):
        return contradiction("SKU", head, "runner", f"'{entry['runner']}' (SKU '{sku}')")
    if "framework" not in skip and rest:
        named = _framework_named(rest, frameworks | {framework})
        if named is not None and named != framework:
            return contradiction("framework", named, "framework", f"'{framework}'")
    return []
