"""``infersweep bench bundle``: the benchmark client as one file that any Python >= 3.10 runs.

srt-slurm runs the benchmark step inside the engine's container, whose interpreter has none of
our dependencies. The bundle is a zipapp (``python3 infersweep-bench.pyz serve ...``) holding
only what ``bench serve`` and ``bench recompute`` import: ``infersweep/bench/*`` minus this
builder, the few shared modules they use, and click (pure Python, BSD-3-Clause, shipped with
its licence). orjson, uvloop, numpy and rich are used when the container has them, with
stdlib fallbacks otherwise (:mod:`infersweep.bench.runtime`).

The output is deterministic: the same sources give the same bytes (sorted entries, fixed
timestamps and permissions, fixed compression level), so its sha256 names the build. The
result's ``infersweep.build`` carries that sha256 when the bundle measured it.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.metadata
import io
import json
import zipfile
from dataclasses import dataclass
from pathlib import Path

from infersweep import __version__
from infersweep.atomic import write_atomic
from infersweep.diagnostics import InputError

PACKAGE_ROOT = Path(__file__).resolve().parents[1]  # the infersweep package
ENTRY = "infersweep.bench.zipmain"
EXCLUDED = {"infersweep.bench.bundle"}  # the builder itself (imported lazily by `bench bundle`)
VENDORED = ("click",)  # pure-Python dependencies copied from the installed distribution
FIXED_TIME = (1980, 1, 1, 0, 0, 0)  # the zip format's earliest date: no build time in the file
SHEBANG = b"#!/usr/bin/env python3\n"
MAIN = (
    "# The infersweep benchmark client, bundled: python3 infersweep-bench.pyz --help\n"
    "import sys\n\n"
    "if sys.version_info < (3, 10):  # said in words any Python can print\n"
    "    sys.exit(\"error: this client needs Python 3.10 or newer; this is %d.%d: run it with \"\n"
    "             \"python3.10 or later\" % sys.version_info[:2])\n"
    "from infersweep.bench.zipmain import main  # noqa: E402\n\n"
    "if __name__ == \"__main__\":\n"
    "    main()\n"
)
MIN_PYTHON = (3, 10)

# Standard-library names that appeared after 3.10: (module, name) or (module, None) for the
# whole module. A use guarded by ``try: ... except ImportError/AttributeError`` is allowed.
NEWER_THAN_310 = {
    ("tomllib", None), ("enum", "StrEnum"), ("enum", "ReprEnum"), ("enum", "verify"),
    ("typing", "Self"), ("typing", "LiteralString"), ("typing", "Never"),
    ("typing", "assert_never"), ("typing", "reveal_type"), ("typing", "Required"),
    ("typing", "NotRequired"), ("typing", "TypeVarTuple"), ("typing", "Unpack"),
    ("typing", "dataclass_transform"), ("typing", "override"), ("datetime", "UTC"),
    ("asyncio", "TaskGroup"), ("asyncio", "timeout"), ("asyncio", "timeout_at"),
    ("asyncio", "Runner"), ("contextlib", "chdir"), ("hashlib", "file_digest"),
    ("operator", "call"), ("itertools", "batched"),
}
NEWER_BUILTINS = {"ExceptionGroup", "BaseExceptionGroup"}


@dataclass(frozen=True)
class Bundle:
    path: Path
    sha256: str
    size: int
    files: int


def _module_file(name: str) -> Path:
    rel = Path(*name.split("."))
    pkg = PACKAGE_ROOT.parent / rel / "__init__.py"
    return pkg if pkg.is_file() else PACKAGE_ROOT.parent / rel.with_suffix(".py")


def _imports(tree: ast.AST, current: str) -> set[str]:
    """Every infersweep module an AST imports, lazily (inside functions) too."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "infersweep")
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = current.split(".")[: -node.level]
                base = ".".join(parts + ([base] if base else []))
            if base.split(".")[0] != "infersweep":
                continue
            found.add(base)
            for a in node.names:  # `from infersweep.bench import runtime` imports a module
                if _module_file(f"{base}.{a.name}").is_file():
                    found.add(f"{base}.{a.name}")
    return found


def module_closure(entry: str = ENTRY) -> list[str]:
    """The infersweep modules ``entry`` needs, with their parent packages, sorted."""
    seen: set[str] = set()
    todo = [entry]
    while todo:
        name = todo.pop()
        if name in seen or name in EXCLUDED:
            continue
        seen.add(name)
        parts = name.split(".")
        todo.extend(".".join(parts[:i]) for i in range(1, len(parts)))  # parent packages
        path = _module_file(name)
        if not path.is_file():
            raise InputError(f"bundle: module {name} has no source file ({path})")
        todo.extend(_imports(ast.parse(path.read_bytes(), str(path)), name))
    return sorted(seen)


def _guarded(tree: ast.AST) -> set[int]:
    """ids of the nodes inside ``try`` blocks that fall back on ImportError/AttributeError."""
    ok: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try):
            caught = set()
            for h in node.handlers:
                types = h.type.elts if isinstance(h.type, ast.Tuple) else [h.type]
                caught.update(t.id for t in types if isinstance(t, ast.Name))
            if caught & {"ImportError", "ModuleNotFoundError", "AttributeError"}:
                for stmt in node.body:
                    ok.update(id(n) for n in ast.walk(stmt))
    return ok


def py310_problems(source: bytes, filename: str) -> list[str]:
    """Why ``source`` would not run on Python 3.10: newer syntax, or newer stdlib names."""
    try:
        tree = ast.parse(source, filename, feature_version=MIN_PYTHON)
    except SyntaxError as exc:
        return [f"{filename}:{exc.lineno}:{exc.offset}: {exc.msg}"]
    guarded = _guarded(tree)
    out = []
    for node in ast.walk(tree):
        if id(node) in guarded:
            continue
        hits = []
        if isinstance(node, ast.Import):
            hits = [a.name for a in node.names if (a.name, None) in NEWER_THAN_310]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            if (node.module, None) in NEWER_THAN_310:
                hits = [node.module]
            hits += [f"{node.module}.{a.name}" for a in node.names
                     if (node.module, a.name) in NEWER_THAN_310]
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if (node.value.id, node.attr) in NEWER_THAN_310:
                hits = [f"{node.value.id}.{node.attr}"]
        elif isinstance(node, ast.Name) and node.id in NEWER_BUILTINS:
            hits = [node.id]
        out += [f"{filename}:{node.lineno}:{node.col_offset + 1}: {h} is newer than Python 3.10"
                for h in hits]
    return out


def _vendored(name: str) -> tuple[dict[str, bytes], dict]:
    """A pure-Python distribution's package files and licence, from the installed copy."""
    try:
        dist = importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        raise InputError(f"bundle: {name} is not installed; it is copied into the bundle "
                         f"from the installed distribution (pip install {name})") from None
    files: dict[str, bytes] = {}
    licences = []
    for f in dist.files or []:
        rel = str(f)
        if rel.startswith(f"{name}/") and rel.endswith((".py", "py.typed")):
            files[rel] = Path(dist.locate_file(f)).read_bytes()
        elif ".dist-info/" in rel and "LICEN" in Path(rel).name.upper():
            dest = f"licenses/{name}-{Path(rel).name}"
            files[dest] = Path(dist.locate_file(f)).read_bytes()
            licences.append(dest)
    if not licences:
        raise InputError(f"bundle: the installed {name} has no licence file to ship with it")
    meta = dist.metadata
    return files, {"version": dist.version,
                   "license": meta.get("License-Expression") or meta.get("License") or "",
                   "license_files": licences}


def contents() -> tuple[dict[str, bytes], dict]:
    """The bundle's files (path in the zip -> bytes) and its manifest."""
    files: dict[str, bytes] = {}
    for mod in module_closure():
        path = _module_file(mod)
        files[str(path.relative_to(PACKAGE_ROOT.parent))] = path.read_bytes()
    vendored = {}
    for name in VENDORED:
        more, vendored[name] = _vendored(name)
        files.update(more)
    files["__main__.py"] = MAIN.encode()
    problems = [p for rel, data in sorted(files.items()) if rel.endswith(".py")
                for p in py310_problems(data, rel)]
    if problems:
        raise InputError("bundle: these sources would not run on Python 3.10:\n  "
                         + "\n  ".join(problems))
    manifest = {
        "name": "infersweep-bench", "version": __version__,
        "requires_python": ">=" + ".".join(map(str, MIN_PYTHON)),
        "vendored": vendored,
        "files": {rel: hashlib.sha256(data).hexdigest() for rel, data in sorted(files.items())},
    }
    files["BUNDLE.json"] = (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode()
    return files, manifest


def zip_bytes(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    buf.write(SHEBANG)
    with zipfile.ZipFile(buf, "w") as zf:
        for rel in sorted(files):
            info = zipfile.ZipInfo(rel, date_time=FIXED_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            info.create_system = 3  # unix, whatever machine builds it
            zf.writestr(info, files[rel], compresslevel=9)
    return buf.getvalue()


def _image() -> tuple[bytes, str, int]:
    """(the bundle's bytes, their sha256, how many files it holds)."""
    files, _ = contents()
    data = zip_bytes(files)
    return data, hashlib.sha256(data).hexdigest(), len(files)


def build(output: Path) -> Bundle:
    """Write the bundle to ``output`` (atomically, executable) and ``output``.sha256 beside it."""
    data, digest, count = _image()
    write_atomic(output, data)
    output.chmod(0o755)
    write_atomic(output.with_name(output.name + ".sha256"), f"{digest}  {output.name}\n".encode())
    return Bundle(output, digest, len(data), count)


def ensure_bundle(folder: Path) -> Bundle:
    """The bundle of this installation in ``folder``, named by its content
    (``infersweep-bench-<sha12>.pyz``): built once, re-used by every later launch."""
    data, digest, count = _image()
    target = Path(folder) / f"infersweep-bench-{digest[:12]}.pyz"
    if not (target.is_file() and hashlib.sha256(target.read_bytes()).hexdigest() == digest):
        write_atomic(target, data)
        target.chmod(0o755)
    return Bundle(target, digest, len(data), count)
