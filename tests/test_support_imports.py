"""No test module imports from another test module or a conftest: shared helpers live in tests/support/.

Importing a test module runs its module-level code again under another name and, with pytest's
collection, can collect its tests twice; a helper hidden in a test file is also hard to find. The
scan reads every import under tests/, absolute or relative, at module level or inside a function.
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent


def module_file(root: Path, dotted: str) -> Path | None:
    """The file a dotted module name loads from under `root`, if there is one."""
    path = root.joinpath(*dotted.split("."))
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def imported_modules(root: Path, source: Path) -> list[tuple[int, str]]:
    """(line, dotted name) of every module `source` may import: `from a import b` gives a and a.b."""
    package = source.relative_to(root).parent.parts
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"), str(source))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            parts = list(package[: len(package) - node.level + 1]) if node.level else []
            base = ".".join([*parts, *([node.module] if node.module else [])])
            found.append((node.lineno, base))
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
    return found


def is_test_module(path: Path) -> bool:
    return path.name == "conftest.py" or (path.name.startswith("test_") and path.suffix == ".py")


def imports_of_test_modules(root: Path) -> list[str]:
    """'file:line imports module' for each import under root/tests that loads a test module or conftest."""
    bad = []
    for source in sorted((root / "tests").rglob("*.py")):
        for line, dotted in imported_modules(root, source):
            target = module_file(root, dotted) if dotted.startswith("tests.") else None
            if target is not None and target != source and is_test_module(target):
                bad.append(f"{source.relative_to(root).as_posix()}:{line} imports {dotted}")
    return bad


def test_no_test_module_imports_from_another_test_module():
    assert imports_of_test_modules(ROOT) == []


def test_the_scan_finds_every_form_of_such_an_import(tmp_path):
    # a throwaway tree: tests/a/test_x.py importing tests/b/test_y.py and a conftest four ways
    for package in ("tests", "tests/a", "tests/b"):
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
    for name in ("test_y.py", "conftest.py", "helpers.py"):
        (tmp_path / "tests" / "b" / name).write_text("HELPER = 1\n")
    (tmp_path / "tests" / "a" / "test_x.py").write_text(
        "from tests.b.test_y import HELPER\n"
        "import tests.b.test_y\n"
        "from tests.b import conftest, helpers\n"  # helpers.py is no test module: allowed
        "def f():\n"
        "    from ..b.test_y import HELPER\n"
    )
    assert imports_of_test_modules(tmp_path) == [
        "tests/a/test_x.py:1 imports tests.b.test_y",
        "tests/a/test_x.py:2 imports tests.b.test_y",
        "tests/a/test_x.py:3 imports tests.b.conftest",
        "tests/a/test_x.py:5 imports tests.b.test_y",
    ]
