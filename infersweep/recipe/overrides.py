"""srtctl's override files and ``file.yaml:selector`` selectors, read as srtctl v1 reads them.

An override file has a ``base:`` (a whole recipe) and sections ``override_<x>:`` (one variant
each: ``base`` deep-merged with the section) and ``zip_override_<x>:`` (N variants: every list
in the section is a dimension, the i-th variant takes element i of each list, a list of one
element is used by every variant). Merging: mappings merge key by key, anything else
(lists included) replaces, and ``null`` deletes the key. A variant without its own ``name``
is named ``<base name>_<x>`` (zip: ``<base name>_<x>_<i>``, unless the section gives a list of
names).

Selectors: ``base``, ``override_<x>``, ``zip_override_<x>`` (the whole group),
``zip_override_<x>[i]`` and a glob over the section names (``*mtp*``). Without a selector an
override file means every variant, ``base`` excluded.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from fnmatch import fnmatchcase

BASE = "base"
OVERRIDE = "override_"
ZIP = "zip_override_"
SELECTOR_FORMS = ("'base', 'override_<x>', 'zip_override_<x>', 'zip_override_<x>[i]' or a glob "
                  "such as '*mtp*'")
_ZIP_INDEX = re.compile(r"(zip_override_[\w-]+)\[(\d+)\]")


class OverrideError(Exception):
    """A selector or an override file srtctl would refuse: what, where (a pointer), rule."""

    def __init__(self, message: str, pointer: tuple = (), hint: str = "",
                 rule: str = "recipe-selector"):
        super().__init__(message)
        self.message, self.pointer, self.hint, self.rule = message, pointer, hint, rule


@dataclass(frozen=True)
class Variant:
    suffix: str  # "base", "<x>" for override_<x>, "<x>_<i>" for zip_override_<x>
    data: dict
    sections: tuple  # where its values come from, most specific first: ("override_x", "base")


def split(value: str) -> tuple[str, str | None]:
    """``path[:selector]`` as srtctl splits its ``-f`` argument (at the last colon)."""
    if ":" not in value:
        return value, None
    path, selector = value.rsplit(":", 1)
    return path, selector


def valid_selector(selector: str) -> bool:
    return bool(selector == BASE or re.fullmatch(r"override_\S+", selector)
                or re.fullmatch(r"zip_override_[\w-]+", selector)
                or _ZIP_INDEX.fullmatch(selector) or "*" in selector or "?" in selector)


def is_override_file(data) -> bool:
    return isinstance(data, dict) and BASE in data


def merge(base: dict, override: dict) -> dict:
    """``override`` deep-merged into a copy of ``base`` (srtctl's rules, see the module)."""
    out = copy.deepcopy(base)
    for key, value in override.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def _list_lengths(section: dict) -> list[int]:
    out = []
    for value in section.values():
        if isinstance(value, list):
            out.append(len(value))
        elif isinstance(value, dict):
            out.extend(_list_lengths(value))
    return out


def zip_length(key: str, section: dict) -> int:
    lengths = _list_lengths(section)
    if not lengths:
        raise OverrideError(f"'{key}' holds no list: nothing to zip", (key,),
                            "give each varying value as a list", "recipe-override")
    if 0 in lengths:
        raise OverrideError(f"'{key}' holds an empty list", (key,),
                            "every list needs at least one element", "recipe-override")
    longer = {n for n in lengths if n != 1}
    if len(longer) > 1:
        raise OverrideError(f"'{key}' zips lists of lengths {sorted(longer)}", (key,),
                            "every list must have the same length, or length 1 (used by "
                            "every variant)", "recipe-override")
    return longer.pop() if longer else 1


def _slice(section: dict, i: int) -> dict:
    out = {}
    for key, value in section.items():
        if isinstance(value, list):
            out[key] = value[0 if len(value) == 1 else i]
        elif isinstance(value, dict):
            out[key] = _slice(value, i)
        else:
            out[key] = value
    return out


def _section(data: dict, key: str) -> dict:
    value = data[key]
    if not isinstance(value, dict):
        raise OverrideError(f"'{key}' must be a mapping, not {type(value).__name__}", (key,),
                            "write the keys this variant changes", "recipe-override")
    return value


def _override(data: dict, base: dict, key: str) -> Variant:
    section = _section(data, key)
    merged = merge(base, section)
    suffix = key[len(OVERRIDE):]
    if "name" not in section:
        merged["name"] = f"{base.get('name', 'unnamed')}_{suffix}"
    return Variant(suffix, merged, (key, BASE))


def _zip(data: dict, base: dict, key: str) -> list[Variant]:
    section = _section(data, key)
    group = key[len(ZIP):]
    named = isinstance(section.get("name"), list)
    out = []
    for i in range(zip_length(key, section)):
        merged = merge(base, _slice(section, i))
        if not named:
            merged["name"] = f"{base.get('name', 'unnamed')}_{group}_{i}"
        out.append(Variant(f"{group}_{i}", merged, (key, BASE)))
    return out


def _available(overrides: list[str], zips: list[str]) -> str:
    return ", ".join([*overrides, *[f"{k}[i]" for k in zips]]) or "(none)"


def variants(data: dict, selector: str | None = None) -> list[Variant]:
    """The variants ``selector`` picks from an override file (every one when None)."""
    base = data[BASE]
    if not isinstance(base, dict):
        raise OverrideError("'base' must be a mapping (a whole recipe)", (BASE,),
                            rule="recipe-override")
    overrides = sorted(k for k in data if isinstance(k, str) and k.startswith(OVERRIDE))
    zips = sorted(k for k in data if isinstance(k, str) and k.startswith(ZIP))
    if selector is None:
        return ([_override(data, base, k) for k in overrides]
                + [v for k in zips for v in _zip(data, base, k)])
    m = _ZIP_INDEX.fullmatch(selector)
    if m:
        key, index = m.group(1), int(m.group(2))
        if key not in data:
            raise OverrideError(f"no '{key}' in the file (zip groups: "
                                f"{', '.join(f'{k}[i]' for k in zips) or '(none)'})")
        group = _zip(data, base, key)
        if index >= len(group):
            raise OverrideError(f"'{selector}': '{key}' has {len(group)} variant(s), "
                                f"0 to {len(group) - 1}", (key,))
        return [group[index]]
    if selector == BASE:
        return [Variant(BASE, copy.deepcopy(base), (BASE,))]
    if "*" in selector or "?" in selector:
        matched = [k for k in sorted(overrides + zips) if fnmatchcase(k, selector)]
        if not matched:
            raise OverrideError(f"no section matches '{selector}' (sections: "
                                f"{_available(overrides, zips)})")
        return [v for k in matched
                for v in (_zip(data, base, k) if k.startswith(ZIP) else [_override(data, base, k)])]
    if selector.startswith(ZIP):
        if selector not in data:
            raise OverrideError(f"no '{selector}' in the file (zip groups: "
                                f"{', '.join(zips) or '(none)'})")
        return _zip(data, base, selector)
    if selector not in data:
        raise OverrideError(f"no '{selector}' in the file (sections: "
                            f"{_available(overrides, zips)})")
    return [_override(data, base, selector)]
