"""screenshots/tune.svg still captures what the README shows: the simulated vLLM server started with
the committed schedule, watched with it, the energy panel's two schedule lines and the sweep it came from.

By hand, from tests/data/sweeps/vllm-tune-20261202T045955Z/schedule.json: K 4 to 3 requests, off from
4. The traffic runs at 8 requests, then 2. At 8 the schedule runs plain, and always-draft would have
spent 164.6 / 109.9 = 1.498 times its joules: 33.2 % of always-draft's saved there; at 2 it runs
always-draft's own K 4: nothing saved. A mix of the two saves more than 0 and at most 33.2 %.
"""

from __future__ import annotations

import html
import re

import pytest

from tui.screenshot_tune import capture_tuned

pytestmark = pytest.mark.slow  # a simulated server under traffic for several seconds


def svg_text(svg: str) -> str:
    """The screen's characters, one SVG text run after another."""
    runs = re.findall(r"<text[^>]*>([^<]*)</text>", svg)
    return html.unescape("".join(runs)).replace("\xa0", " ")


async def test_the_capture_shows_the_tuned_setting_and_the_saving(tmp_path) -> None:
    path = await capture_tuned(tmp_path, speedup=4.0, warm_up_s=8.0, seed=0)
    shown = svg_text(path.read_text(encoding="utf-8"))
    assert re.search(r"K [04] tuned, not read back", shown)  # vLLM exports no gauge of its K
    saved = re.search(r"saved ([\d,]+) J, ([\d.]+) % vs always-draft", shown)
    assert saved, shown
    assert int(saved[1].replace(",", "")) > 0
    assert 0 < float(saved[2]) <= 33.2
    assert "saved run: tests/data/sweeps/vllm-tune-20261202T045955Z" in shown
    assert "crossover ≈ 3.27" in shown  # the sweep the schedule came from, on the Sweep tab
