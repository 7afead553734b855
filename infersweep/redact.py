"""Hiding credentials in text before it is printed, logged or written to a summary.

A remote URL may carry a token (``https://user:token@host/...``, ``https://x-access-token:...``,
``?access_token=...``). Every output path that can show a URL or a tool's message about one
passes it through :func:`redact` first: stdout, stderr, ``--json`` and the step summary.
"""

from __future__ import annotations

import re

MASK = "***"

# scheme://userinfo@  ->  scheme://***@   (userinfo: anything up to the last @ before the host)
_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)(?P<userinfo>[^/?#\s@'\"]+@)+")
_QUERY_SECRET = re.compile(
    r"(?P<key>[?&](?:access_token|token|private_token|password|passwd|secret|key|api_key|"
    r"apikey|sig|signature)=)[^&#\s'\"]+", re.IGNORECASE)
# Token shapes that are secret wherever they appear (GitHub, GitLab, Hugging Face).
_TOKENS = re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|"
                     r"glpat-[A-Za-z0-9_-]{20,}|hf_[A-Za-z0-9]{20,})\b")


def _mask_userinfo(m: re.Match) -> str:
    scheme, userinfo = m.group("scheme"), m.group(0)[len(m.group("scheme")):]
    if scheme.lower().startswith("ssh") and ":" not in userinfo:
        return m.group(0)  # ssh://git@host: a user name, no secret (keys are not in URLs)
    return f"{scheme}{MASK}@"


def redact(text: str) -> str:
    """``text`` with URL credentials, secret query parameters and known token shapes masked."""
    if not text:
        return text
    text = _USERINFO.sub(_mask_userinfo, text)
    text = _QUERY_SECRET.sub(lambda m: f"{m.group('key')}{MASK}", text)
    return _TOKENS.sub(MASK, text)
