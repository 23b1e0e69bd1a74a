"""collectors/ is UI-free: every module imports with Textual and Rich made unimportable (ruff TID251 checks
the source). Blocking them, rather than looking for them in sys.modules afterwards, keeps the test true when a
third-party library loads Rich on its own (httpx does when its optional CLI extras are installed)."""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from pathlib import Path

import collectors

ROOT = Path(__file__).resolve().parents[1]


def all_collector_modules() -> list[str]:
    return [m.name for m in pkgutil.walk_packages(collectors.__path__, "collectors.")]


def test_every_collectors_module_imports_without_ui_libraries():
    modules = all_collector_modules()
    assert len(modules) > 20  # the walk found the package, not an empty list
    code = (
        "import importlib, sys\n"
        "sys.modules['textual'] = sys.modules['rich'] = None  # any import of them now raises ImportError\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "print('imported', len(" + repr(modules) + "))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"imported {len(modules)}"


def test_the_block_catches_a_ui_import(tmp_path):
    # the same check against a module that does import Rich must fail
    (tmp_path / "uses_rich.py").write_text("import rich.console\n")
    code = f"import sys; sys.modules['rich'] = None; sys.path.insert(0, {str(tmp_path)!r}); import uses_rich"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode != 0 and "rich" in out.stderr.splitlines()[-1]


def test_ruff_bans_ui_imports_under_collectors(tmp_path):
    probe = ROOT / "collectors" / "_hygiene_probe.py"
    probe.write_text("import rich\nfrom textual.app import App\n")
    try:
        out = subprocess.run(
            [sys.executable, "-m", "ruff", "check", "--select", "TID251", str(probe)],
            capture_output=True,
            text=True,
            cwd=ROOT,
        )
    finally:
        probe.unlink()
    assert out.returncode != 0 and out.stdout.count("TID251") == 2


def test_the_dashboards_first_frame_loads_no_numpy():
    """numpy is the slowest import on the dashboard's way to its first frame (about 0.1 s warm, over
    a second cold, issue 28's 1 s goal): the CLI, the app and the dashboard command load none; the
    percentile and interpolation code imports it at its first use."""
    code = (
        "import sys\n"
        "import tui.cli, tui.app, tui.commands.dashboard\n"
        "print(sorted(m for m in ('numpy', 'uvicorn') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
