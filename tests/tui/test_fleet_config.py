"""The servers of a several-server dashboard: --server and --meter repeated, or a TOML --config."""

from __future__ import annotations

import pytest

from collectors.errors import SpectopError
from tui import cli
from tui.commands import dashboard
from tui.config import ServerSpec, read_fleet

A, B = "http://10.0.0.1:8080", "http://10.0.0.2:8000"


def test_one_meter_is_shared_and_one_each_is_paired():
    shared = dashboard.servers_from(cli.parse(["--server", A, "--server", B, "--meter", "nvml"]))
    assert shared == [ServerSpec("10.0.0.1:8080", A, "nvml"), ServerSpec("10.0.0.2:8000", B, "nvml")]
    paired = dashboard.servers_from(
        cli.parse(["--server", A, "--server", B, "--meter", "nvml=0", "--meter", "nvml=1"])
    )
    assert [s.meter for s in paired] == ["nvml=0", "nvml=1"]
    with pytest.raises(SpectopError, match="3 --meter for 2 --server"):
        dashboard.servers_from(cli.parse(["--server", A, "--server", B, *["--meter", "none"] * 3]))
    with pytest.raises(SpectopError, match="given twice"):
        dashboard.servers_from(cli.parse(["--server", A, "--server", A + "/"]))


def test_a_config_file_lists_the_servers(tmp_path):
    path = tmp_path / "fleet.toml"
    path.write_text(
        f'[[server]]\nname = "gpu0"\nurl = "{A}/"\nmeter = "nvml=0"\n\n[[server]]\nurl = "{B}"\n',
        encoding="utf-8",
    )
    assert read_fleet(path) == [ServerSpec("gpu0", A, "nvml=0"), ServerSpec("10.0.0.2:8000", B, "auto")]
    assert dashboard.servers_from(cli.parse(["--config", str(path)])) == read_fleet(path)
    with pytest.raises(SpectopError, match="--config lists the servers"):
        dashboard.servers_from(cli.parse(["--config", str(path), "--server", A]))


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("[[server]\n", "is not TOML"),
        ('title = "x"\n', "no \\[\\[server\\]\\] tables"),
        ('[[server]]\nname = "a"\n', "server 1 has no url"),
        (f'[[server]]\nurl = "{A}"\nmetre = "nvml"\n', "unknown key 'metre'"),
        (
            f'[[server]]\nname = "a"\nurl = "{A}"\n[[server]]\nname = "a"\nurl = "{B}"\n',
            "name a is given twice",
        ),
    ],
)
def test_a_bad_config_file_is_one_line(tmp_path, text, said):
    path = tmp_path / "fleet.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SpectopError, match=said):
        read_fleet(path)
    with pytest.raises(SpectopError, match="cannot read --config"):
        read_fleet(tmp_path / "missing.toml")


def fleet_text(count: int) -> str:
    return "".join(f'[[server]]\nurl = "http://127.0.0.1:{9000 + i}"\n' for i in range(count))


@pytest.mark.slow
def test_a_config_file_that_never_ends_or_is_a_pipe_is_one_line(tmp_path):
    import os

    from tests.support.cli_runs import one_line, spectop

    fifo = tmp_path / "fleet.fifo"
    os.mkfifo(fifo)
    for path, said in (("/dev/zero", "is not a file"), (str(fifo), "is not a file")):
        run = spectop("--config", path, timeout_s=60)
        assert run.returncode == 2 and said in one_line(run.stderr)
    big = tmp_path / "big.toml"
    big.write_text(fleet_text(64) + "#" * (300 << 10), encoding="utf-8")
    with pytest.raises(SpectopError, match="longer than 256 KB"):
        read_fleet(big)


def test_a_fleet_larger_than_a_dashboard_watches_is_one_line_naming_the_way(tmp_path):
    path = tmp_path / "fleet.toml"
    path.write_text(fleet_text(64), encoding="utf-8")
    assert len(read_fleet(path)) == 64
    path.write_text(fleet_text(1000), encoding="utf-8")
    with pytest.raises(SpectopError, match="1000 servers: a dashboard watches at most 64") as too_many:
        read_fleet(path)
    assert "spectop export" in too_many.value.fix
    args = cli.parse([arg for i in range(65) for arg in ("--server", f"http://127.0.0.1:{9000 + i}")])
    with pytest.raises(SpectopError, match="65 servers"):
        dashboard.servers_from(args)
