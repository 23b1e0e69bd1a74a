"""Secrets in server commands are hidden, and nothing else in the command changes."""

from __future__ import annotations

import shlex

import pytest
from hypothesis import given
from hypothesis import strategies as st

from collectors.redact import REDACTED, redact_argv, redact_command, restore, scrub, secrets_in

# (typed, stored): the options are the servers' own (llama-server --help, vLLM and SGLang docs)
CASES = [
    (
        "llama-server -m t.gguf --api-key s3cret --port 8081",
        "llama-server -m t.gguf --api-key '***' --port 8081",
    ),
    ("llama-server -m t.gguf --api-key=s3cret", "llama-server -m t.gguf '--api-key=***'"),
    ("llama-server -hf org/model -hft hf_abc", "llama-server -hf org/model -hft '***'"),
    (
        "llama-server --hf-token hf_abc --api-key-file /etc/keys.txt",
        "llama-server --hf-token '***' --api-key-file /etc/keys.txt",
    ),
    (
        "vllm serve m --api-key s3cret --ssl-keyfile key.pem",
        "vllm serve m --api-key '***' --ssl-keyfile key.pem",
    ),
    (
        "python -m sglang.launch_server --admin-api-key adm1n",
        "python -m sglang.launch_server --admin-api-key '***'",
    ),
    (
        "env HF_TOKEN=hf_abc OPENAI_API_KEY=sk-1 vllm serve m",
        "env 'HF_TOKEN=***' 'OPENAI_API_KEY=***' vllm serve m",
    ),
    (
        "llama-server --db-password pw1 --client-secret c1",
        "llama-server --db-password '***' --client-secret '***'",
    ),
    ("llama-server --url http://me:pw1@host:9/x", "llama-server --url 'http://me:***@host:9/x'"),
]
# counts and names that merely contain a secret word are no secrets
PLAIN = [
    "vllm serve m --max-tokens 64 --tokenizer t --num-speculative-tokens 3 --max-num-batched-tokens 8192",
    "llama-server -m t.gguf --n-keep 4 --spec-draft-n-max 4 --eos-token-id 2 --ssl-key-file k.pem",
]


@pytest.mark.parametrize(("typed", "stored"), CASES)
def test_secret_values_are_hidden(typed, stored):
    assert redact_command(typed) == stored
    assert redact_command(shlex.split(typed)) == stored  # an argv list reads the same
    assert redact_command(stored) == stored  # hiding twice changes nothing


@pytest.mark.parametrize("typed", PLAIN)
def test_commands_without_secrets_are_kept_as_typed(typed):
    assert redact_command(typed) == typed


def test_a_command_inside_a_word_and_an_abbreviated_option():
    argv = ["spectop", "sweep", "--api", "k1", "--draft-cmd", "llama-server -md d.gguf --api-key s3cret"]
    assert redact_argv(argv, abbreviations=("--api-key",)) == [
        *("spectop", "sweep", "--api", REDACTED, "--draft-cmd"),
        "llama-server -md d.gguf --api-key '***'",
    ]
    assert secrets_in(argv, abbreviations=("--api-key",)) == ["k1", "s3cret"]
    assert secrets_in(argv) == ["s3cret"]  # --api is only spectop's own abbreviation


def test_scrub_hides_long_secrets_anywhere_and_short_ones_as_words():
    tail = "non-default args: {'api_key': 'sk-0123456789'} key=ab at ab12"
    assert scrub(tail, ["sk-0123456789", "ab"]) == "non-default args: {'api_key': '***'} key=*** at ab12"


def test_restore_gives_an_edited_command_its_secrets_back():
    typed = "llama-server -m t.gguf --api-key s3cret -hft hf_abc --port 8081"
    edited = redact_command(typed).replace("8081", "8090")
    assert shlex.split(restore(edited, typed)) == shlex.split(typed.replace("8081", "8090"))
    assert restore("llama-server -m t.gguf", typed) == "llama-server -m t.gguf"  # nothing to give back


@given(
    st.lists(st.text(st.characters(codec="utf-8"), min_size=1), max_size=4),
    st.text(st.characters(codec="utf-8"), min_size=1),
)
def test_the_secret_and_only_the_secret_is_replaced(words, secret):
    # words that are no option, assignment, URL or command of their own, around any secret value
    words = [w for w in words if len(w.split()) == 1 and w.strip() == w and not w.startswith("-")]
    words = [w for w in words if "=" not in w and "://" not in w]
    argv = ["llama-server", *words, "--api-key", secret, "--port", "8081"]
    assert shlex.split(redact_command(argv)) == [*argv[:-3], REDACTED, "--port", "8081"]
    assert secrets_in(argv) == [secret]


def test_the_word_after_a_secret_option_is_its_value_and_an_option_said_twice_hides_both():
    # llama.cpp takes the next word whatever it is, so a key may look like an option (hypothesis
    # found `--api-key -KEY --port 8081` showing -KEY and hiding --port); `--api-key --api-key K`
    # (argparse: a missing value, then K) hides the word taken as the value and K after it
    assert redact_argv(["--api-key", "-KEY", "--port", "8081"]) == ["--api-key", REDACTED, "--port", "8081"]
    assert redact_argv(["--api-key", "--token", "--port", "8"]) == ["--api-key", REDACTED, "--port", "8"]
    assert redact_argv(["--api-key", "--api-key", "K1"]) == ["--api-key", REDACTED, REDACTED]
    assert secrets_in(["--api-key", "--hf-token", "K1", "-m", "x"]) == ["--hf-token", "K1"]
    restored = restore(redact_command(["s", "--api-key", "--api-key", "K1"]), "s --api-key --api-key K1")
    assert shlex.split(restored) == ["s", "--api-key", "--api-key", "K1"]
    assert redact_argv(["--api-key", "-dash-led"]) == ["--api-key", REDACTED]  # a key may start with "-"
