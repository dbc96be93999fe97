"""What a fork (``--llm-until N``) and tools run live against recorded decisions (``--llm
recorded --live-tools``) left in a case's replay report, shaped for the HTML report and the UI's
eval-run and case pages (both render ``modes`` and ``markers``; the wording is the models' own,
``LlmReport.fork_note`` and ``ReplayReport.diverged_note``, so ``eval``, ``show``, the report and
the UI say the same).

The trajectory is a list of tool calls; a fork and a divergence are LLM call numbers. A tool
call's ``round`` is the LLM call that asked for it, so the fork line goes before the first
replayed call of a round past N (the calls above it were answered from the recording, those
below it went live), and the divergence line before the first call of round K or later.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib import resources
from typing import Any, Literal

from pydantic import BaseModel, Field

from tracereplay.report.trajectory import Step
from tracereplay.scoring.outcomes import ReplayReport

LineKind = Literal["head", "hunk", "del", "add", "same"]


class DiffLine(BaseModel):
    """One line of a unified diff, with what it is (for its colour)."""

    kind: LineKind
    text: str


def stylesheet() -> str:
    """How both draw what this module shapes (``replay_modes.css``): the report embeds it, the UI
    serves it as ``/static/replay-modes.css``, so the two cannot drift apart."""
    return resources.files(__package__).joinpath("replay_modes.css").read_text(encoding="utf-8")


def diff_lines(diff: str) -> list[DiffLine]:
    """A unified diff's lines, each told by its first character."""
    out = []
    for line in diff.splitlines():
        if line.startswith(("---", "+++")):
            kind: LineKind = "head"
        elif line.startswith("@@"):
            kind = "hunk"
        elif line.startswith("-"):
            kind = "del"
        elif line.startswith("+"):
            kind = "add"
        else:
            kind = "same"
        out.append(DiffLine(kind=kind, text=line))
    return out


class ToolResultView(BaseModel):
    """A tool run for real whose result differs from the recorded call it stands for."""

    tool: str
    round: int
    arguments: dict[str, Any] = Field(default_factory=dict)
    recorded_result: str | None = None
    live_result: str = ""
    diff: list[DiffLine] = Field(default_factory=list)


class LiveDrift(BaseModel):
    """A live LLM request past the fork against the recorded call it stands for."""

    round: int
    differences: list[str] = Field(default_factory=list)
    diff: list[DiffLine] = Field(default_factory=list)


class ReplayModes(BaseModel):
    """The fork and the live tools of one repetition's replay."""

    fork_round: int | None = None
    fork_note: str = ""
    live_calls: list[int] = Field(default_factory=list)
    live_drift: list[LiveDrift] = Field(default_factory=list)
    tools_note: str = ""
    tool_results: list[ToolResultView] = Field(default_factory=list)
    diverged_at: int | None = None
    diverged_note: str = ""


def replay_modes(report: ReplayReport | None) -> ReplayModes | None:
    """The view of ``report``; ``None`` when the replay neither forked nor ran tools live."""
    if report is None:
        return None
    llm = report.llm
    forked = llm is not None and llm.fork_round is not None
    if not forked and not report.tool_results_compared and not report.tool_result_drift:
        return None  # (--live-tools alone runs only what no recording answers: nothing compared)
    modes = ReplayModes(
        tools_note=report.tool_results_note(),
        diverged_at=report.diverged_at,
        diverged_note=report.diverged_note(),
        tool_results=[
            ToolResultView(
                tool=d.tool,
                round=d.round,
                arguments=d.arguments,
                recorded_result=d.recorded_result,
                live_result=d.live_result,
                diff=diff_lines(d.diff),
            )
            for d in report.tool_result_drift
        ],
    )
    if llm is not None and forked:
        modes.fork_round = llm.fork_round
        modes.fork_note = llm.fork_note()
        modes.live_calls = list(llm.live)
        modes.live_drift = [
            LiveDrift(round=d.round, differences=d.differences, diff=diff_lines(d.diff))
            for d in llm.drift
            if d.live
        ]
    return modes


MarkerKind = Literal["fork", "diverged"]


class Marker(BaseModel):
    """A line across the trajectory table, before the step at ``before`` (``len(steps)``:
    after the last one)."""

    kind: MarkerKind
    before: int
    text: str


def _first_round_at_least(steps: Sequence[Step], round_no: int) -> int:
    """The index of the first replayed call of LLM round ``round_no`` or later; failing that,
    the place after the last replayed call (recordings never called are listed below it)."""
    last = 0
    for i, step in enumerate(steps):
        if step.replayed is None or step.replayed.round <= 0:
            continue
        if step.replayed.round >= round_no:
            return i
        last = i + 1
    return last


def markers(steps: Sequence[Step], modes: ReplayModes | None) -> list[Marker]:
    """Where the fork and the divergence fall in a trajectory, in table order."""
    if modes is None:
        return []
    out = []
    if modes.fork_round is not None:
        n = modes.fork_round
        out.append(
            Marker(
                kind="fork",
                before=_first_round_at_least(steps, n + 1),
                text=f"{modes.fork_note}: the calls above were answered from the recording, "
                "those below went live",
            )
        )
    if modes.diverged_at is not None:
        out.append(
            Marker(
                kind="diverged",
                before=_first_round_at_least(steps, modes.diverged_at),
                text=modes.diverged_note,
            )
        )
    return sorted(out, key=lambda m: m.before)


def live_step(step: Step, modes: ReplayModes | None) -> bool:
    """Whether a replayed call came after the fork (its round past N)."""
    if modes is None or modes.fork_round is None or step.replayed is None:
        return False
    return step.replayed.round > modes.fork_round
