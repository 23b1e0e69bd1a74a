"""One poll of each dialect built from a page's text, and llama-server pages with set counters."""

from __future__ import annotations

import re

from collectors import promtext
from collectors.servers.sglang import collector as sglang
from collectors.servers.vllm import collector as vllm
from tests.support.captures import read_text
from tests.support.fake_sglang import SglangRank, SglangTokenizer

# two SGLang DP ranks and the tokenizer manager's counters, used by several SGLang tests
R0 = SglangRank(
    decode_tokens=2800,
    prefill_tokens=9000,
    running=6,
    queued=1,
    accept_length=2.8,
    accept_rate=0.6,
    token_usage=0.5,
)
R1 = SglangRank(
    decode_tokens=1000,
    prefill_tokens=3000,
    running=2,
    queued=0,
    accept_length=2.0,
    accept_rate=1 / 3,
    token_usage=0.25,
)
TOK = SglangTokenizer(generated_streaming=2900, generated_plain=100, verify_calls=1000, prompt=12000)


def vllm_raw(page: str, t_s: float, **kw) -> vllm.RawPoll:
    return vllm.RawPoll(t_s, metrics=promtext.parse(page), **kw)


def sglang_raw(page: str, t_s: float, info: dict | None = None, loads: list | None = None) -> sglang.RawPoll:
    return sglang.RawPoll(t_s, metrics=promtext.parse(page), info=info, loads=loads)


def llama_page(stage: str) -> str:
    """The drafting capture's /metrics page at `stage` (before, busy, after...)."""
    return read_text(f"draft-simple.metrics.{stage}.txt")


def llama_format(value: float) -> str:
    """A double as llama-server's default std::stringstream writes it: 6 significant digits."""
    return f"{value:g}"


def llama_at(text: str, **values: float) -> str:
    """A metrics page with some scalar counters set, written as llama-server writes them."""
    for name, value in values.items():
        text = re.sub(rf"^(llamacpp:{name}) \S+$", rf"\g<1> {llama_format(value)}", text, flags=re.M)
    return text
