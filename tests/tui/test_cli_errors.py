"""Bad input to the headless commands gives one clear line and exit code 2, never a traceback."""

from __future__ import annotations

import pytest

from tui.cli import main


@pytest.mark.parametrize("command", ["snapshot", "probe"])
@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("http://127.0.0.1:9", "cannot reach http://127.0.0.1:9"),
        ("localhost:8080", "not a valid server URL"),
        ("nonsense", "not a valid server URL"),
    ],
)
def test_bad_server_urls(command, url, says, capsys):
    assert main([command, "--server", url]) == 2
    err = capsys.readouterr().err
    assert says in err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_probe_rejects_zero_tokens(capsys):
    assert main(["probe", "--server", "http://127.0.0.1:9", "--tokens", "0"]) == 2
    assert "--tokens must be a whole number from 1 to 1,000,000, not '0'" in capsys.readouterr().err


def test_help_lists_the_commands(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "snapshot" in out and "probe" in out


def test_a_misspelt_option_gets_the_commands_usage_and_the_likely_option(capsys):
    from tui.cli import main

    try:
        code = main(["snapshot", "--sever", "http://127.0.0.1:9"])
    except SystemExit as stop:  # argparse's own exit
        code = stop.code
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("usage: spectop snapshot ")
    assert (
        "spectop snapshot: error: unrecognized arguments: --sever http://127.0.0.1:9; did you mean --server?"
        in err
    )


def test_every_option_of_every_command_says_what_it_does():
    import argparse

    from tui.cli import build_parser

    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    silent = [
        f"{name} {'/'.join(action.option_strings) or action.dest}"
        for name, command in commands.choices.items()
        for action in command._actions
        if not isinstance(action, argparse._HelpAction) and not action.help
    ]
    assert silent == []


@pytest.mark.slow
def test_the_demo_takes_a_privileged_port_only_when_asked():
    from tests.support.cli_runs import one_line, spectop

    run = spectop("demo", "--serve-only", "--port", "80")
    assert run.returncode == 2
    assert "--port 80 is a privileged port" in one_line(run.stderr) and "--privileged-port" in run.stderr
