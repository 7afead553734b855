"""A page's data as a script that sets one global (``window.NAME = {...};``), and back.

Pages load their data with a plain ``<script src>``, which works from ``file://`` where a
``fetch`` of a JSON file does not. Text is JSON-escaped, and ``<``, ``>`` and ``&`` too, so no
value can close the script or start markup.
"""

from __future__ import annotations

import json


def script(name: str, data, *, allow_nan: bool = True) -> str:
    """``data`` as the script that sets ``window.<name>`` (NaN and infinity refused unless
    ``allow_nan``: JavaScript reads them, JSON tools do not)."""
    body = json.dumps(data, separators=(",", ":"), sort_keys=True, ensure_ascii=False,
                      allow_nan=allow_nan)
    body = body.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return f"window.{name} = {body};\n"


def load(name: str, text: str, what: str):
    """The data back from :func:`script`'s text; ValueError naming ``what`` when the text is
    not such a script."""
    prefix = f"window.{name} = "
    if not text.startswith(prefix):
        raise ValueError(f"not {what} (it does not start with {prefix!r})")
    return json.loads(text[len(prefix):].rstrip().rstrip(";"))
