"""A real llama-server on the tiny generated models: plain, drafting, and a draft loaded but unused."""

from __future__ import annotations

import re
import time
from collections.abc import Callable

import httpx
import pytest

from collectors.launch.process import ServerProcess, derive_plain_argv, has_speculative_flags, is_void_draft
from collectors.servers.llamacpp.tinymodels import ModelPair

StartServer = Callable[..., ServerProcess]
pytestmark = pytest.mark.llama

PROMPTS = (
    "Write a short story about the sun and the river.",
    "Explain why speculative decoding saves energy per token.",
    "Hello, please measure the power of this server before the next batch.",
)
N_PREDICT = 48


def complete(server: ServerProcess, prompt: str, n_predict: int = N_PREDICT) -> dict:
    """One non-streamed temperature-0 `/completion` with a fixed output length."""
    body = {
        "prompt": prompt,
        "n_predict": n_predict,
        "temperature": 0,
        "ignore_eos": True,
        "cache_prompt": False,
    }
    response = httpx.post(server.url + "/completion", json=body, timeout=60, trust_env=False)
    response.raise_for_status()
    return response.json()


def metrics(server: ServerProcess) -> dict[str, float]:
    """The unlabelled `llamacpp:*` samples of `/metrics`."""
    text = httpx.get(server.url + "/metrics", timeout=10, trust_env=False).text
    return {m[1]: float(m[2]) for m in re.finditer(r"^llamacpp:(\w+) (\S+)$", text, re.M)}


def metrics_after(server: ServerProcess, name: str, expected: float) -> dict[str, float]:
    """`/metrics` once `name` reached `expected` (counters move when a slot is released), or at 2 s."""
    deadline = time.monotonic() + 2
    while True:
        sample = metrics(server)
        if sample.get(name) == expected or time.monotonic() > deadline:
            return sample
        time.sleep(0.05)


def without_port(argv: list[str]) -> list[str]:
    at = argv.index("--port")
    return argv[:at] + argv[at + 2 :]


def slots(server: ServerProcess) -> list[dict]:
    return httpx.get(server.url + "/slots", timeout=10, trust_env=False).json()


def test_plain_server_does_not_draft(llama_server: StartServer) -> None:
    server = llama_server()
    assert [s["speculative"] for s in slots(server)] == [False] * 4
    results = [complete(server, p, 32) for p in PROMPTS[:2]]
    for result in results:
        assert result["timings"]["predicted_n"] == 32
        assert "draft_n" not in result["timings"] and "draft_n_accepted" not in result["timings"]
    sample = metrics_after(server, "tokens_predicted_total", 64)
    assert sample["tokens_predicted_total"] == 64
    assert sample["spec_decode_num_draft_tokens_total"] == 0
    assert not has_speculative_flags(server.argv)


def test_drafting_server_accepts_part_of_the_drafts(llama_server: StartServer, draft_args: list[str]) -> None:
    server = llama_server(*draft_args)
    assert all(s["speculative"] for s in slots(server))
    timings = [complete(server, p)["timings"] for p in PROMPTS]
    drafted = sum(t["draft_n"] for t in timings)
    accepted = sum(t["draft_n_accepted"] for t in timings)
    assert all(t["predicted_n"] == N_PREDICT for t in timings)
    assert 0 < accepted < drafted, f"acceptance {accepted}/{drafted} must be strictly between 0 and 1"
    sample = metrics_after(server, "spec_decode_num_draft_tokens_total", drafted)
    assert sample["spec_decode_num_draft_tokens_total"] == drafted
    assert sample["spec_decode_num_accepted_tokens_total"] == accepted
    assert sample["tokens_predicted_total"] == N_PREDICT * len(PROMPTS)
    assert 0 < sample["spec_decode_num_drafts_total"] <= drafted
    busy = [s for s in slots(server) if "params" in s]
    assert busy and all("draft-simple" in s["params"]["speculative.types"] for s in busy)


def test_drafting_keeps_the_plain_output(llama_server: StartServer, draft_args: list[str]) -> None:
    """At temperature 0 the target alone decides, so drafting must not change the text."""
    draft = llama_server(*draft_args)
    plain_argv, dropped = derive_plain_argv(draft.argv)
    assert dropped == draft_args
    plain = llama_server()
    assert without_port(plain.argv) == without_port(plain_argv)
    for prompt in PROMPTS[:2]:
        assert complete(draft, prompt, 32)["content"] == complete(plain, prompt, 32)["content"]


def test_draft_without_spec_type_is_void(llama_server: StartServer, tiny_models: ModelPair) -> None:
    server = llama_server("-md", str(tiny_models.draft_path))
    assert is_void_draft(server.argv, env={})
    assert [s["speculative"] for s in slots(server)] == [False] * 4
    timings = complete(server, PROMPTS[0], 32)["timings"]
    assert "draft_n" not in timings
    sample = metrics_after(server, "tokens_predicted_total", 32)
    assert sample["spec_decode_num_draft_tokens_total"] == 0


def test_tokenizer_and_chat_template(llama_server: StartServer) -> None:
    server = llama_server()
    text = "Hello world, the energy per token"
    tokens = httpx.post(server.url + "/tokenize", json={"content": text}, trust_env=False).json()["tokens"]
    assert 5 <= len(tokens) <= 20
    back = httpx.post(server.url + "/detokenize", json={"tokens": tokens}, trust_env=False).json()["content"]
    assert back.strip() == text
    body = {"messages": [{"role": "user", "content": "Say hello."}], "max_tokens": 16, "temperature": 0}
    chat = httpx.post(server.url + "/v1/chat/completions", json=body, timeout=60, trust_env=False).json()
    assert chat["usage"]["completion_tokens"] == 16
    assert chat["choices"][0]["message"]["content"]
