"""Text checks: nonEmpty, containsExpected, exact, regex, keywords, fuzzy."""

from __future__ import annotations

import pytest
from eval_check_helpers import make_subject, run

from tracereplay.checks.text import normalize_text
from tracereplay.models import Status


class TestNonEmpty:
    def test_passes_on_text(self):
        r = run("nonEmpty", make_subject("Sunny, 21 C"))
        assert (r.status, r.score) == (Status.PASSED, 1.0)

    def test_whitespace_only_fails(self):
        r = run("nonEmpty", make_subject("  \n\t "))
        assert (r.status, r.score) == (Status.FAILED, 0.0)
        assert r.explanation == "response has 0 characters (minimum 1)"

    def test_min_length_gives_a_partial_score(self):
        r = run("nonEmpty", make_subject("  abc  "), minLength=6)
        assert r.status is Status.FAILED and r.score == pytest.approx(0.5)
        assert run("nonEmpty", make_subject("abcdef"), minLength=6).passed

    def test_min_length_zero_always_passes(self):
        assert run("nonEmpty", make_subject(""), minLength=0).passed


class TestContainsExpected:
    def test_case_insensitive_by_default(self):
        r = run("containsExpected", make_subject("It is SUNNY in Paris", expected="sunny"))
        assert (r.status, r.score) == (Status.PASSED, 1.0)

    def test_case_sensitive_option(self):
        subject = make_subject("It is SUNNY in Paris", expected="sunny")
        r = run("containsExpected", subject, caseSensitive=True)
        assert (r.status, r.score) == (Status.FAILED, 0.0)
        assert "does not contain the expected text 'sunny'" in r.explanation

    def test_a_failure_shows_the_response(self):
        r = run("containsExpected", make_subject("Rainy, 12 C in Paris", expected="sunny"))
        assert r.explanation == (
            "response does not contain the expected text 'sunny'; the response: "
            "'Rainy, 12 C in Paris'"
        )
        assert run("containsExpected", make_subject("", expected="sunny")).explanation == (
            "response does not contain the expected text 'sunny'; the response is empty"
        )
        long = run("containsExpected", make_subject("x" * 500, expected="sunny"))
        assert len(long.explanation) < 200 and long.explanation.endswith("…'")

    def test_expected_surrounding_whitespace_is_ignored(self):
        assert run("containsExpected", make_subject("rain later", expected="  rain\n")).passed

    @pytest.mark.parametrize("expected", [None, "", "   "])
    def test_skipped_when_nothing_is_expected(self, expected):
        # a run that failed before answering has nothing to look for: skipped, not FAILED
        for response in ("anything", ""):
            r = run("containsExpected", make_subject(response, expected=expected))
            assert r.status is Status.PASSED
            assert r.explanation.startswith("skipped: nothing is expected")

    def test_casefold_handles_sharp_s(self):
        assert run("containsExpected", make_subject("STRASSE 5", expected="straße")).passed


class TestExact:
    def test_strip_by_default(self):
        assert run("exact", make_subject("  42\n", expected="42")).passed
        assert not run("exact", make_subject("42", expected="42.0")).passed

    def test_case_is_sensitive_by_default(self):
        r = run("exact", make_subject("Paris", expected="paris"))
        assert r.status is Status.FAILED
        assert r.details["first_difference"] == 0
        assert "at character 0" in r.explanation

    def test_normalize_steps(self):
        subject = make_subject("  Hello,\n  WORLD ", expected="hello, world")
        assert run("exact", subject, normalize=True).passed
        assert run("exact", subject, normalize=["case", "whitespace", "strip"]).passed
        assert not run("exact", subject, normalize=["case", "strip"]).passed
        assert not run("exact", subject, normalize=False).passed
        assert not run("exact", subject, normalize=[]).passed

    def test_no_normalization_compares_raw(self):
        assert run("exact", make_subject("a ", expected="a "), normalize=False).passed
        assert not run("exact", make_subject("a", expected="a "), normalize=False).passed

    def test_fails_when_nothing_is_expected(self):
        r = run("exact", make_subject("x"))
        assert r.status is Status.FAILED and "nothing is expected" in r.explanation

    def test_empty_expected_matches_empty_output(self):
        assert run("exact", make_subject("  ", expected="")).passed

    def test_normalize_text_order_is_fixed(self):
        assert normalize_text("  A \t B  ", ["strip", "whitespace", "case"]) == "a b"


class TestRegex:
    def test_search_anywhere(self):
        r = run("regex", make_subject("It is 21 degrees"), pattern=r"\d+ degrees")
        assert (r.status, r.score) == (Status.PASSED, 1.0)
        assert r.details["match"] == "21 degrees" and r.details["span"] == [6, 16]

    def test_no_match_fails(self):
        r = run("regex", make_subject("sunny"), pattern=r"\d+")
        assert (r.status, r.score) == (Status.FAILED, 0.0)

    def test_flags(self):
        subject = make_subject("line one\nTEMP: 21")
        assert not run("regex", subject, pattern=r"^temp").passed
        assert run("regex", subject, pattern=r"^temp", flags="im").passed
        assert run("regex", make_subject("a\nb"), pattern="a.b", flags="s").passed

    def test_named_groups_are_reported(self):
        r = run("regex", make_subject("temp=21C"), pattern=r"temp=(?P<value>\d+)")
        assert r.details["groups"] == {"value": "21"}

    def test_bad_pattern_is_an_error(self):
        r = run("regex", make_subject("x"), pattern="(unclosed")
        assert r.status is Status.ERROR and r.score is None
        assert "invalid regular expression '(unclosed'" in r.explanation

    def test_bad_flag_is_an_error(self):
        r = run("regex", make_subject("x"), pattern="x", flags="iz")
        assert r.status is Status.ERROR and "unknown regex flag 'z'" in r.explanation


class TestKeywords:
    def test_all_mode(self):
        subject = make_subject("Sunny in Paris, 21 degrees")
        r = run("keywords", subject, values=["sunny", "paris", "wind"])
        assert r.status is Status.FAILED and r.score == pytest.approx(2 / 3)
        assert r.details["missing"] == ["wind"]
        assert "missing: 'wind'" in r.explanation
        assert run("keywords", subject, values=["sunny", "PARIS"]).passed

    def test_any_mode(self):
        subject = make_subject("Sunny in Paris")
        r = run("keywords", subject, values=["rain", "sunny"], mode="any")
        assert r.passed and r.score == pytest.approx(0.5)
        assert not run("keywords", subject, values=["rain", "snow"], mode="any").passed

    def test_case_sensitive(self):
        subject = make_subject("Sunny")
        assert not run("keywords", subject, values=["sunny"], caseSensitive=True).passed


class TestFuzzy:
    def test_close_text_passes(self):
        subject = make_subject(
            "The weather in Paris is sunny.", expected="Weather in Paris is sunny"
        )
        r = run("fuzzy", subject)
        assert r.status is Status.PASSED and 0.8 <= r.score < 1.0

    def test_threshold(self):
        subject = make_subject("sunny and warm", expected="rainy and cold")
        r = run("fuzzy", subject, threshold=0.9)
        assert r.status is Status.FAILED and 0 <= r.score < 0.9
        assert r.details["threshold"] == 0.9

    def test_identical_scores_one(self):
        r = run("fuzzy", make_subject("Same", expected="same"))
        assert r.score == 1.0
        assert run("fuzzy", make_subject("Same", expected="same"), caseSensitive=True).score < 1

    def test_token_set_scorer(self):
        subject = make_subject("Paris sunny weather today", expected="today weather sunny Paris")
        assert run("fuzzy", subject, scorer="token_sort_ratio").score == 1.0
        assert run("fuzzy", subject).score < 1.0

    def test_fails_when_nothing_is_expected(self):
        r = run("fuzzy", make_subject("x"))
        assert r.status is Status.FAILED and "nothing is expected" in r.explanation
