"""Load profiles: token shares by batch from a given list, a recording or the ledger."""

from __future__ import annotations

import pytest

from collectors.errors import SpectopError
from collectors.tune.profile import even, load_profile
from tests.support.recordings import DEMO_RECORDING


def test_given_shares_are_normalised():
    # 2 + 1 + 1 = 4: halves and quarters; a batch given twice adds up
    profile = load_profile("1:2, 4:1,16:0.5,16:0.5")
    assert profile.token_share == {1: 0.5, 4: 0.25, 16: 0.25}


def test_a_recordings_tokens_at_each_batch_level():
    # the demo recording's poll windows: 261 tokens at 1, 680 at 2, 305 at 3 (spectop report FILE)
    profile = load_profile(str(DEMO_RECORDING))
    assert profile.token_share == pytest.approx({1: 261 / 1246, 2: 680 / 1246, 3: 305 / 1246})
    assert profile.source == "recording demo.jsonl"


def test_every_measured_batch_alike():
    assert even((1, 2, 4, 8)).token_share == {1: 0.25, 2: 0.25, 4: 0.25, 8: 0.25}


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("0:1,4:1", "a batch is a whole number from 1"),
        ("1:0,4:0", "has no tokens served at any batch"),
        ("weekdays", "is not a recording, the ledger or B:SHARE pairs"),
        ("ledger:soon", "give an age such as 7d"),
    ],
)
def test_what_is_no_profile(spec, says, tmp_path):
    with pytest.raises(SpectopError, match=says):
        load_profile(spec, tmp_path / "ledger.sqlite")


def test_a_missing_ledger(tmp_path):
    with pytest.raises(SpectopError, match="no energy ledger at"):
        load_profile("ledger", tmp_path / "none.sqlite")
