"""SGLang's acceptance is accepted drafts / drafted tokens on every release, though `spec_accept_rate`
meant something else before 0.5.11 (pages and source lines: tests/support/sglang_versions.py).

Worked by hand over one window of F = 400 request-verifies (0.5.9 computes as 0.5.10; 0.4.10 has
the length gauge only, and its tokens from the finished-request counter):
- chain EAGLE, 3 steps, D = 4: A = 600 accepted of 400 × 3 drafted: acceptance 0.5, L = 2.5;
  the rate gauge reads 0.625 on 0.5.4 and 0.5.10 (L / 4), 0.5 on 0.5.11;
- tree EAGLE, 3 steps, top-k 4, D = 8: A = 600 of 400 × 7: acceptance 600 / 2800 = 3/14, L = 2.5;
  the gauge reads 2.5 / 4 = 0.625 on 0.5.4, 2.5 / 8 = 0.3125 on 0.5.10, 3/14 on 0.5.11.
"""

from __future__ import annotations

import pytest

from collectors.servers.sglang import accept as sglang_accept
from collectors.servers.sglang import collector as sglang
from tests.support.polls import sglang_raw
from tests.support.sglang_versions import info, page, rate_of

URL = "http://127.0.0.1:30000"
VERSIONS = ("0.4.10", "0.5.4", "0.5.9", "0.5.10", "0.5.11")
RATED = VERSIONS[1:]  # 0.4.10 has no rate gauge


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize(("draft_tokens", "topk", "truth"), [(4, 1, 0.5), (8, 4, 3 / 14)])
def test_every_release_shows_accepted_over_drafted(version, draft_tokens, topk, truth):
    before = sglang_raw(page(version, 600, draft_tokens, 1000), 0.0, info=info(version, draft_tokens, topk))
    after = sglang_raw(page(version, 600, draft_tokens, 1250), 1.0, info=info(version, draft_tokens, topk))
    snap = sglang.derive(before, after, URL)
    assert snap.window_tokens == 250
    assert snap.acceptance == pytest.approx(truth)
    assert snap.mean_advance == pytest.approx(2.5)


def test_the_gauges_differ_as_the_source_says():
    assert [rate_of(v, 600, 4) for v in RATED] == pytest.approx([0.625, 0.625, 0.625, 0.5])
    assert [rate_of(v, 600, 8) for v in RATED] == pytest.approx([0.625, 0.3125, 0.3125, 3 / 14])


@pytest.mark.parametrize(
    ("version", "rate", "truth"),
    [
        ("0.5.11", 0.5, 0.5),
        ("0.5.23", 0.5, 0.5),
        ("0.5.10.post1", 0.625, 0.5),
        ("0.5.9", 0.625, 0.5),
        ("0.5.4", 0.625, 0.5),
    ],
)
def test_without_the_length_the_rate_is_read_by_its_release(version, rate, truth):
    args = {"speculative_num_steps": 3, "speculative_num_draft_tokens": 4, "version": version}
    assert sglang_accept.acceptance(rate, None, 4, args) == pytest.approx(truth)


def test_a_rate_of_unknown_meaning_is_unknown():
    assert sglang_accept.acceptance(0.625, None, 4, {"speculative_num_steps": 3}) is None  # no version
    assert sglang_accept.acceptance(0.625, None, None, {"version": "0.5.10"}) is None  # no width, no steps
    assert sglang_accept.version_tuple("0.5.10.post1") == (0, 5, 10)
    assert sglang_accept.version_tuple(5) is None and sglang_accept.version_tuple("dev") is None


def test_0_4_10_without_its_length_gauge_is_unknown():
    args = {"speculative_num_steps": 3, "speculative_num_draft_tokens": 4, "version": "0.4.10"}
    assert sglang_accept.acceptance(None, None, 4, args) is None
