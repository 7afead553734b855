"""In-process cost of the YAML loader: parsing InferenceX's files, loading its catalog, the
share of the alias/depth bound, and how fast a "billion laughs" file is refused.

Fresh-process timings (matrix_speed.py) vary by tens of percent on a shared machine; the
minimum over many in-process repetitions shows a change of a few milliseconds.

    python benchmarks/perf/yaml_load.py --reference ../shared/reference/inferencex [--runs 30]

``--compare-loader OTHER/infersweep/yamldoc.py`` also times another version of the loader
(say, before a change), interleaved call by call with this one in the same process, so that
the load of a shared machine falls on both alike.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path

from infersweep.config.catalog import load_catalog
from infersweep.diagnostics import InputError
from infersweep.yamldoc import parse_yaml


def best(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def interleaved(a, b, runs: int) -> tuple[float, float]:
    """Best times of ``a`` and ``b``, called alternately."""
    ta, tb = [], []
    for _ in range(runs):
        for fn, out in ((a, ta), (b, tb)):
            start = time.perf_counter()
            fn()
            out.append(time.perf_counter() - start)
    return min(ta), min(tb)


def load_other(path: Path):
    spec = importlib.util.spec_from_file_location("other_yamldoc", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def laughs(levels: int = 10, width: int = 9) -> str:
    names = "abcdefghijklmnop"
    lines = ["a: &a [" + ",".join(["lol"] * width) + "]"]
    for i in range(1, levels):
        lines.append(f"{names[i]}: &{names[i]} [" + ",".join([f"*{names[i - 1]}"] * width) + "]")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reference", type=Path, default=Path("../shared/reference/inferencex"))
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--compare-loader", type=Path, help="another version's yamldoc.py")
    args = ap.parse_args()
    cfg = args.reference / "configs"
    files = [cfg / "amd-master.yaml", cfg / "nvidia-master.yaml", cfg / "runners.yaml",
             args.reference / "perf-changelog.yaml"]
    try:
        import yaml

        from infersweep import yamlbounds
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    except ImportError:
        yamlbounds = None
    print(f"| input (best of {args.runs}) | size | parse_yaml | of which the alias/depth bound |")
    print("|---|---|---|---|")
    for path in files:
        text = path.read_text()
        parse = best(lambda text=text, path=path: parse_yaml(text, str(path)), args.runs)
        bound = "n/a"
        if yamlbounds is not None:
            root = yaml.compose(text, Loader=loader)
            budget = yamlbounds.alias_budget(len(text))
            aliases = yamlbounds.may_have_aliases(text)
            spent = best(lambda root=root, budget=budget, aliases=aliases:
                         yamlbounds.measure(root, budget, aliases=aliases), args.runs)
            bound = f"{spent * 1e3:.2f} ms ({spent / parse:.1%})"
        print(f"| {path.name} | {len(text) / 1024:.0f} KiB | {parse * 1e3:.1f} ms | {bound} |")
    if args.compare_loader:
        other = load_other(args.compare_loader)
        print(f"\n| input (best of {args.runs}, interleaved) | this parse_yaml | other | "
              "difference |")
        print("|---|---|---|---|")
        for path in files:
            text = path.read_text()
            mine, theirs = interleaved(lambda text=text: parse_yaml(text),
                                       lambda text=text: other.parse_yaml(text), args.runs)
            print(f"| {path.name} | {mine * 1e3:.1f} ms | {theirs * 1e3:.1f} ms | "
                  f"{(mine - theirs) / theirs:+.1%} |")
        print()
    catalog = best(lambda: load_catalog(files[:2], files[2], strict_runners=False),
                   max(5, args.runs // 3))
    print(f"| load_catalog, amd + nvidia (schema and rules included) | | {catalog * 1e3:.0f} ms | |")
    bomb = laughs()

    def refuse():
        try:
            parse_yaml(bomb, "bomb.yaml")
        except InputError:
            return
        raise SystemExit("the billion-laughs file was accepted")

    if yamlbounds is not None:
        spent = best(refuse, args.runs)
        print(f"| billion laughs ({len(bomb)} bytes, 9^10 strings): refused | | "
              f"{spent * 1e3:.2f} ms | |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
