"""Reading a ``/stage-results`` comment: exactly the command, or the command and a run id.

The trimmed body (ASCII whitespace only) must be ``/stage-results`` or ``/stage-results``,
spaces or tabs, and an ASCII run id. Anything else that starts with the command (in any
case: the workflow's ``startsWith`` ignores case) is a usage error that gets a reply: extra
words, a second id, shell metacharacters, Unicode digits or look-alike letters, a non-ASCII
space. A comment that does not start with the command is not addressed to staging at all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

COMMAND = "/stage-results"
ASCII_SPACE = " \t\r\n\f\v"
# GitHub run ids are positive 64-bit integers
MAX_RUN_ID = 2**63 - 1
_REQUEST = re.compile(r"/stage-results(?:[ \t]+([1-9][0-9]{0,18}))?", re.ASCII)
USAGE = ("Usage: `/stage-results` (the newest completed sweep of this pull request's head "
         "commit) or `/stage-results <run-id>` (one run of run-sweep.yml, the id in digits), "
         "alone in the comment.")

IGNORE, USAGE_ERROR, STAGE = "ignore", "usage", "stage"


@dataclass(frozen=True)
class Parsed:
    kind: str                 # ignore | usage | stage
    run_id: int | None = None
    problem: str = ""         # why a usage error is one


def _why(raw: str) -> str:
    rest = raw.strip(ASCII_SPACE)
    if not rest:
        return "the command must stand alone"
    if any(ch.isdigit() and not ("0" <= ch <= "9") for ch in rest):
        return "the run id has a digit that is not ASCII 0-9"
    if any(ord(ch) > 127 for ch in rest):
        return "the comment has a character that is not ASCII"
    if re.search(r"[;&|`$<>(){}\[\]\\'\"*?!#~]", rest):
        return "the comment has shell metacharacters"
    words = rest.split()
    if len(words) > 1:
        return "only one run id may follow the command"
    if any(ch in "\r\n\f\v" for ch in raw):
        return "the command and the run id must be on one line"
    if not words[0].isdigit():
        return f"'{words[0][:40]}' is not a run id (digits only)"
    return f"'{words[0][:40]}' is not a run id (a positive number without leading zeros)"


def parse(body: str | None) -> Parsed:
    text = (body or "").strip(ASCII_SPACE)
    if text[:len(COMMAND)].lower() != COMMAND:
        return Parsed(IGNORE)
    m = _REQUEST.fullmatch(text)
    if m is not None and m[1] and int(m[1]) > MAX_RUN_ID:
        return Parsed(USAGE_ERROR, problem=f"'{m[1]}' is not a run id (GitHub's run ids are "
                                           f"at most {MAX_RUN_ID}, 2^63 - 1)")
    if m is not None:
        return Parsed(STAGE, int(m[1]) if m[1] else None)
    rest = text[len(COMMAND):]
    if text[:len(COMMAND)] != COMMAND:
        return Parsed(USAGE_ERROR, problem=f"the command must be written in lower case: "
                                           f"`{COMMAND}`, not `{text[:len(COMMAND)]}`")
    if rest and rest[0] not in ASCII_SPACE and rest[0].isascii():
        return Parsed(USAGE_ERROR, problem=f"'{(COMMAND + rest.split()[0])[:60]}' is not the "
                                           "command")
    return Parsed(USAGE_ERROR, problem=_why(rest))
