"""The --meter specs explained once (`spectop help meters`), not repeated in every command's --help."""

from __future__ import annotations

import argparse

import pytest

from tui import cli

# the specs the README lists for --meter, and what three of them read (collectors/docs/meters.md)
README_SPECS = (
    "auto",
    "nvml[:0,1]",
    "amd[:0,1]",
    "rapl[=ROOT]",
    "macmon[=EXE]",
    "dcgm=URL",
    "node=URL",
    "prometheus=URL",
    "estimate[=TDP_W]",
    "none",
)


def commands_with_a_meter() -> list[str]:
    parser = cli.build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return [
        name
        for name, command in commands.choices.items()
        if any("--meter" in action.option_strings for action in command._actions)
    ]


def test_help_meters_prints_every_spec_and_what_it_reads(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    assert cli.main(["help", "meters"]) == 0
    out = capsys.readouterr().out
    starts = [line.split()[0] for line in out.splitlines() if line.startswith("  ") and line[2] != " "]
    assert starts == list(README_SPECS)
    flat = " ".join(out.split())
    assert "dcgm=URL a remote dcgm-exporter page" in flat
    assert "rapl[=ROOT] CPU package (+DRAM) via Linux powercap sysfs (needs root)" in flat
    assert "none no meter: energy figures are left out" in flat
    assert "spectop doctor" in flat


def test_the_command_list_names_the_help_topic(capsys):
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    assert "spectop help meters" in capsys.readouterr().out


def test_every_meter_help_is_at_most_two_lines_pointing_to_help_meters(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")  # a terminal of the usual width
    names = commands_with_a_meter()
    assert {"dashboard", "doctor", "export", "probe", "snapshot", "sweep", "watch"} <= set(names)
    for name in names:
        with pytest.raises(SystemExit):
            cli.main([name, "--help"])
        lines = capsys.readouterr().out.splitlines()
        start = next(i for i, line in enumerate(lines) if line.lstrip().startswith("--meter SPEC"))
        end = next(
            i for i in range(start + 1, len(lines) + 1) if i == len(lines) or lines[i].startswith("  -")
        )
        text = " ".join(" ".join(lines[start:end]).split())
        assert end - start <= 2, (name, lines[start:end])
        if name != "demo":  # demo's --meter is only for --llama, and says its own default
            assert "spectop help meters" in text, name


def test_a_help_topic_that_does_not_exist_is_argparses_one_line(capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(["help", "colours"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'colours'" in err and "meters" in err.splitlines()[-1]
