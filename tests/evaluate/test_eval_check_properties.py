"""Property tests: checks never raise, scores stay in 0..1, matching and normalization laws."""

from __future__ import annotations

import json

from eval_check_helpers import call, expect, make_subject
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracereplay.checks.judge import parse_score
from tracereplay.checks.matching import values_match
from tracereplay.checks.registry import CheckError
from tracereplay.checks.similarity import tfidf_cosine
from tracereplay.checks.text import normalize_text
from tracereplay.evaluate import run_check
from tracereplay.models import CheckSpec, ScoreResult, Status

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**60), max_value=2**60)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=12,
)
arg_dicts = st.dictionaries(st.text(max_size=6), json_values, max_size=5)


def floatify(value):
    """Ints that floats represent exactly become floats (what a JSON round trip may do)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and float(value) == value:
        return float(value)
    if isinstance(value, dict):
        return {k: floatify(v) for k, v in value.items()}
    if isinstance(value, list):
        return [floatify(v) for v in value]
    return value


@SETTINGS
@given(json_values)
def test_values_match_is_reflexive_and_numbers_compare_by_value_both_ways(value):
    assert values_match(value, value)
    other = floatify(value)
    assert values_match(value, other)
    assert values_match(other, value)


@SETTINGS
@given(st.integers(min_value=-(2**70), max_value=2**70))
def test_int_float_equality_is_symmetric(n):
    f = float(n)
    assert values_match(n, f) == values_match(f, n) == (f == n)


@SETTINGS
@given(arg_dicts, arg_dicts)
def test_tool_call_args_match_accepts_any_subset_of_the_actual_arguments(expected, extra):
    actual = {**extra, **expected}
    subset = {k: floatify(v) for k, v in expected.items()}
    subject = make_subject(
        calls=[call("other"), call("tool")],
        expected_calls=[expect("tool", subset)],
    )
    subject.result.tool_calls[1].arguments = actual
    r = run_check(CheckSpec(kind="toolCallArgsMatch"), subject)
    assert r.status is Status.PASSED, r.explanation


texts = st.text(max_size=200)


@SETTINGS
@given(texts, st.one_of(st.none(), texts))
def test_builtin_checks_never_raise_on_arbitrary_text(output, expected):
    subject = make_subject(
        output,
        expected=expected,
        calls=[call("t", x=output[:5])],
        expected_calls=[expect("t", {"x": output[:3]})],
    )
    specs = [
        CheckSpec(kind="nonEmpty", minLength=3),
        CheckSpec(kind="containsExpected"),
        CheckSpec(kind="exact", normalize=True),
        CheckSpec(kind="regex", pattern=r"\w+\s\d", flags="i"),
        CheckSpec(kind="keywords", values=["a", output[:2] or "b"], mode="any"),
        CheckSpec(kind="fuzzy", scorer="partial_ratio"),
        CheckSpec(kind="similarity"),
        CheckSpec(kind="toolCalled", tools=["t"]),
        CheckSpec(kind="toolCallsPresent"),
        CheckSpec(kind="toolCallArgsMatch"),
        CheckSpec(kind="toolTrajectory", mode="in_order"),
        CheckSpec(kind="noToolErrors"),
        CheckSpec(kind="status"),
        CheckSpec(kind="maxRounds", limit=1),
        CheckSpec(kind="maxLlmCalls", limit=1),
        CheckSpec(kind="jsonValid"),
        CheckSpec(kind="jsonSchema", schema={"type": "object"}),
        CheckSpec(kind="passfail"),
    ]
    for spec in specs:
        r = run_check(spec, subject)
        ScoreResult.model_validate(r.model_dump())
        assert r.status in (Status.PASSED, Status.FAILED, Status.ERROR)
        assert r.passed is (r.status is Status.PASSED)
        if r.status is Status.ERROR:
            assert r.score is None and r.explanation
        else:
            assert 0.0 <= r.score <= 1.0


@SETTINGS
@given(texts, texts)
def test_fuzzy_and_similarity_scores_are_in_range_and_symmetric(a, b):
    assert 0.0 <= tfidf_cosine(a, b) <= 1.0
    assert abs(tfidf_cosine(a, b) - tfidf_cosine(b, a)) < 1e-9
    for kind in ("fuzzy", "similarity"):
        r = run_check(CheckSpec(kind=kind), make_subject(a, expected=b))
        assert r.status is Status.ERROR or 0.0 <= r.score <= 1.0


@SETTINGS
@given(st.text(min_size=1, max_size=80).filter(lambda t: any(c.isalnum() for c in t)))
def test_a_text_is_fully_similar_to_itself(text):
    assert tfidf_cosine(text, text) == 1.0 or not any(c.isalnum() or c == "_" for c in text)


steps = st.lists(st.sampled_from(["strip", "case", "whitespace"]), unique=True)


@SETTINGS
@given(texts, steps)
def test_exact_normalization_is_idempotent(text, chosen):
    once = normalize_text(text, chosen)
    assert normalize_text(once, chosen) == once


@SETTINGS
@given(texts, steps)
def test_exact_accepts_the_output_itself_and_its_normalized_form(text, chosen):
    subject = make_subject(text, expected=normalize_text(text, chosen))
    assert run_check(CheckSpec(kind="exact", normalize=chosen), subject).passed


@SETTINGS
@given(st.text(max_size=120))
def test_judge_score_parsing_is_strict_and_total(reply):
    try:
        score = parse_score(reply)
    except CheckError as exc:
        assert str(exc)
    else:
        assert 0.0 <= score <= 1.0


@SETTINGS
@given(st.floats(min_value=0, max_value=1, allow_nan=False))
def test_judge_reads_back_any_score_it_is_given(x):
    assert parse_score(f"score: {x!r}") == x
    assert parse_score(json.dumps({"score": x})) == x


@SETTINGS
@given(json_values)
def test_json_valid_accepts_any_json_document(value):
    text = json.dumps(value)
    assert run_check(CheckSpec(kind="jsonValid"), make_subject(text)).passed
