"""collectors/ is UI-free: importing every module loads neither Textual nor Rich (ruff TID251 checks the source)."""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from pathlib import Path

import collectors

ROOT = Path(__file__).resolve().parents[1]


def all_collector_modules() -> list[str]:
    return [m.name for m in pkgutil.walk_packages(collectors.__path__, "collectors.")]


def test_importing_collectors_loads_no_ui_library():
    modules = all_collector_modules()
    assert len(modules) > 20  # the walk found the package, not an empty list
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich'))\n"
        "print(','.join(loaded))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == ""


def test_ruff_bans_ui_imports_under_collectors(tmp_path):
    probe = ROOT / "collectors" / "_hygiene_probe.py"
    probe.write_text("import rich\nfrom textual.app import App\n")
    try:
        out = subprocess.run([sys.executable, "-m", "ruff", "check", "--select", "TID251", str(probe)],
                             capture_output=True, text=True, cwd=ROOT)
    finally:
        probe.unlink()
    assert out.returncode != 0 and out.stdout.count("TID251") == 2
