"""Read a custom benchmark command by meaning: which client, which points, which options.

Understands the two shapes recipes use: one client invocation per point written out (what
``recipe render`` emits), and a ``for VAR in WORDS; do ... done`` loop around one invocation
(older hand-written recipes), with plain ``name=value`` assignments and ``$((a * b))``
arithmetic. Anything else is kept as a statement and compared as text.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

_ASSIGN = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$")
_FOR = re.compile(r"^for\s+([A-Za-z_][A-Za-z0-9_]*)\s+in\s+(.*?)\s*;\s*do$|"
                  r"^for\s+([A-Za-z_][A-Za-z0-9_]*)\s+in\s+(.*)$")
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")
_ARITH = re.compile(r"\$\(\(([^()]*)\)\)")
_OPERATORS = {"||", "&&", ";", "|", "&"}
CONC_FLAG = "--max-concurrency"


@dataclass
class Invocation:
    program: str
    options: dict[str, str]  # flag -> value ("" for a bare flag)
    suffix: str = ""  # e.g. "|| rc=1"


@dataclass
class Benchmark:
    client: str | None = None
    points: list[str] = field(default_factory=list)  # concurrency of each invocation
    options: dict[str, str] = field(default_factory=dict)  # flag -> value, conc written 'conc'
    statements: list[str] = field(default_factory=list)


def logical_lines(text: str) -> list[str]:
    out, buf = [], ""
    for raw in text.splitlines():
        line = raw.rstrip()
        if line.endswith("\\"):
            buf += line[:-1].strip() + " "
            continue
        line = (buf + line.strip()).strip()
        buf = ""
        if line and not line.startswith("#"):
            out.append(line)
    if buf.strip():
        out.append(buf.strip())
    return out


def _unquote(value: str) -> str:
    try:
        parts = shlex.split(value)
    except ValueError:
        return value
    return " ".join(parts) if parts else ""


def _expand(text: str, env: dict[str, str]) -> str:
    def var(m):
        name = m.group(1) or m.group(2)
        return env.get(name, m.group(0))

    text = _VAR.sub(var, text)

    def arith(m):
        expr = m.group(1).strip()
        expr = re.sub(r"\b([A-Za-z_][A-Za-z0-9_]*)\b", lambda v: env.get(v.group(1), v.group(0)),
                      expr)
        if re.fullmatch(r"[\d\s+\-*/()]+", expr):
            try:
                return str(int(eval(expr, {"__builtins__": {}}, {})))  # digits and + - * / only
            except (ArithmeticError, SyntaxError):
                return m.group(0)
        return m.group(0)

    return _ARITH.sub(arith, text)


def _assignment(line: str) -> tuple[str, str] | None:
    """``name=value`` on its own (the value may be quoted or an arithmetic expansion)."""
    m = _ASSIGN.match(line)
    if not m:
        return None
    value = m.group(2)
    if _ARITH.fullmatch(value):
        return m.group(1), value
    try:
        return (m.group(1), value) if len(shlex.split(line)) == 1 else None
    except ValueError:
        return None


def _invocation(line: str) -> Invocation | None:
    try:
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|")
        lexer.whitespace_split = True
        tokens = list(lexer)
    except ValueError:
        return None
    if CONC_FLAG not in tokens:
        return None
    cut = next((i for i, t in enumerate(tokens) if t in _OPERATORS), len(tokens))
    words, suffix = tokens[:cut], " ".join(tokens[cut:])
    first = next((i for i, t in enumerate(words) if t.startswith("--")), len(words))
    options: dict[str, str] = {}
    i = first
    while i < len(words):
        flag = words[i]
        if "=" in flag and flag.startswith("--"):
            key, _, value = flag.partition("=")
            options[key] = value
            i += 1
        elif i + 1 < len(words) and not words[i + 1].startswith("--"):
            options[flag] = words[i + 1]
            i += 2
        else:
            options[flag] = ""
            i += 1
    return Invocation(" ".join(words[:first]), options, suffix)


def _last_replaced(value: str, conc: str) -> str:
    hits = list(re.finditer(rf"(?<!\d){re.escape(conc)}(?!\d)", value))
    if not hits:
        return value
    m = hits[-1]
    return value[:m.start()] + "{conc}" + value[m.end():]


def _normalise(flag: str, values: list[str], concs: list[str]) -> str:
    """One option's values across points, written in terms of ``conc`` where they follow it."""
    if flag == CONC_FLAG:
        return "conc"
    if len(set(values)) == 1:
        return values[0]
    if all(v.isdigit() for v in values) and all(c.isdigit() for c in concs):
        ratios = {int(v) / int(c) for v, c in zip(values, concs, strict=True) if int(c)}
        if len(ratios) == 1:
            k = ratios.pop()
            return "conc" if k == 1 else f"{k:g} x conc"
    shapes = {_last_replaced(v, c) for v, c in zip(values, concs, strict=True)}
    if len(shapes) == 1:
        return shapes.pop()
    return "; ".join(f"{c}: {v}" for c, v in zip(concs, values, strict=True))


def _reassigned(text: str) -> set[str]:
    names = re.findall(r"(?<![\w$])([A-Za-z_][A-Za-z0-9_]*)=", text)
    return {n for n in names if names.count(n) > 1}


def parse(text: str) -> Benchmark:
    lines = logical_lines(text)
    volatile = _reassigned(text)
    env: dict[str, str] = {}
    statements: list[str] = []
    invocations: list[tuple[Invocation, str]] = []  # (invocation, concurrency)
    i = 0
    while i < len(lines):
        line = lines[i]
        m = _FOR.match(line)
        if m:
            var = m.group(1) or m.group(3)
            words = _expand(m.group(2) if m.group(1) else m.group(4), env)
            body, depth, j = [], 1, i + 1
            if not m.group(1) and j < len(lines) and lines[j] == "do":
                j += 1
            while j < len(lines):
                if _FOR.match(lines[j]):
                    depth += 1
                if lines[j] == "done" or lines[j].startswith("done "):
                    depth -= 1
                    if depth == 0:
                        break
                body.append(lines[j])
                j += 1
            _loop(var, words, body, env, statements, invocations)
            i = j + 1
            continue
        a = _assignment(line)
        if a:
            value = _expand(_unquote(a[1]), env)
            if a[0] not in volatile:
                env[a[0]] = value
            statements.append(f"{a[0]}={value}")
            i += 1
            continue
        inv = _invocation(_expand(line, env))
        if inv:
            invocations.append((inv, inv.options.get(CONC_FLAG, "")))
        else:
            statements.append(_expand(line, env))
        i += 1
    return _summarise(invocations, statements)


def _loop(var, words, body, env, statements, invocations):
    items = words.split()
    numeric = bool(items) and all(w.isdigit() for w in items)
    if not numeric:
        statements.append(f"for {var} in {words}")
    runs = items if numeric else [f"${{{var}}}"]
    seen_statements: list[str] = []
    for value in runs:
        local = dict(env)
        local[var] = value
        for line in body:
            a = _assignment(line)
            if a:
                local[a[0]] = _expand(_unquote(a[1]), local)
                continue
            inv = _invocation(_expand(line, local))
            if inv:
                invocations.append((inv, inv.options.get(CONC_FLAG, value)))
            elif line not in seen_statements:
                seen_statements.append(line)
    statements.extend(seen_statements)


def _summarise(invocations, statements) -> Benchmark:
    bench = Benchmark(statements=statements)
    if not invocations:
        return bench
    bench.client = invocations[0][0].program
    concs = [c for _, c in invocations]
    bench.points = concs
    flags: list[str] = []
    for inv, _ in invocations:
        flags += [f for f in inv.options if f not in flags]
        if inv.program != bench.client:
            bench.statements.append(f"also runs {inv.program}")
    for flag in flags:
        values = [inv.options.get(flag, "(unset)") for inv, _ in invocations]
        bench.options[flag] = _normalise(flag, values, concs)
    for suffix in {inv.suffix for inv, _ in invocations if inv.suffix}:
        bench.statements.append(f"after each point: {suffix}")
    return bench
