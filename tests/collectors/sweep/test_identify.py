"""Every sweep row says which server it ran on: build, model, drafting and slots, for every dialect."""

from __future__ import annotations

import pytest

from collectors.sweep.arms import make_arms
from collectors.sweep.codec import to_json
from collectors.sweep.plan import PointKey, SweepPlan
from collectors.sweep.session import SweepSession
from tests.support.fake_servers import MODEL, FakeVllm, VllmEngine
from tests.support.fake_sglang import FakeSglang, SglangRank
from tests.support.loopback import serving


@pytest.mark.parametrize(
    ("fake", "expected"),
    [
        (
            FakeVllm([VllmEngine(running=1, per_pos=(0, 0, 0))], dev_mode=True, max_num_seqs=64),
            {"backend": "vllm", "build": "0.33.0", "model": MODEL, "drafting": True, "slots_total": 64},
        ),
        (
            FakeSglang([SglangRank()]),
            {"backend": "sglang", "model": MODEL, "drafting": True},
        ),
    ],
    ids=["vllm", "sglang"],
)
def test_the_sweep_identifies_every_dialect(fake, expected, tmp_path):
    with serving(fake) as url:
        sweep = SweepSession(
            SweepPlan(batches=(1,)), make_arms(url, url), None, tmp_path, lambda: False, None
        )
        assert sweep.ready(PointKey(0, 1, "plain", "before")) == url
    info = to_json(sweep.identity["plain"])
    assert info["url"] == url and info["command"] == f"(running at {url})"
    assert {k: info[k] for k in expected} == expected
    assert {"build", "model", "drafting", "slots_total"} <= info.keys()
    assert info["build"] and info["slots_total"]
