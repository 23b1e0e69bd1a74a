"""Two vLLM engines' counters and what one window adds to each, worked by hand.

Counters as vLLM keeps them (collectors/docs/servers.md, vLLM): every emitted token is a request's first
(prefill) token, a step's own token or an accepted draft, so generated = first tokens + steps +
accepted, where steps are the step-latency histogram's observations (one per request per decode
step after the first). Over the window (E0 + D0, E1 + D1), summed over both engines: 360 tokens,
360 drafted, 230 accepted, 130 steps of which 120 drafted, (110, 78, 42) accepted per position.
"""

from __future__ import annotations

from tests.support.fake_servers import VllmEngine

E0 = VllmEngine(
    generated=2900,  # 100 first tokens + 1000 steps + 1800 accepted
    prompt=5000,
    drafts=1000,
    draft_tokens=3000,
    accepted=1800,
    per_pos=(800, 600, 400),
    running=8,
    waiting=1,
    steps=1100,
    itl=1000,
)
E1 = VllmEngine(
    generated=700,  # 20 first tokens + 380 steps + 300 accepted; 300 of the 380 steps drafted
    prompt=900,
    drafts=300,
    draft_tokens=900,
    accepted=300,
    per_pos=(200, 80, 20),
    running=2,
    waiting=0,
    steps=400,
    itl=380,
)
# one window: engine 0 (EAGLE-like) drafted on all its 100 steps, 300 tokens, and kept 200;
# engine 1 (n-gram-like) drafted on 20 of its 30 steps, 60 tokens, and kept 30
D0 = VllmEngine(
    generated=300,
    prompt=10,
    drafts=100,
    draft_tokens=300,
    accepted=200,
    per_pos=(90, 70, 40),
    running=6,
    waiting=2,
    steps=25,
    itl=100,
)
D1 = VllmEngine(
    generated=60,
    prompt=0,
    drafts=20,
    draft_tokens=60,
    accepted=30,
    per_pos=(20, 8, 2),
    running=1,
    waiting=0,
    steps=10,
    itl=30,
)
