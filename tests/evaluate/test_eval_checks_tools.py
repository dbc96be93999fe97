"""Tool checks: toolCalled, toolCallsPresent, toolCallArgsMatch, toolTrajectory, noToolErrors."""

from __future__ import annotations

import pytest
from eval_check_helpers import call, expect, make_subject, run

from tracereplay.checks.matching import arg_differences, max_matching, values_match
from tracereplay.models import Status


class TestToolCalled:
    def test_all_mode(self):
        subject = make_subject(calls=[call("get_weather"), call("search")])
        assert run("toolCalled", subject, tools=["get_weather", "search"]).passed
        r = run("toolCalled", subject, tools=["get_weather", "book_flight"])
        assert r.status is Status.FAILED and r.score == 0.5
        assert r.details["missing"] == ["book_flight"]
        assert "not called: [book_flight]" in r.explanation

    def test_any_mode(self):
        subject = make_subject(calls=[call("search")])
        assert run("toolCalled", subject, tools=["get_weather", "search"], mode="any").passed
        r = run("toolCalled", subject, tools=["a", "b"], mode="any")
        assert (r.status, r.score) == (Status.FAILED, 0.0)

    def test_tools_option_is_required_and_non_empty(self):
        subject = make_subject()
        assert run("toolCalled", subject).status is Status.ERROR
        assert run("toolCalled", subject, tools=[]).status is Status.ERROR


class TestToolCallsPresent:
    def test_passes_with_a_call(self):
        r = run("toolCallsPresent", make_subject(calls=[call("x")]))
        assert r.passed and r.explanation == "1 tool call made"

    def test_fails_without(self):
        r = run("toolCallsPresent", make_subject())
        assert r.status is Status.FAILED and r.explanation == "0 tool calls made"


class TestToolCallArgsMatch:
    def test_empty_expectation_passes(self):
        r = run("toolCallArgsMatch", make_subject(calls=[call("x", a=1)]))
        assert (r.status, r.score) == (Status.PASSED, 1.0)

    def test_argument_subset_matches(self):
        subject = make_subject(
            calls=[call("get_weather", city="Paris", units="metric")],
            expected_calls=[expect("get_weather", {"city": "Paris"})],
        )
        assert run("toolCallArgsMatch", subject).passed

    def test_numbers_compare_by_value(self):
        subject = make_subject(
            calls=[call("forecast", days=3.0, lat=48)],
            expected_calls=[expect("forecast", {"days": 3, "lat": 48.0})],
        )
        assert run("toolCallArgsMatch", subject).passed

    def test_bool_is_not_a_number(self):
        subject = make_subject(
            calls=[call("f", flag=1)], expected_calls=[expect("f", {"flag": True})]
        )
        assert not run("toolCallArgsMatch", subject).passed

    def test_nested_values_compare_recursively(self):
        subject = make_subject(
            calls=[call("book", trip={"from": "CDG", "to": "JFK", "legs": [{"n": 1.0}]})],
            expected_calls=[expect("book", {"trip": {"to": "JFK", "legs": [{"n": 1}]}})],
        )
        assert run("toolCallArgsMatch", subject).passed
        subject = make_subject(
            calls=[call("book", trip={"to": "JFK", "legs": [{"n": 1}, {"n": 2}]})],
            expected_calls=[expect("book", {"trip": {"legs": [{"n": 1}]}})],
        )
        r = run("toolCallArgsMatch", subject)
        assert r.status is Status.FAILED
        assert r.details["unmatched"][0]["differences"] == ["trip.legs: expected 1 items, got 2"]

    def test_wrong_argument_reports_the_drift(self):
        subject = make_subject(
            calls=[call("get_weather", city="London")],
            expected_calls=[expect("get_weather", {"city": "Paris"})],
        )
        r = run("toolCallArgsMatch", subject)
        assert (r.status, r.score) == (Status.FAILED, 0.0)
        assert "city: expected 'Paris', got 'London'" in r.explanation
        assert r.details["unmatched"][0]["name"] == "get_weather"

    def test_never_called_tool(self):
        subject = make_subject(calls=[], expected_calls=[expect("get_weather")])
        r = run("toolCallArgsMatch", subject)
        assert "get_weather: never called" in r.explanation

    def test_each_expected_call_needs_its_own_actual_call(self):
        subject = make_subject(
            calls=[call("get_weather", city="Paris")],
            expected_calls=[expect("get_weather", {"city": "Paris"}), expect("get_weather")],
        )
        r = run("toolCallArgsMatch", subject)
        assert r.status is Status.FAILED and r.score == 0.5
        assert "taken by other expected calls" in r.explanation

    def test_matching_is_maximal_not_greedy(self):
        # greedy would give the bare expectation the Paris call and leave nothing for Paris
        subject = make_subject(
            calls=[call("get_weather", city="Paris"), call("get_weather", city="Rome")],
            expected_calls=[expect("get_weather"), expect("get_weather", {"city": "Paris"})],
        )
        r = run("toolCallArgsMatch", subject)
        assert r.passed and sorted(r.details["matched"]) == [[0, 1], [1, 0]]

    def test_name_only_expectation(self):
        subject = make_subject(
            calls=[call("search", q="x")], expected_calls=[expect("search", None)]
        )
        assert run("toolCallArgsMatch", subject).passed


class TestToolTrajectory:
    @pytest.mark.parametrize(
        ("mode", "got", "passed"),
        [
            ("exact", ["a", "b"], True),
            ("exact", ["b", "a"], False),
            ("exact", ["a", "b", "c"], False),
            ("in_order", ["a", "x", "b"], True),
            ("in_order", ["b", "a"], False),
            ("any_order", ["b", "a"], True),
            ("any_order", ["b", "a", "a"], False),
            ("subset", ["a"], True),
            ("subset", [], True),
            ("subset", ["a", "c"], False),
            ("superset", ["c", "b", "a"], True),
            ("superset", ["a"], False),
        ],
    )
    def test_modes(self, mode, got, passed):
        subject = make_subject(
            calls=[call(n) for n in got], expected_calls=[expect("a"), expect("b")]
        )
        r = run("toolTrajectory", subject, mode=mode)
        assert r.passed is passed, r.explanation
        assert 0.0 <= r.score <= 1.0
        assert (r.score == 1.0) is passed
        assert r.details["expected"] == ["a", "b"] and r.details["actual"] == got

    def test_default_mode_is_exact(self):
        subject = make_subject(
            calls=[call("b"), call("a")], expected_calls=[expect("a"), expect("b")]
        )
        r = run("toolTrajectory", subject)
        assert not r.passed and r.details["mode"] == "exact"
        assert r.explanation == "exact: expected [a, b], got [b, a]"
        assert r.score == 0.5

    def test_partial_scores(self):
        exp = [expect("a"), expect("b"), expect("c"), expect("d")]
        subject = make_subject(calls=[call("a"), call("c")], expected_calls=exp)
        assert run("toolTrajectory", subject, mode="in_order").score == 0.5
        assert run("toolTrajectory", subject, mode="superset").score == 0.5
        assert run("toolTrajectory", subject, mode="subset").score == 1.0

    def test_nothing_expected(self):
        subject = make_subject(calls=[call("a")])
        assert not run("toolTrajectory", subject).passed
        assert run("toolTrajectory", subject, mode="superset").passed
        assert run("toolTrajectory", make_subject(), mode="exact").passed


class TestNoToolErrors:
    def test_no_errors(self):
        r = run("noToolErrors", make_subject(calls=[call("a"), call("b")]))
        assert (r.status, r.score) == (Status.PASSED, 1.0)
        assert run("noToolErrors", make_subject()).passed

    def test_errors_fail_with_fraction(self):
        subject = make_subject(
            calls=[call("a"), call("b", error="timeout"), call("c"), call("d", error="500")]
        )
        r = run("noToolErrors", subject)
        assert (r.status, r.score) == (Status.FAILED, 0.5)
        assert r.explanation == "2 of 4 tool calls failed; first: b: timeout"
        assert r.details["failed"][1] == {"tool": "d", "error": "500"}


class TestMatchingHelpers:
    def test_values_match_rules(self):
        assert values_match({"a": 1}, {"a": 1.0, "b": 2})
        assert not values_match({"a": 1}, {"b": 1})
        assert not values_match([1, 2], [1, 2, 3])
        assert values_match([1, {"x": 2}], (1.0, {"x": 2, "y": 3}))
        assert not values_match(True, 1) and not values_match(1, True)
        assert not values_match("1", 1) and not values_match(1, "1")
        assert values_match(None, None) and not values_match(None, 0)
        assert not values_match({"a": {}}, {"a": []})

    def test_arg_differences(self):
        diffs = arg_differences(
            {"city": "Paris", "n": 2, "opts": {"u": "C"}, "l": [1]},
            {"city": "Rome", "n": 2.0, "opts": "C", "l": [2]},
        )
        assert diffs == [
            "city: expected 'Paris', got 'Rome'",
            "opts: expected an object, got 'C'",
            "l[0]: expected 1, got 2",
        ]
        assert arg_differences({"a": 1}, {}) == ["a: missing"]

    def test_max_matching(self):
        assert max_matching([[0, 1], [0]], 2) == [1, 0]
        assert max_matching([[0], [0]], 1) == [0, None]
        assert max_matching([[], [0]], 1) == [None, 0]
