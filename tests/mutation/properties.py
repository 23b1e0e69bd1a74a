"""Mutation testing of the `@property` bodies that mutmut 3 leaves out: it skips every decorated
function, and the figures a user sees most (a snapshot's acceptance, G, width and survival, a
request's steps and tok/s, an attribution's mJ/token) are properties.

Run by hand after `mutmut run` (collectors/docs/mutation.md): `python tests/mutation/properties.py [--workers 2]
[--only 'collectors.requests.record.*']` (Python 3.11+ and mutmut 3: `pip install mutmut`).
Each property of the `[tool.mutmut] only_mutate` modules is mutated with mutmut's own operators, one
mutant at a time, in a scratch copy of the tree (no bytecode cache, so no stale import); the same
test selection as `mutmut run` runs against it, the test files that name the property first, with
`-x`. A mutant no test fails survives; the survivors' diffs go to mutants/properties.txt.
`--named-only` runs the files that name the property and nothing else, less the `slow` simulated
sweeps: a survivor then costs seconds, not the whole selection, and is checked by hand.
"""

from __future__ import annotations

import argparse
import difflib
import fnmatch
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import libcst as cst
import tomllib
from libcst.metadata import MetadataWrapper
from mutmut.mutation.file_mutation import MutationVisitor
from mutmut.mutation.mutators import mutation_operators
from mutmut.mutation.pragma_handling import get_ignored_lines

ROOT = Path(__file__).resolve().parents[2]
COPIED = ("collectors", "tui", "tests", "pyproject.toml")
TIMEOUT_S = 300


def is_property(node: cst.FunctionDef) -> bool:
    """`@property` or `@name.setter`."""
    for d in node.decorators:
        target = d.decorator
        if isinstance(target, cst.Name) and target.value == "property":
            return True
        if isinstance(target, cst.Attribute) and target.attr.value == "setter":
            return True
    return False


class PropertyVisitor(MutationVisitor):
    """mutmut's visitor, told to go into properties (it skips decorated functions)."""

    def _skip_node_and_children(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.FunctionDef) and is_property(node):
            return False
        return super()._skip_node_and_children(node)


@dataclass
class Mutant:
    name: str
    path: str
    source: str
    diff: str
    first_tests: list[str]


def property_mutants(path: str) -> list[Mutant]:
    code = (ROOT / path).read_text()
    wrapper = MetadataWrapper(cst.parse_module(code))
    visitor = PropertyVisitor(mutation_operators, get_ignored_lines(path, code, wrapper))
    wrapper.visit(visitor)
    owner: dict[int, str] = {}  # node id -> Class.property
    for cls in [n for n in wrapper.module.body if isinstance(n, cst.ClassDef)]:
        for fn in cls.body.body:
            if isinstance(fn, cst.FunctionDef) and is_property(fn) and not _is_stub(fn):
                for node in _walk(fn.body):
                    owner[id(node)] = f"{cls.name.value}.{fn.name.value}"
    mutants, numbers = [], Counter()
    module = path[:-3].replace("/", ".")
    for mutation in visitor.mutations:
        where = owner.get(id(mutation.original_node))
        if where is None:
            continue  # not in a property: mutmut's own run covers it
        numbers[where] += 1
        mutated = wrapper.module.deep_replace(mutation.original_node, mutation.mutated_node).code
        diff = "".join(difflib.unified_diff(code.splitlines(True), mutated.splitlines(True), path, path, n=1))
        name = f"{module}.{where}__{numbers[where]}"
        mutants.append(Mutant(name, path, mutated, diff, tests_naming(where.split(".")[1])))
    return mutants


def _is_stub(fn: cst.FunctionDef) -> bool:
    """A Protocol's `...` body: nothing to mutate that runs."""
    body = fn.body.body
    return len(body) == 1 and "..." in cst.Module([]).code_for_node(body[0])


def _walk(node: cst.CSTNode):
    yield node
    for child in node.children:
        yield from _walk(child)


def selection() -> tuple[list[str], list[str]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mutmut"]
    return config["only_mutate"], config["pytest_add_cli_args_test_selection"] + config["pytest_add_cli_args"]


def options_only() -> list[str]:
    """The selection's pytest options without its paths (`-p no:cacheprovider -x -q`)."""
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mutmut"]["pytest_add_cli_args"]


def tests_naming(name: str) -> list[str]:
    return sorted(
        str(p.relative_to(ROOT))
        for p in (ROOT / "tests" / "collectors").rglob("test_*.py")
        if name in p.read_text()
    )


def worker(jobs: queue.Queue, results: list, args: list[str]) -> None:
    scratch = Path(tempfile.mkdtemp(prefix="spectop-properties-"))
    try:
        for name in COPIED:
            src = ROOT / name
            if src.is_dir():
                shutil.copytree(src, scratch / name, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                shutil.copy2(src, scratch / name)
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
        while True:
            try:
                mutant = jobs.get_nowait()
            except queue.Empty:
                return
            target = scratch / mutant.path
            original = target.read_text()
            target.write_text(mutant.source)
            ignored = [a.split("=", 1)[1] for a in args if a.startswith("--ignore=")]
            first = [t for t in mutant.first_tests if not any(t.startswith(i) for i in ignored)]
            command = [sys.executable, "-m", "pytest", *first, *args]
            try:
                run = subprocess.run(command, cwd=scratch, env=env, capture_output=True, timeout=TIMEOUT_S)
                status = "survived" if run.returncode == 0 else "killed"
                if run.returncode not in (0, 1):  # 2+: collection errors, interrupted, no tests
                    status = f"error {run.returncode}"
            except subprocess.TimeoutExpired:
                status = "timeout"
            finally:
                target.write_text(original)
            results.append((mutant, status))
            print(f"{status:>9}  {mutant.name}", flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--only", default="*", help="glob over mutant names, e.g. 'collectors.requests.record.*'"
    )
    parser.add_argument(
        "--named-only",
        action="store_true",
        help="run only the test files that name the property (minutes less per survivor; a mutant that"
        " survives them may still die in the whole selection: check each by hand)",
    )
    options = parser.parse_args()
    globs, args = selection()
    if options.named_only:
        args = [a for a in args if a.startswith("--ignore=")] + options_only() + ["-m", "not slow"]
    files = sorted(
        str(p.relative_to(ROOT))
        for p in (ROOT / "collectors").rglob("*.py")
        if any(fnmatch.fnmatch(str(p.relative_to(ROOT)), g) for g in globs)
    )
    mutants = [m for f in files for m in property_mutants(f) if fnmatch.fnmatch(m.name, options.only)]
    jobs: queue.Queue = queue.Queue()
    for m in mutants:
        jobs.put(m)
    results: list = []
    threads = [threading.Thread(target=worker, args=(jobs, results, args)) for _ in range(options.workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    by_module: dict[str, Counter] = {}
    for mutant, status in results:
        by_module.setdefault(mutant.path, Counter())[status] += 1
    report = ["# property mutants per module"]
    for path, counts in sorted(by_module.items()):
        report.append(
            f"{path}: {sum(counts.values())} mutants, "
            + ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
        )
    report += [
        f"\n# {m.name}: {s}\n{m.diff}" for m, s in sorted(results, key=lambda r: r[0].name) if s != "killed"
    ]
    out = ROOT / "mutants" / "properties.txt"
    out.parent.mkdir(exist_ok=True)
    out.write_text("\n".join(report) + "\n")
    print("\n".join(report[: len(by_module) + 1]))
    print(f"survivors' diffs: {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
