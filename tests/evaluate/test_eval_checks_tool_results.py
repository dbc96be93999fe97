"""``toolResultsMatch``: a replay's tool results against the recorded ones (exact, json, fuzzy),
and the comparison helpers the replay report uses (property tests: never raises, scores in
0..1, a result always matches itself, JSON equality ignores key order and int/float)."""

from __future__ import annotations

import orjson
from eval_check_helpers import make_subject, run
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracereplay.checks.tool_results import pair_calls, result_diff, results_similarity
from tracereplay.models import Status, ToolCallRecord

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=10,
)


def tc(name: str, result: str, error: str | None = None, **arguments: object) -> ToolCallRecord:
    return ToolCallRecord(round=1, tool_name=name, arguments=arguments, result=result, error=error)


def subject(live: list[ToolCallRecord], recorded: list[ToolCallRecord] | None):
    return make_subject(calls=live, recorded_tool_calls=recorded)


def test_json_mode_ignores_key_order_and_number_form() -> None:
    recorded = [tc("get_weather", '{"city": "Paris", "temperature_c": 12}', city="Paris")]
    live = [tc("get_weather", '{"temperature_c": 12.0, "city": "Paris"}', city="Paris")]
    assert run("toolResultsMatch", subject(live, recorded)).status is Status.PASSED
    exact = run("toolResultsMatch", subject(live, recorded), mode="exact")
    assert exact.status is Status.FAILED and exact.score == 0.0


def test_a_changed_result_fails_with_both_results_and_a_diff() -> None:
    recorded = [tc("get_weather", '{"temperature_c": 12}', city="Paris"), tc("f", "ok")]
    live = [tc("get_weather", '{"temperature_c": 14}', city="Paris"), tc("f", "ok")]
    result = run("toolResultsMatch", subject(live, recorded))
    assert result.status is Status.FAILED and result.score == 0.5
    assert result.explanation.startswith("1 of 2 tool results differ from the recording (json)")
    [d] = result.details["drifted"]
    assert d["recorded"] == '{"temperature_c": 12}' and d["live"] == '{"temperature_c": 14}'
    assert '-  "temperature_c": 12' in d["diff"] and '+  "temperature_c": 14' in d["diff"]


def test_a_tool_that_now_raises_is_drift() -> None:
    recorded = [tc("lookup", '{"id": 1}', id=1)]
    live = [tc("lookup", "", error="KeyError: 1", id=1)]
    result = run("toolResultsMatch", subject(live, recorded))
    assert result.status is Status.FAILED and "Error: KeyError: 1" in result.explanation


def test_fuzzy_mode_passes_above_its_threshold() -> None:
    recorded = [tc("search", "Paris is the capital of France.")]
    live = [tc("search", "Paris is the capital of France!")]
    assert run("toolResultsMatch", subject(live, recorded), mode="fuzzy").passed
    strict = run("toolResultsMatch", subject(live, recorded), mode="fuzzy", threshold=1.0)
    assert strict.status is Status.FAILED


def test_not_a_replay_passes_and_bad_options_are_errors() -> None:
    assert run("toolResultsMatch", subject([tc("f", "x")], None)).passed
    assert run("toolResultsMatch", subject([], [tc("f", "x")])).passed
    assert run("toolResultsMatch", subject([], []), mode="loose").status is Status.ERROR
    assert run("toolResultsMatch", subject([], []), threshold=2).status is Status.ERROR


def test_calls_pair_by_arguments_then_in_order() -> None:
    recorded = [tc("w", "a", city="Rome"), tc("w", "b", city="Oslo"), tc("x", "c")]
    live = [tc("w", "?", city="Oslo"), tc("w", "?", city="Lima"), tc("y", "?")]
    assert pair_calls(recorded, live) == [1, 0, None]


@SETTINGS
@given(value=json_values, other=json_values, mode=st.sampled_from(["exact", "json", "fuzzy"]))
def test_scores_stay_in_range_and_a_result_matches_itself(value, other, mode) -> None:
    a, b = orjson.dumps(value).decode(), orjson.dumps(other).decode()
    assert results_similarity(a, a, mode) == 1.0
    assert 0.0 <= results_similarity(a, b, mode) <= 1.0
    assert result_diff(a, a) == ""
    verdict = run("toolResultsMatch", subject([tc("t", b)], [tc("t", a)]), mode=mode)
    assert verdict.status in (Status.PASSED, Status.FAILED) and 0.0 <= verdict.score <= 1.0


@SETTINGS
@given(value=st.dictionaries(st.text(max_size=4), json_values, max_size=5))
def test_json_equality_ignores_key_order(value) -> None:
    forward = orjson.dumps(value).decode()
    backward = orjson.dumps(dict(reversed(list(value.items())))).decode()
    assert results_similarity(forward, backward, "json") == 1.0
