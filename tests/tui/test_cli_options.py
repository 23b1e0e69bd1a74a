"""Where options go on the command line: after the command, or alone for the dashboard; never dropped."""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

from tui import cli, commands
from tui.commands import dashboard, doctor, export, probe
from tui.commands._common import DEFAULT_SERVER, api_key

ROOT = Path(__file__).resolve().parents[2]
URL = "http://127.0.0.1:9"  # nothing listens there: no test below may reach a server


@pytest.mark.parametrize(
    ("argv", "typed"),
    [
        (["--meter", "none", "--server", URL, "probe"], f"spectop probe --meter none --server {URL}"),
        (["--server", URL, "snapshot", "--json"], f"spectop snapshot --server {URL} --json"),
        (["--meter", "none", "doctor"], "spectop doctor --meter none"),
        (["--plain", URL, "sweep", "--draft", URL], f"spectop sweep --plain {URL} --draft {URL}"),
        # --results takes a value: the folder named like a command is that value, the second word the command
        (["--results", "sweep", "sweep", "--plain", URL], f"spectop sweep --results sweep --plain {URL}"),
    ],
)
def test_options_before_a_command_stop_with_the_line_to_type(argv, typed, capsys):
    assert cli.main(argv) == 2
    captured = capsys.readouterr()
    assert captured.err.strip().splitlines() == [
        f"spectop: options before the command {typed.split()[1]!r} are not read (put them after it: {typed})"
    ]
    assert captured.out == ""


@pytest.mark.parametrize("key_words", [["--api-key", "s3cret"], ["--api-key=s3cret"], ["--api", "s3cret"]])
def test_the_line_to_type_never_shows_the_api_key(key_words, capsys):
    assert cli.main([*key_words, "--server", URL, "probe"]) == 2
    err = capsys.readouterr().err
    assert "s3cret" not in err
    assert "KEY --server" in err or "=KEY --server" in err


def test_dashboard_options_alone_open_the_dashboard(monkeypatch):
    monkeypatch.setenv("SPECTOP_API_KEY", "from-env")
    for argv in (["--server", URL, "--meter", "none"], ["dashboard", "--server", URL, "--meter", "none"]):
        args = cli.parse(argv)
        assert args.run is dashboard.run and (args.server, args.meter) == ([URL], ["none"])
        settings = dashboard.settings_from(args)
        assert (settings.server_url, settings.api_key) == (URL, "from-env")
    bare = cli.parse([])
    assert bare.run is dashboard.run and (bare.server, bare.meter) == ([DEFAULT_SERVER], ["auto"])
    # a results folder named like a command is the folder, not the command
    assert cli.parse(["--results", "report"]).results == Path("report")
    with pytest.raises(SystemExit) as stop:  # an option the dashboard lacks is an error, not dropped
        cli.parse(["--server", URL, "--tokens", "3"])
    assert stop.value.code == 2


def test_options_after_the_command_apply(monkeypatch):
    monkeypatch.delenv("SPECTOP_API_KEY", raising=False)
    args = cli.parse(["probe", "--meter", "none", "--server", URL, "--api-key", "k"])
    assert args.run is probe.run and (args.server, args.meter, api_key(args)) == (URL, "none", "k")
    assert cli.parse(["export"]).run is export.run and cli.parse(["export"]).server == [DEFAULT_SERVER]
    assert cli.parse(["doctor"]).run is doctor.run and cli.parse(["doctor"]).server is None


# the dashboard's and export's --server and --meter repeat (several servers): their help says so
SHARED = {
    "--server": ("probe", "snapshot"),
    "--api-key": ("dashboard", "export", "probe", "snapshot", "sweep"),
    "--meter": ("doctor", "probe", "snapshot", "sweep"),
    "--json": ("doctor", "probe", "snapshot", "sweep"),
    "--results": ("dashboard", "sweep"),
    "--interval": ("dashboard", "export"),
    "--draft-cmd": ("dashboard", "sweep"),
}


def help_line(command: str, option: str, capsys) -> str:
    with pytest.raises(SystemExit):
        cli.main([command, "--help"])
    lines = [" ".join(ln.split()) for ln in capsys.readouterr().out.splitlines()]  # column widths vary
    return next(ln for ln in lines if ln.startswith(f"{option} "))


@pytest.mark.parametrize("option", SHARED)
def test_a_shared_option_reads_the_same_in_every_command(option, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "1000")  # each option's help on one line
    lines = {help_line(command, option, capsys) for command in SHARED[option]}
    assert len(lines) == 1, lines


def test_every_command_module_is_registered():
    modules = {m.name for m in pkgutil.iter_modules(commands.__path__) if not m.name.startswith("_")}
    assert set(commands.MODULES.values()) == modules
    assert all(commands.load(name).NAME == name for name in commands.MODULES)
    assert "dashboard" in commands.MODULES


@pytest.mark.parametrize(
    ("argv", "module"),
    [
        (["--server", "http://127.0.0.1:9"], "dashboard"),
        (["probe", "--server", "http://127.0.0.1:9"], "probe"),
    ],
)
def test_a_command_line_imports_only_its_own_command(argv, module):
    """The dashboard's first frame does not wait on the other commands' imports (the simulator, the
    sweep, the exporter): a fresh process, as `spectop` starts."""
    code = (
        "import sys; from tui import cli; cli.parse(sys.argv[1:]); "
        "print(' '.join(m for m in sys.modules if m.startswith('tui.commands.')))"
    )
    run = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, check=True)
    loaded = {name.rsplit(".", 1)[1] for name in run.stdout.split()}
    assert loaded & set(commands.MODULES.values()) == {"dashboard", module}


def test_help_and_version_still_answer(capsys):
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    out = capsys.readouterr().out
    assert "dashboard" in out and "spectop --server URL" in out
    listed = {line.split()[0] for line in out.splitlines() if line.startswith("    ") and line[4] != " "}
    assert listed == set(commands.MODULES)  # every command, though only the one typed is imported to run
    with pytest.raises(SystemExit):
        cli.main(["--version"])
    assert capsys.readouterr().out.strip() == "spectop 0.1.0"


@pytest.mark.slow
def test_a_misplaced_command_as_a_user_types_it():
    out = subprocess.run(
        [sys.executable, "-m", "tui", "--meter", "none", "--server", URL, "probe"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.splitlines() == [
        "spectop: options before the command 'probe' are not read "
        f"(put them after it: spectop probe --meter none --server {URL})"
    ]
