"""Pairing a replay's tool calls with the recording, for the report's trajectory table."""

from __future__ import annotations

from tracereplay.models import ToolCallRecord
from tracereplay.report.trajectory import align, drifted_keys, recorded_only
from tracereplay.scoring.outcomes import ArgumentDrift, ReplayReport, UnansweredCall


def call(tool: str, **arguments: object) -> ToolCallRecord:
    return ToolCallRecord(round=1, tool_name=tool, arguments=dict(arguments))


def test_same_calls_pair_up_whatever_the_order() -> None:
    recorded = [call("a", x=1), call("b", y=2)]
    steps = align(recorded, [call("b", y=2.0), call("a", x=1)])  # 2 == 2.0 as in replay
    assert [(s.status, s.recorded_position, s.replayed_position) for s in steps] == [
        ("match", 1, 0), ("match", 0, 1)
    ]  # fmt: skip


def test_drift_without_a_report_pairs_with_the_next_recording_of_the_tool() -> None:
    steps = align([call("search", q="cats", n=3)], [call("search", q="dogs", n=3, lang="en")])
    [step] = steps
    assert step.status == "drift" and step.answered is None
    assert step.drifted_keys == ["q", "lang"]
    assert step.differences == ["q: expected 'cats', got 'dogs'", "lang: not recorded"]


def test_drift_reported_by_strict_replay_is_paired_and_not_answered() -> None:
    recorded = [call("search", q="cats"), call("search", q="birds")]
    report = ReplayReport(
        tool_match="strict",
        drift=[ArgumentDrift(tool="search", arguments={"q": "bird"}, recorded_position=1,
                             recorded_arguments={"q": "birds"}, differences=["q: typo"],
                             answered=False)],
        unanswered=[UnansweredCall(tool="search", arguments={"q": "bird"})],
    )  # fmt: skip
    steps = align(recorded, [call("search", q="bird")], report)
    assert [(s.status, s.recorded_position) for s in steps] == [("drift", 1), ("unused", 0)]
    assert steps[0].answered is False and steps[0].differences == ["q: typo"]


def test_calls_without_recording_and_unused_recordings() -> None:
    steps = align([call("a"), call("b")], [call("a"), call("c", z=1)])
    assert [(s.status, s.recorded_position, s.replayed_position) for s in steps] == [
        ("match", 0, 0), ("no_recording", None, 1), ("unused", 1, None)
    ]  # fmt: skip


def test_unanswered_calls_missing_from_the_trajectory_come_from_the_report() -> None:
    report = ReplayReport(unanswered=[UnansweredCall(tool="lookup", arguments={"id": 7})])
    [step] = align([], [], report)
    assert step.status == "no_recording"
    assert step.replayed is not None and step.replayed.arguments == {"id": 7}
    assert step.replayed.error == "no recording answered this call"


def test_recorded_mode_lists_the_calls() -> None:
    steps = recorded_only([call("a"), call("b")])
    assert [(s.status, s.recorded_position) for s in steps] == [("recorded", 0), ("recorded", 1)]


def test_drifted_keys_compare_values_not_types_of_numbers() -> None:
    assert drifted_keys({"n": 1, "s": "x"}, {"n": 1.0, "s": "y"}) == ["s"]
    assert drifted_keys({"flag": True}, {"flag": 1}) == ["flag"]
