"""The rule names the tools print (``[rule]`` in a diagnostic), read from the package's source.

A rule reaches a :class:`Diagnostic` as a string constant in a rule position: the ``rule``
keyword, or the positional place of a parameter or field named ``rule`` (``Diagnostic``'s
sixth field, a helper's ``rule`` parameter, ``Violation``'s first field). A name in that place
is followed to its value: a module constant, a local assignment, a conditional's branches,
or a tuple unpacked from a function whose returns give the rule (``rule, message, hint =
problem``). An f-string gives a family (``pin-{status}`` -> ``pin-``). Whatever cannot be
followed is returned as unresolved, so a new way of naming a rule fails the docs test.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "infersweep"
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
RULE_SHAPE = re.compile(r"[a-z][a-z0-9]*(-[a-z0-9]+)*")


@dataclass
class RuleNames:
    names: set[str] = field(default_factory=set)
    families: set[str] = field(default_factory=set)  # prefixes of f-string rule names
    unresolved: list[str] = field(default_factory=list)


def _positions(tree: ast.Module) -> dict[str, int | None]:
    """Callables defined in one module -> index of their positional ``rule`` (None: none)."""
    out: dict[str, int | None] = {}
    for node in ast.walk(tree):
        if isinstance(node, _FUNCS):
            names = [a.arg for a in node.args.posonlyargs + node.args.args]
            if names and names[0] in ("self", "cls"):
                names = names[1:]
            out[node.name] = names.index("rule") if "rule" in names else out.get(node.name)
        elif isinstance(node, ast.ClassDef):
            fields = [s.target.id for s in node.body
                      if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)]
            out[node.name] = fields.index("rule") if "rule" in fields else None
    return out


def _callee(call: ast.Call) -> str:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")


class _Reader:
    """Follows the rule expressions of one module."""

    def __init__(self, path: Path, tree: ast.Module, tuples: dict, found: RuleNames):
        self.path, self.tree, self.tuples, self.found = path, tree, tuples, found
        self.constants = {t.id: n.value.value for n in tree.body if isinstance(n, ast.Assign)
                          for t in n.targets if isinstance(t, ast.Name)
                          and isinstance(n.value, ast.Constant)
                          and isinstance(n.value.value, str)}
        self._parents: dict | None = None

    def enclosing(self, node):
        if self._parents is None:  # built only for modules that pass a rule by name
            self._parents = {child: parent for parent in ast.walk(self.tree)
                             for child in ast.iter_child_nodes(parent)}
        while node in self._parents:
            node = self._parents[node]
            if isinstance(node, _FUNCS):
                return node
        return None

    def resolve(self, expr, at) -> None:
        found = self.found
        if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
            if expr.value:
                found.names.add(expr.value)
            return
        if isinstance(expr, ast.IfExp):
            self.resolve(expr.body, at)
            self.resolve(expr.orelse, at)
            return
        if isinstance(expr, ast.JoinedStr) and expr.values and isinstance(
                expr.values[0], ast.Constant):
            found.families.add(expr.values[0].value)
            return
        if isinstance(expr, ast.Attribute) and expr.attr == "rule":
            return  # a field named rule: its constructors are read instead
        if isinstance(expr, ast.Name):
            if expr.id in self.constants:
                found.names.add(self.constants[expr.id])
                return
            fn = self.enclosing(at)
            if fn is not None and self.follow(fn, expr.id):
                return
        found.unresolved.append(f"{self.path.relative_to(PACKAGE.parent)}:{at.lineno}: "
                                f"{ast.unparse(expr)}")

    def follow(self, fn, name: str) -> bool:
        """A local name: a parameter (its callers are read), an assignment, or a tuple
        unpacked from a call whose function's returns are read."""
        if name in [a.arg for a in fn.args.args + fn.args.kwonlyargs]:
            return True
        simple = {}
        for node in ast.walk(fn):
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target = node.targets[0]
                if isinstance(target, ast.Name):
                    simple.setdefault(target.id, node.value)
        if name in simple and not isinstance(simple[name], ast.Call):
            self.resolve(simple[name], simple[name])
            return True
        for node in ast.walk(fn):
            if not (isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Tuple)):
                continue
            elts = [e.id if isinstance(e, ast.Name) else None for e in node.targets[0].elts]
            if name not in elts:
                continue
            value = simple.get(node.value.id) if isinstance(node.value, ast.Name) else node.value
            if not isinstance(value, ast.Call) or _callee(value) not in self.tuples:
                return False
            index = elts.index(name)
            for tup in self.tuples[_callee(value)]:
                if index < len(tup.elts):
                    self.resolve(tup.elts[index], tup)
            return True
        return False

    def read(self, positions: dict[str, int | None]) -> None:
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Call):
                for kw in node.keywords:
                    if kw.arg == "rule":
                        self.resolve(kw.value, node)
                index = positions.get(_callee(node))
                if index is None:
                    continue
                last = node.args[-1] if node.args else None
                if any(isinstance(a, ast.Starred) for a in node.args[:index + 1]):
                    if isinstance(last, ast.Constant) and RULE_SHAPE.fullmatch(str(last.value)):
                        self.resolve(last, node)  # Diagnostic(path, *where, msg, hint, rule)
                        continue
                    self.found.unresolved.append(
                        f"{self.path.relative_to(PACKAGE.parent)}:{node.lineno}: *args "
                        f"before the rule in {ast.unparse(node)[:60]}")
                elif index < len(node.args):
                    self.resolve(node.args[index], node)
            elif isinstance(node, _FUNCS):  # defaults of rule parameters
                args, defaults = node.args.args, node.args.defaults
                pairs = list(zip(args[len(args) - len(defaults):], defaults, strict=True))
                pairs += [(a, d) for a, d in zip(node.args.kwonlyargs, node.args.kw_defaults,
                                                 strict=True) if d is not None]
                for a, d in pairs:
                    if a.arg == "rule":
                        self.resolve(d, node)


@cache
def rule_names() -> RuleNames:
    modules = {p: ast.parse(p.read_text()) for p in sorted(PACKAGE.rglob("*.py"))}
    per_module = {path: _positions(tree) for path, tree in modules.items()}
    shared: dict[str, set] = {}
    for table in per_module.values():
        for name, index in table.items():
            shared.setdefault(name, set()).add(index)
    tuples: dict[str, list[ast.Tuple]] = {}
    for tree in modules.values():
        for fn in ast.walk(tree):
            if isinstance(fn, _FUNCS):
                tuples.setdefault(fn.name, []).extend(
                    n.value for n in ast.walk(fn)
                    if isinstance(n, ast.Return) and isinstance(n.value, ast.Tuple))
    found = RuleNames()
    for path, tree in modules.items():
        # a callable defined here wins; an imported one is known by its (one) definition
        positions = {n: next(iter(i)) for n, i in shared.items() if len(i) == 1}
        positions.update(per_module[path])
        _Reader(path, tree, tuples, found).read(positions)
    return found
