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
