"""``similarity``: cosine similarity between response and expected output.

Backends: ``tfidf`` (built in: word TF-IDF vectors of the two texts, smoothed IDF as in
scikit-learn) and ``embedding`` (all-MiniLM-L6-v2 sentence embeddings, offline, from the
``embeddings`` extra; see ``tracereplay.checks.minilm``).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Annotated, Literal

from pydantic import Field

from tracereplay.checks.common import NOTHING_EXPECTED, expected_text
from tracereplay.checks.kinds import CheckError, Verdict, builtin_check
from tracereplay.checks.subject import CheckSubject

_WORD = re.compile(r"\w+")


def words(text: str) -> list[str]:
    """Lowercased word tokens (``\\w+``)."""
    return _WORD.findall(text.casefold())


def tfidf_cosine(a: str, b: str) -> float:
    """Cosine similarity (0..1) of the TF-IDF vectors of two texts, IDF fitted on the pair.

    IDF is smoothed, ``ln((1 + n) / (1 + df)) + 1`` with n = 2, so words both texts share
    weigh less than words only one of them has. Two texts without words score 0.
    """
    ta, tb = Counter(words(a)), Counter(words(b))
    if not ta or not tb:
        return 0.0
    shared_w = 1.0  # ln(3/3) + 1
    solo_w = math.log(3.0 / 2.0) + 1.0
    va = {t: c * (shared_w if t in tb else solo_w) for t, c in ta.items()}
    vb = {t: c * (shared_w if t in ta else solo_w) for t, c in tb.items()}
    dot = sum(w * vb[t] for t, w in va.items() if t in vb)
    na = math.sqrt(sum(w * w for w in va.values()))
    nb = math.sqrt(sum(w * w for w in vb.values()))
    return min(1.0, max(0.0, round(dot / (na * nb), 12)))


def embedding_cosine(a: str, b: str) -> float:
    """Cosine similarity of all-MiniLM-L6-v2 embeddings, clamped to 0..1."""
    from tracereplay.checks import minilm

    try:
        value = minilm.cosine(a, b)
    except minilm.EmbeddingUnavailable as exc:
        raise CheckError(str(exc)) from None
    return min(1.0, max(0.0, round(value, 6)))


@builtin_check("similarity")
def similarity(
    subject: CheckSubject,
    threshold: Annotated[float, Field(ge=0.0, le=1.0)] = 0.7,
    backend: Literal["tfidf", "embedding"] = "tfidf",
) -> Verdict:
    """Cosine similarity between response and expected output is at least ``threshold``."""
    expected = expected_text(subject)
    if expected is None:
        return Verdict(False, 0.0, NOTHING_EXPECTED)
    if backend == "tfidf":
        if not words(expected):
            raise CheckError("the expected output has no words to compare (tfidf backend)")
        score = tfidf_cosine(subject.output, expected)
    else:
        score = embedding_cosine(subject.output.strip(), expected.strip())
    passed = score >= threshold
    return Verdict(
        passed,
        score,
        f"{backend} cosine similarity {score:.3f} {'>=' if passed else '<'} threshold {threshold}",
        {"similarity": score, "threshold": threshold, "backend": backend},
    )
