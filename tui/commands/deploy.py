"""`spectop deploy DIR`: write the Prometheus + Grafana pack, with spectop's source to build it from.

The pack (tui/deploy/) is a compose file starting Prometheus, Grafana and one `spectop export`
against the simulated server pair, the alert rules, the Grafana dashboard and its provisioning.
It ships inside the package, so whoever installed spectop has it; the compose file builds spectop
from the source copied beside it (`spectop-src/`), so no registry needs to hold spectop.
Pitfalls handled: an existing, non-empty DIR is never written into (a pack the user edited, or
anything else, would be overwritten); Grafana gets an admin password of its own, made here,
printed once and written to a file only the user can read (no admin/admin, no anonymous access);
every port is published on loopback, and the compose file says how to open one.
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import sys
from importlib import resources
from pathlib import Path

from collectors.errors import SpectopError

NAME = "deploy"
HELP = "write a Prometheus + Grafana pack (docker compose) for spectop's exporter"
DESCRIPTION = (
    "Write compose.yaml, Prometheus' config and alert rules, a Grafana dashboard and spectop's "
    "source into DIR; then `docker compose -f DIR/compose.yaml up` shows the fleet view."
)
SOURCE_PARTS = ("pyproject.toml", "README.md", "LICENSE", "collectors", "tui")
PASSWORD_FILE = "grafana-admin-password"


def add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("pack_dir", type=Path, metavar="DIR", help="a new (or empty) folder for the pack")


def source_root() -> Path:
    """The folder spectop runs from, when it is a source tree (a checkout, or an editable install)."""
    root = Path(__file__).resolve().parents[2]
    if not all((root / part).exists() for part in SOURCE_PARTS):
        raise SpectopError(
            "spectop's source is not beside the installed package",
            "run spectop deploy from a checkout (pip install -e .), whose source the image is built from",
        )
    return root


def write_pack(pack_dir: Path) -> list[Path]:
    """Copy the pack and spectop's source into `pack_dir`; the files written, relative to it."""
    if pack_dir.exists() and (not pack_dir.is_dir() or any(pack_dir.iterdir())):
        raise SpectopError(f"{pack_dir} exists and is not an empty folder", "give a new folder")
    root = source_root()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    try:
        with resources.as_file(resources.files("tui") / "deploy") as pack_path:
            shutil.copytree(pack_path, pack_dir, dirs_exist_ok=True, ignore=ignore)
        source = pack_dir / "spectop-src"
        source.mkdir()
        for part in SOURCE_PARTS:  # tui/ brings the pack along: the image carries it too
            if (root / part).is_dir():
                shutil.copytree(root / part, source / part, ignore=ignore)
            else:
                shutil.copy2(root / part, source / part)
        write_password(pack_dir / PASSWORD_FILE, secrets.token_urlsafe(18))
    except OSError as exc:
        raise SpectopError(
            f"cannot write the pack to {pack_dir}: {exc.strerror}", "check the folder"
        ) from exc
    return sorted(p.relative_to(pack_dir) for p in pack_dir.rglob("*") if p.is_file())


def write_password(path: Path, password: str) -> None:
    """`password` in a new file that only its owner can read (made so, not narrowed after)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as file:
        file.write(password)


def run(args: argparse.Namespace) -> int:
    files = write_pack(args.pack_dir)
    shown = [f for f in files if f.parts[0] != "spectop-src"]
    print("\n".join(str(args.pack_dir / f) for f in shown))
    password = (args.pack_dir / PASSWORD_FILE).read_text(encoding="utf-8")
    print(
        f"spectop deploy: {len(shown)} files and spectop's source in {args.pack_dir}\n"
        f"  next: docker compose -f {args.pack_dir / 'compose.yaml'} up\n"
        "  then Grafana on http://localhost:3000, Prometheus on http://localhost:9090 (loopback only;\n"
        "  compose.yaml says how to open them to the network)\n"
        f"  Grafana: user admin, password {password} (shown once; kept in {args.pack_dir / PASSWORD_FILE})",
        file=sys.stderr,
    )
    return 0
