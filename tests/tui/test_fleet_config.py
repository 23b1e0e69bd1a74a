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
