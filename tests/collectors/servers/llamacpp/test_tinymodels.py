"""The tiny GGUF generator: shapes, shared tensors, vocabulary, determinism and the content cache."""

from __future__ import annotations

import hashlib
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from collectors.errors import SpectopError
from collectors.servers.llamacpp.tinymodels import TinySpec, build_vocab, content_key, write_model_pair

gguf = pytest.importorskip("gguf")


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory):
    return write_model_pair(tmp_path_factory.mktemp("tiny"), seed=0)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def field(reader, key: str):
    return reader.fields[key].contents()


def tensors(path: Path) -> dict[str, np.ndarray]:
    return {t.name: np.asarray(t.data) for t in gguf.GGUFReader(path).tensors}


def test_shapes_and_metadata(pair) -> None:
    target, draft = gguf.GGUFReader(pair.target_path), gguf.GGUFReader(pair.draft_path)
    assert field(target, "general.architecture") == "llama"
    assert field(target, "llama.block_count") == 6 and field(draft, "llama.block_count") == 1
    assert field(target, "llama.embedding_length") == 256
    assert field(target, "tokenizer.ggml.model") == "llama"
    assert len(field(target, "tokenizer.ggml.tokens")) == 1024
    assert field(target, "tokenizer.ggml.tokens") == field(draft, "tokenizer.ggml.tokens")
    assert "add_generation_prompt" in field(target, "tokenizer.chat_template")
    assert pair.target_path.stat().st_size < 32e6 and pair.draft_path.stat().st_size < 8e6


def test_draft_shares_embedding_output_and_first_block(pair) -> None:
    target, draft = tensors(pair.target_path), tensors(pair.draft_path)
    assert set(draft) < set(target)
    assert not any(name.startswith("blk.1.") for name in draft)
    for name, array in draft.items():
        np.testing.assert_array_equal(array, target[name], err_msg=name)
    assert target["token_embd.weight"].shape == (1024, 256)


def test_only_ordinary_pieces_can_be_generated(pair) -> None:
    _, _, types = build_vocab(1024)
    out = tensors(pair.target_path)["output.weight"]
    zero_rows = ~out.any(axis=1)
    assert np.array_equal(zero_rows, np.asarray(types) != gguf.TokenType.NORMAL)


def test_vocabulary_has_bytes_and_word_prefixes() -> None:
    tokens, scores, types = build_vocab(1024)
    assert tokens[:3] == ["<unk>", "<s>", "</s>"]
    assert tokens[3 + 0x41] == "<0x41>" and types[3 + 0x41] == gguf.TokenType.BYTE
    for piece in ("\u2581e", "\u2581en", "\u2581energy", "\u2581token"):
        assert piece in tokens
    assert scores[tokens.index("\u2581energy")] > scores[tokens.index("\u2581en")]
    assert len(set(tokens)) == 1024


def test_same_seed_same_bytes_other_seed_other_bytes(pair, tmp_path: Path) -> None:
    again = write_model_pair(tmp_path, seed=0)
    assert digest(again.target_path) == digest(pair.target_path)
    other = write_model_pair(tmp_path, seed=1)
    assert other.target_path != again.target_path
    assert digest(other.draft_path) != digest(again.draft_path)


def test_cached_by_content(tmp_path: Path) -> None:
    started = time.monotonic()
    first = write_model_pair(tmp_path, seed=3)
    assert time.monotonic() - started < 5
    stamp = first.target_path.stat().st_mtime_ns
    assert write_model_pair(tmp_path, seed=3) == first
    assert first.target_path.stat().st_mtime_ns == stamp
    assert content_key(TinySpec(), 3) != content_key(TinySpec(extra_layer_scale=0.3), 3)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [first.target_path.name, first.draft_path.name]
    )


def test_bad_draft_depth_and_missing_gguf(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(SpectopError, match="draft needs"):
        write_model_pair(tmp_path, spec=TinySpec(n_layer_draft=6))
    monkeypatch.setitem(sys.modules, "gguf", None)
    with pytest.raises(SpectopError) as info:
        write_model_pair(tmp_path)
    assert info.value.fix == "pip install gguf"
