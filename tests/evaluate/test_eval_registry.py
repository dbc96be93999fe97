"""The check registry: option validation, ERROR results instead of exceptions, custom checks."""

from __future__ import annotations

from typing import Annotated

import pytest
from eval_check_helpers import make_subject, run
from pydantic import Field

import tracereplay
from tracereplay.checks import registry
from tracereplay.evaluate import (
    CheckDefinitionError,
    CheckError,
    Verdict,
    check,
    list_check_kinds,
    prepare_check,
    run_check,
    validate_check_specs,
)
from tracereplay.models import CheckSpec, ScoreResult, Status

BUILTIN_KINDS = {
    "nonEmpty",
    "containsExpected",
    "exact",
    "regex",
    "keywords",
    "fuzzy",
    "similarity",
    "toolCalled",
    "toolCallsPresent",
    "toolCallArgsMatch",
    "toolTrajectory",
    "noToolErrors",
    "toolResultsMatch",
    "status",
    "maxLatencyMs",
    "maxTokens",
    "maxRounds",
    "maxLlmCalls",
    "jsonValid",
    "jsonSchema",
    "passfail",
    "llmJudge",
    "turnCount",
    "toolCalledInSession",
}


@pytest.fixture
def scratch_kinds():
    """Remove the custom kinds a test registers."""
    list_check_kinds()  # built-ins registered before the snapshot
    before = set(registry._REGISTRY)
    yield
    for kind in set(registry._REGISTRY) - before:
        del registry._REGISTRY[kind]
    registry._PREPARED.clear()


def test_every_issue_check_is_registered_with_a_description_and_schema():
    kinds = {k.kind: k for k in list_check_kinds() if k.builtin}
    assert set(kinds) == BUILTIN_KINDS
    for k in kinds.values():
        assert k.description, k.kind
        schema = k.options_schema()
        assert schema["type"] == "object"
        assert set(schema.get("properties", {})) == set(k.option_names)
    assert kinds["regex"].options_schema()["required"] == ["pattern"]
    assert "schema" in kinds["jsonSchema"].options_schema()["properties"]


def test_unknown_option_is_an_error_naming_the_known_ones():
    r = run("nonEmpty", make_subject("hello"), minLenght=3)
    assert r.status is Status.ERROR and r.score is None and not r.passed
    assert "unknown option 'minLenght'" in r.explanation
    assert "minLength" in r.explanation


def test_missing_required_option_is_an_error():
    r = run("regex", make_subject("hello"))
    assert r.status is Status.ERROR
    assert "missing required option 'pattern'" in r.explanation


@pytest.mark.parametrize(
    ("kind", "options", "fragment"),
    [
        ("nonEmpty", {"minLength": "3"}, "option 'minLength'"),
        ("nonEmpty", {"minLength": -1}, "option 'minLength'"),
        ("containsExpected", {"caseSensitive": "yes"}, "option 'caseSensitive'"),
        ("fuzzy", {"threshold": True}, "option 'threshold'"),
        ("fuzzy", {"threshold": 1.5}, "option 'threshold'"),
        ("keywords", {"values": "weather"}, "option 'values'"),
        ("keywords", {"values": []}, "option 'values'"),
        ("keywords", {"values": ["a"], "mode": "most"}, "option 'mode'"),
        ("toolTrajectory", {"mode": "sorted"}, "option 'mode'"),
        ("similarity", {"backend": "bm25"}, "option 'backend'"),
        ("exact", {"normalize": ["strip", "accents"]}, "option 'normalize"),
        ("maxTokens", {"limit": 10.5}, "option 'limit'"),
    ],
)
def test_badly_typed_option_is_an_error(kind, options, fragment):
    r = run(kind, make_subject("hello", expected="hello"), **options)
    assert r.status is Status.ERROR, r
    assert fragment in r.explanation
    assert r.explanation.startswith(f"{kind}: ")


def test_int_is_accepted_where_a_float_is_expected():
    r = run("fuzzy", make_subject("hello", expected="hello"), threshold=1)
    assert r.status is Status.PASSED


def test_unknown_kind_is_an_error():
    r = run("sentiment", make_subject("hi"))
    assert r.status is Status.ERROR
    assert "unknown check kind 'sentiment'" in r.explanation
    assert "containsExpected" in r.explanation


def test_result_uses_the_spec_name_as_label():
    r = run("nonEmpty", make_subject("hi"), name="has-answer")
    assert r.check == "has-answer"
    assert run("nonEmpty", make_subject("hi")).check == "nonEmpty"


def test_prepared_spec_is_cached_per_spec_and_per_what_it_says():
    spec = CheckSpec(kind="regex", pattern=r"\d+")
    subject = make_subject("42")
    first = registry.prepared(spec)
    assert registry.prepared(spec) is first
    assert run_check(spec, subject).passed
    # a copy of the same check (each case of an imported suite carries its own): validated once
    assert registry.prepared(CheckSpec(kind="regex", pattern=r"\d+")) is first
    assert registry.prepared(CheckSpec(kind="regex", pattern=r"\d")) is not first
    assert registry.prepared(CheckSpec(kind="regex", name="r2", pattern=r"\d+")) is not first
    registry.clear_prepared()
    assert registry.prepared(spec) is not first


def test_validate_check_specs_reports_each_problem():
    problems = validate_check_specs(
        [
            {"kind": "containsExpected"},
            {"kind": "regex", "pattern": "("},
            {"kind": "regex", "pattern": "x", "flags": "q", "name": "regex2"},
            {"kind": "jsonSchema", "schema": {"type": "nope"}},
            {"kind": "nope"},
            {"kind": "nonEmpty", "minLenght": 2},
            CheckSpec(kind="containsExpected"),
            {"name": "no kind"},
        ]
    )
    text = "\n".join(problems)
    assert "checks[1] (regex): regex: invalid regular expression '('" in text
    assert "checks[2] (regex2): regex: unknown regex flag 'q'" in text
    assert "checks[3] (jsonSchema): jsonSchema: invalid JSON schema" in text
    assert "checks[4] (nope): unknown check kind 'nope'" in text
    assert "checks[5] (nonEmpty): nonEmpty: unknown option 'minLenght'" in text
    assert "checks[6]: name 'containsExpected' is used by checks[0] too" in text
    assert "checks[7]: kind: Field required" in text
    assert len(problems) == 7
    assert validate_check_specs([{"kind": "regex", "pattern": "a", "name": "r1"}]) == []


def test_a_check_that_raises_is_an_error_not_an_exception(scratch_kinds):
    @check("boom")
    def boom(subject):
        raise KeyError("missing thing")

    @check("cannot")
    def cannot(subject):
        raise CheckError("endpoint down")

    subject = make_subject("x")
    r = run("boom", subject)
    assert r.status is Status.ERROR
    assert r.explanation == "check raised KeyError: 'missing thing'"
    r = run("cannot", subject)
    assert r.status is Status.ERROR and r.explanation == "endpoint down"


def test_custom_check_return_shapes(scratch_kinds):
    @tracereplay.check("shapes")
    def shapes(subject, what: str = "bool"):
        return {
            "bool": True,
            "pair": (False, "too short"),
            "verdict": Verdict(False, 0.25, "quarter"),
            "score": ScoreResult(check="ignored", score=0.5, passed=True, status=Status.PASSED),
            "error": ScoreResult(check="x", status=Status.ERROR, explanation="no data"),
            "float": 0.5,
            "bad_score": Verdict(True, 1.5),
            "nan": Verdict(True, float("nan")),
        }[what]

    subject = make_subject("x")
    r = run("shapes", subject)
    assert (r.status, r.score, r.check) == (Status.PASSED, 1.0, "shapes")
    r = run("shapes", subject, what="pair")
    assert (r.status, r.score, r.explanation) == (Status.FAILED, 0.0, "too short")
    r = run("shapes", subject, what="verdict")
    assert (r.status, r.score, r.explanation) == (Status.FAILED, 0.25, "quarter")
    r = run("shapes", subject, what="score")
    assert (r.status, r.score, r.check) == (Status.PASSED, 0.5, "shapes")
    r = run("shapes", subject, what="error")
    assert (r.status, r.explanation) == (Status.ERROR, "no data")
    for what in ("float", "bad_score", "nan"):
        assert run("shapes", subject, what=what).status is Status.ERROR, what


def test_custom_check_options_come_from_its_signature(scratch_kinds):
    @check
    def min_words(subject, count: Annotated[int, Field(ge=1)], strict: bool = False):
        """At least ``count`` words."""
        n = len(subject.output.split())
        return Verdict(n >= count, None, f"{n} words")

    kind = next(k for k in list_check_kinds() if k.kind == "min_words")
    assert not kind.builtin and kind.option_names == ["count", "strict"]
    assert kind.description == "At least ``count`` words."
    subject = make_subject("one two three")
    assert run("min_words", subject, count=3).passed
    assert not run("min_words", subject, count=4).passed
    assert "missing required option 'count'" in run("min_words", subject).explanation
    assert run("min_words", subject, count=0).status is Status.ERROR


def test_custom_check_with_var_kwargs_accepts_any_option(scratch_kinds):
    @check("anything")
    def anything(subject, **options):
        return Verdict(True, None, ",".join(sorted(options)))

    assert run("anything", make_subject("x"), b=1, a=2).explanation == "a,b"


def test_builtin_kinds_cannot_be_overridden(scratch_kinds):
    with pytest.raises(CheckDefinitionError, match="'regex' is built in"):

        @check("regex")
        def my_regex(subject):
            return True


def test_a_kind_taken_by_another_function_is_refused(scratch_kinds):
    @check("dupe")
    def first(subject):
        return True

    with pytest.raises(CheckDefinitionError, match="already registered"):

        @check("dupe")
        def second(subject):
            return True


def test_kind_must_be_a_usable_name(scratch_kinds):
    with pytest.raises(CheckDefinitionError, match="cannot register check 'my check'"):
        check("my check")(lambda subject: True)


def test_bad_check_signatures_are_refused(scratch_kinds):
    with pytest.raises(CheckDefinitionError, match="first parameter"):
        check("nosubject")(lambda: True)
    with pytest.raises(CheckDefinitionError, match="reserved"):

        @check("reserved")
        def reserved(subject, name: str = ""):
            return True

    with pytest.raises(CheckDefinitionError, match="keyword parameter"):

        @check("varargs")
        def varargs(subject, *rest):
            return True


def test_prepare_check_exposes_the_problem_and_entry():
    ok = prepare_check(CheckSpec(kind="regex", pattern="a"))
    assert (
        ok.problem is None
        and ok.entry is not None
        and ok.options
        == {
            "pattern": "a",
            "flags": "",
        }
    )
    bad = prepare_check(CheckSpec(kind="nope"))
    assert bad.entry is None and "unknown check kind" in (bad.problem or "")


def test_judge_api_key_env_accepts_both_spellings():
    a = prepare_check(CheckSpec(kind="llmJudge", model="m", apiKeyEnv="K"))
    b = prepare_check(CheckSpec(kind="llmJudge", model="m", api_key_env="K"))
    assert a.problem is None and b.problem is None
    assert a.options["apiKeyEnv"] == b.options["apiKeyEnv"] == "K"
