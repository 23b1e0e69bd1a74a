"""Tiny random-weight llama GGUF files: a target and a draft that agree part of the time.

The draft is the target's first block alone. Both share vocabulary, token embedding, first block,
output norm and output matrix; the target's extra blocks add a damped residual on top, so at
temperature 0 the draft predicts the target's next token often but not always. That gives a real
llama-server an acceptance rate strictly between 0 and 1 on ordinary prompts, in about a second,
on a CPU. Files are cached by content: the same spec and seed always give the same bytes.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from collectors.errors import SpectopError

if TYPE_CHECKING:
    from numpy.typing import NDArray

# Bump when the bytes written for a given spec change, so caches keyed on content stay honest.
GENERATOR_VERSION = 1

CHAT_TEMPLATE = (
    "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}assistant:{% endif %}"
)

# Words give English prompts several multi-character tokens; every prefix of "▁word" is a token
# because sentencepiece only merges adjacent pieces into pieces that are in the vocabulary.
_WORDS = (
    "the of and to in is it that for on with as was be by this are or from at an not but have all "
    "can one which their will more if about out up so what when there its were been has into time "
    "energy power token tokens draft target model models server servers request requests batch "
    "speculative decoding verify accept accepted reject speed watt watts joule joules per second "
    "memory cache latency throughput prompt prompts write code function return value list number "
    "write story once upon sun river city light night morning water house people world small large "
    "first last next count measure window meter sample samples test tests quick brown fox jumps over "
    "lazy dog hello please explain why how "
    "garden music summer winter mountain ocean forest paper letter window table chair friend family "
    "question answer problem result report table summary average total ratio crossover idle busy "
    "slot slots stream chunk event burst gap height weight across because before after between "
    "during under without within always never often simple careful correct change started stopped "
    "finished running waiting loading reading writing history future yesterday tomorrow morning "
    "evening machine engine battery processor graphics kernel"
).split()


@dataclasses.dataclass(frozen=True)
class TinySpec:
    """Shape of the pair; the defaults match the captured fixtures (6.8 M parameters, 27 MB)."""

    n_vocab: int = 1024
    n_embd: int = 256
    n_ff: int = 1024
    n_head: int = 4
    n_layer_target: int = 6
    n_layer_draft: int = 1
    n_ctx_train: int = 4096
    logit_scale: float = 6.0
    """Standard deviation of the logits: large, so argmax is not flipped by rounding between batch shapes."""
    extra_layer_scale: float = 0.15
    """Residual weight of the target's blocks beyond the draft's: 0 makes the draft exact, 1 unrelated."""


class ModelPair(NamedTuple):
    """Paths of a generated target and its draft."""

    target_path: Path
    draft_path: Path


def build_vocab(n_vocab: int) -> tuple[list[str], list[float], list[int]]:
    """Sentencepiece-style (llama) tokens, scores and token types: specials, 256 bytes, then pieces."""
    import gguf

    tokens = ["<unk>", "<s>", "</s>"]
    types = [gguf.TokenType.UNKNOWN, gguf.TokenType.CONTROL, gguf.TokenType.CONTROL]
    tokens += [f"<0x{b:02X}>" for b in range(256)]
    types += [gguf.TokenType.BYTE] * 256
    pieces = ["\u2581"] + [chr(c) for c in range(33, 127)]
    for word in _WORDS:
        pieces += ["\u2581" + word[:i] for i in range(1, len(word) + 1)]
    pieces = list(dict.fromkeys(pieces))[: n_vocab - len(tokens)]
    pieces += [f"<unused{i}>" for i in range(n_vocab - len(tokens) - len(pieces))]
    tokens += pieces
    types += [gguf.TokenType.UNUSED if p.startswith("<unused") else gguf.TokenType.NORMAL for p in pieces]
    scores = [
        float(len(t)) if ty == gguf.TokenType.NORMAL else 0.0 for t, ty in zip(tokens, types, strict=True)
    ]
    return tokens, scores, [int(t) for t in types]


def _tensors(spec: TinySpec, seed: int, token_types: list[int]) -> dict[str, NDArray[np.float32]]:
    """All target tensors; the draft takes the shared ones and the first `n_layer_draft` blocks."""
    rng = np.random.default_rng(seed)
    d, ff = spec.n_embd, spec.n_ff

    def normal(shape: tuple[int, ...], std: float) -> NDArray[np.float32]:
        values: NDArray[np.float32] = rng.standard_normal(shape, dtype=np.float32) * np.float32(std)
        return values

    out = normal((spec.n_vocab, d), spec.logit_scale / np.sqrt(d))
    # Only ordinary pieces may win the argmax: no EOS, no stray bytes that break UTF-8 in the text.
    out[np.asarray(token_types) != 1] = 0.0
    tensors = {
        "token_embd.weight": normal((spec.n_vocab, d), 1.0),
        "output_norm.weight": np.ones(d, dtype=np.float32),
        "output.weight": out,
    }
    for i in range(spec.n_layer_target):
        scale = 1.0 if i < spec.n_layer_draft else spec.extra_layer_scale
        blk = f"blk.{i}."
        tensors[blk + "attn_norm.weight"] = np.ones(d, dtype=np.float32)
        tensors[blk + "ffn_norm.weight"] = np.ones(d, dtype=np.float32)
        for name in ("attn_q", "attn_k", "attn_v"):
            tensors[blk + name + ".weight"] = normal((d, d), 1.0 / np.sqrt(d))
        tensors[blk + "attn_output.weight"] = normal((d, d), scale / np.sqrt(d))
        tensors[blk + "ffn_gate.weight"] = normal((ff, d), 1.0 / np.sqrt(d))
        tensors[blk + "ffn_up.weight"] = normal((ff, d), 1.0 / np.sqrt(d))
        tensors[blk + "ffn_down.weight"] = normal((d, ff), scale / np.sqrt(ff))
    return tensors


def _write_gguf(path: Path, name: str, spec: TinySpec, n_layer: int, tensors: dict[str, Any]) -> None:
    """Write one llama GGUF with `n_layer` blocks from `tensors` (atomically, via a temp file)."""
    import gguf

    tokens, scores, types = build_vocab(spec.n_vocab)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".part", dir=path.parent)
    os.close(fd)
    try:
        w = gguf.GGUFWriter(tmp, "llama")
        w.add_name(name)
        w.add_context_length(spec.n_ctx_train)
        w.add_embedding_length(spec.n_embd)
        w.add_feed_forward_length(spec.n_ff)
        w.add_block_count(n_layer)
        w.add_head_count(spec.n_head)
        w.add_head_count_kv(spec.n_head)
        w.add_rope_dimension_count(spec.n_embd // spec.n_head)
        w.add_layer_norm_rms_eps(1e-5)
        w.add_vocab_size(spec.n_vocab)
        w.add_file_type(gguf.LlamaFileType.ALL_F32)
        w.add_tokenizer_model("llama")
        w.add_token_list(tokens)
        w.add_token_scores(scores)
        w.add_token_types(types)
        w.add_unk_token_id(0)
        w.add_bos_token_id(1)
        w.add_eos_token_id(2)
        w.add_add_bos_token(True)
        w.add_add_eos_token(False)
        w.add_add_space_prefix(True)
        w.add_chat_template(CHAT_TEMPLATE)
        for key, array in tensors.items():
            if not key.startswith("blk.") or int(key.split(".")[1]) < n_layer:
                w.add_tensor(key, array)
        w.write_header_to_file()
        w.write_kv_data_to_file()
        w.write_tensors_to_file()
        w.close()
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def default_cache_dir() -> Path:
    """Where generated models live unless told otherwise: `$XDG_CACHE_HOME/spectop/tinymodels`."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "spectop" / "tinymodels"


def content_key(spec: TinySpec, seed: int) -> str:
    """A short hash of everything that determines the files' bytes."""
    blob = json.dumps({"v": GENERATOR_VERSION, "seed": seed, **dataclasses.asdict(spec)}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def write_model_pair(
    directory: str | os.PathLike[str] | None = None, seed: int = 0, spec: TinySpec | None = None
) -> ModelPair:
    """Generate (or reuse from `directory`) a target and draft GGUF pair for `seed`."""
    try:
        import gguf  # noqa: F401
    except ImportError as exc:
        raise SpectopError("generating tiny models needs the gguf package", fix="pip install gguf") from exc
    spec = spec or TinySpec()
    if not 1 <= spec.n_layer_draft < spec.n_layer_target:
        raise SpectopError(f"draft needs 1 to {spec.n_layer_target - 1} layers, not {spec.n_layer_draft}")
    folder = Path(directory) if directory is not None else default_cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    key = content_key(spec, seed)
    pair = ModelPair(folder / f"tiny-target-{key}.gguf", folder / f"tiny-draft-{key}.gguf")
    if pair.target_path.is_file() and pair.draft_path.is_file():
        return pair
    tokens_types = build_vocab(spec.n_vocab)[2]
    tensors = _tensors(spec, seed, tokens_types)
    _write_gguf(pair.draft_path, "tiny-draft", spec, spec.n_layer_draft, tensors)
    _write_gguf(pair.target_path, "tiny-target", spec, spec.n_layer_target, tensors)
    return pair
