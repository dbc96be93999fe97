"""``RecordedTools``: strict and fifo answering, drift, unanswered and unused recorded calls."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tracereplay.models import ToolCallRecord
from tracereplay.replay.answering.recorded_tools import (
    NoRecordingError,
    RecordedToolError,
    RecordedTools,
    arguments_equal,
    replay_error_reason,
)
from tracereplay.sdk import RUN_LIVE


def rec(name: str, result: str = "ok", error: str | None = None, **arguments: object):
    return ToolCallRecord(round=1, tool_name=name, arguments=arguments, result=result, error=error)


RECORDING = [
    rec("get_weather", '{"temp": 21}', city="Paris"),
    rec("get_weather", '{"temp": 15}', city="Oslo"),
    rec("get_population", "2100000", city="Paris"),
]


def test_strict_answers_equal_arguments_in_any_order_and_decodes_json_results() -> None:
    tools = RecordedTools(RECORDING)
    assert tools("get_weather", {"city": "Oslo"}) == {"temp": 15}
    assert tools("get_population", {"city": "Paris"}) == "2100000"  # text stays text
    assert tools("get_weather", {"city": "Paris"}) == {"temp": 21}
    report = tools.report()
    assert report.answered == 3 and not report.drift and not report.unused
    assert replay_error_reason(report) is None


def test_numbers_compare_by_value_but_a_bool_is_not_a_number() -> None:
    tools = RecordedTools([rec("add", "3", a=1, b=2.0), rec("flag", "x", on=1)])
    assert tools("add", {"a": 1.0, "b": 2}) == "3"
    with pytest.raises(NoRecordingError):
        tools("flag", {"on": True})


def test_strict_drift_is_unanswered_names_tool_and_arguments_and_keeps_the_recording() -> None:
    tools = RecordedTools(RECORDING)
    with pytest.raises(NoRecordingError) as err:
        tools("get_weather", {"city": "paris"})
    assert 'get_weather({"city":"paris"})' in str(err.value)
    assert 'get_weather({"city":"Paris"})' in str(err.value)  # what was recorded
    report = tools.report()
    [drift] = report.drift
    assert drift.tool == "get_weather" and not drift.answered
    assert drift.recorded_arguments == {"city": "Paris"} and drift.differences
    assert [m.arguments for m in report.missing] == [{"city": "paris"}]
    assert {u.position for u in report.unused} == {0, 1, 2}
    reason = replay_error_reason(report)
    assert reason is not None and "get_weather" in reason and '"paris"' in reason


def test_fifo_answers_the_next_recording_of_that_name_and_reports_drift() -> None:
    tools = RecordedTools(RECORDING, "fifo")
    assert tools("get_weather", {"city": "Lima"}) == {"temp": 21}  # first get_weather
    assert tools("get_weather", {"city": "Oslo"}) == {"temp": 15}
    report = tools.report()
    [drift] = report.drift
    assert drift.answered and drift.arguments == {"city": "Lima"}
    assert drift.recorded_position == 0
    assert [u.tool for u in report.unused] == ["get_population"]
    with pytest.raises(NoRecordingError, match="used every one"):
        tools("get_weather", {"city": "Oslo"})


def test_a_tool_never_recorded_is_unanswered_unless_live_tools() -> None:
    with pytest.raises(NoRecordingError, match="never called get_time"):
        RecordedTools(RECORDING)("get_time", {"city": "Paris"})
    live = RecordedTools(RECORDING, live_tools=True)
    assert live("get_time", {"city": "Paris"}) is RUN_LIVE
    report = live.report()
    assert report.live_calls == 1 and not report.missing
    assert replay_error_reason(report) is None


def test_a_case_without_recording_says_so() -> None:
    tools = RecordedTools([], has_recording=False)
    with pytest.raises(NoRecordingError, match="no source run"):
        tools("get_weather", {"city": "Paris"})
    assert "--live-tools" in (replay_error_reason(tools.report()) or "")


class StationMissing(LookupError):
    """A tool's own exception type (found again by name when replayed)."""


def test_a_recorded_failure_fails_the_same_way() -> None:
    tools = RecordedTools(
        [
            rec("get_weather", "", error="HTTP 503", city="Paris"),
            rec("get_weather", "", error="StationMissing: no station in Atlantis", city="Atlantis"),
            rec("get_weather", "", error="ValueError: bad unit", city="Oslo"),
        ]
    )
    with pytest.raises(RecordedToolError, match="HTTP 503"):
        tools("get_weather", {"city": "Paris"})
    with pytest.raises(StationMissing, match="^no station in Atlantis$") as err:
        tools("get_weather", {"city": "Atlantis"})  # an `except LookupError` still catches it
    assert isinstance(err.value, RecordedToolError)
    assert type(err.value).__name__ == "StationMissing"
    with pytest.raises(ValueError, match="^bad unit$"):
        tools("get_weather", {"city": "Oslo"})


def test_unknown_match_mode_is_refused() -> None:
    with pytest.raises(ValueError):
        RecordedTools(RECORDING, "loose")  # type: ignore[arg-type]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=3),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner, max_size=3)
    ),
    max_leaves=8,
)


@given(st.dictionaries(st.text(max_size=3), json_values, max_size=4))
def test_strict_always_answers_a_call_identical_to_its_recording(args: dict) -> None:
    tools = RecordedTools([ToolCallRecord(round=1, tool_name="t", arguments=args, result="r")])
    assert arguments_equal(args, args)
    assert tools("t", args) == "r"
    assert tools.report().unused == []
