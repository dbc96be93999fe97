"""Where a fork's and a divergence's lines fall in a trajectory, and when a replay has neither
(``tracereplay.report.replay_modes``: what the report and the UI draw)."""

from __future__ import annotations

from tracereplay.models import ToolCallRecord
from tracereplay.report.replay_modes import diff_lines, live_step, markers, replay_modes
from tracereplay.report.trajectory import Step
from tracereplay.scoring.outcomes import LlmReport, ReplayReport, ToolResultDrift


def _steps(rounds: list[int], unused: int = 0) -> list[Step]:
    made = [
        Step(status="match", replayed=ToolCallRecord(round=r, tool_name="t"), replayed_position=i)
        for i, r in enumerate(rounds)
    ]
    return made + [
        Step(status="unused", recorded=ToolCallRecord(round=9, tool_name="t"))
        for _ in range(unused)
    ]


def _fork(n: int) -> ReplayReport:
    return ReplayReport(llm=LlmReport(fork_round=n, live=[n + 1]))


def test_the_fork_line_goes_before_the_first_call_of_a_live_round() -> None:
    steps = _steps([1, 1, 2, 3], unused=1)
    [line] = markers(steps, replay_modes(_fork(1)))
    assert (line.kind, line.before) == ("fork", 2)
    assert [live_step(s, replay_modes(_fork(1))) for s in steps] == [
        False,
        False,
        True,
        True,
        False,
    ]
    assert markers(steps, replay_modes(_fork(0)))[0].before == 0
    # nothing past the fork: the line under the last replayed call, above the unused ones
    assert markers(steps, replay_modes(_fork(5)))[0].before == 4


def test_the_divergence_line_goes_before_the_calls_of_its_round() -> None:
    report = ReplayReport(
        tools_live=2,
        tool_results_compared=2,
        tool_result_drift=[ToolResultDrift(tool="t", round=1, diff="--- a\n+++ b\n-x\n+y")],
        diverged_at=2,
        llm=LlmReport(),
    )
    modes = replay_modes(report)
    assert modes is not None and modes.fork_round is None
    [line] = markers(_steps([1, 2, 2]), modes)
    assert (line.kind, line.before) == ("diverged", 1)
    assert "LLM call 2" in line.text and "not comparable" in line.text
    assert [x.kind for x in modes.tool_results[0].diff] == ["head", "head", "del", "add"]


def test_a_replay_without_a_fork_or_compared_results_has_no_part() -> None:
    assert replay_modes(None) is None
    assert replay_modes(ReplayReport(llm=LlmReport())) is None
    # --live-tools without --llm recorded: calls ran live, none compared with the recording
    assert replay_modes(ReplayReport(tools_live=1)) is None
    assert diff_lines(" same\n@@ -1 +1 @@")[0].kind == "same"
