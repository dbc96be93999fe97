"""What an eval run produces: one ``CaseRun`` per case and repetition, the replay report of a
replayed case, the per-case ``EvaluationResult`` over its repetitions, and the eval run record."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from tracereplay.models import EvalCase, EvaluationResult, Status, ToolCallRecord
from tracereplay.models.run import _Record

EvalMode = Literal["recorded", "replay"]
EvalRunStatus = Literal["running", "completed", "stopped", "interrupted"]


class RecordedCallRef(_Record):
    """A recorded tool call, by its position in the source run's tool calls."""

    position: int
    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class ArgumentDrift(_Record):
    """The replay called a recorded tool with other arguments than the recording."""

    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict, description="what the replay passed")
    recorded_position: int
    recorded_arguments: dict[str, Any] = Field(default_factory=dict)
    differences: list[str] = Field(default_factory=list)
    answered: bool = Field(
        description="fifo matching answered the call from this recording anyway; strict did not"
    )


class UnansweredCall(_Record):
    """A tool call no recording answered: an ERROR, unless ``live`` (``--live-tools``) ran it."""

    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    live: bool = False
    reason: str = Field(default="", description="why no recording answered it")


class ToolResultDrift(_Record):
    """A tool run for real whose result differs from the recorded call it stands for
    (``--llm recorded --live-tools``): both results, and their diff."""

    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    round: int = Field(default=0, description="the replay's round the call was made in")
    recorded_position: int | None = Field(
        default=None, description="the recorded call (None: the source run made no such call)"
    )
    recorded_result: str | None = None
    live_result: str = ""
    diff: str = Field(default="", description="unified diff of the results (recorded -> live)")


class PromptDrift(_Record):
    """A replayed LLM request that differs from the recorded one it was matched to."""

    round: int = Field(description="1-based number of the replay's LLM call")
    recorded_round: int = Field(description="round of the recorded call it was matched to")
    recorded_run_id: str = ""
    fields: list[str] = Field(
        default_factory=list, description="what differs: messages, model, temperature, tools"
    )
    differences: list[str] = Field(default_factory=list, description="one line per difference")
    diff: str = Field(default="", description="unified diff of the messages (recorded -> replay)")
    answered: bool = Field(
        default=True, description="answered from the recording anyway (--llm-match order)"
    )
    live: bool = Field(
        default=False, description="sent live, past the fork (--llm-until): drift of the live part"
    )


class LlmReport(_Record):
    """How a replay's LLM calls met the recording (``--llm recorded``)."""

    llm_match: Literal["order", "strict"] = "order"
    fork_round: int | None = Field(
        default=None,
        description="--llm-until N: the recording answered LLM calls 1..N, later ones went live",
    )
    live: list[int] = Field(default_factory=list, description="LLM calls sent live (past the fork)")
    recorded: int = Field(default=0, description="LLM calls the recording holds")
    answered: int = 0
    drift: list[PromptDrift] = Field(default_factory=list)
    errors: list[str] = Field(
        default_factory=list, description="why an LLM call got no answer (each makes an ERROR)"
    )
    unused: list[int] = Field(
        default_factory=list, description="rounds of the source run's LLM calls never asked"
    )
    unchecked: list[int] = Field(
        default_factory=list,
        description="rounds answered without a drift check (the recording has no input messages)",
    )

    def fork_note(self) -> str:
        """Where a fork (``--llm-until N``) left the recording, in words (``eval``, ``show``, the
        report and the UI say it alike); ``""`` when the replay did not fork."""
        n = self.fork_round
        if n is None:
            return ""
        if not self.live:
            return f"fork at LLM call {n}: the replay made no LLM call past it (all from the recording)"
        answered = {0: "no call", 1: "call 1"}.get(n, f"calls 1-{n}")
        return (
            f"fork at LLM call {n}: {answered} answered from the recording, "
            f"{len(self.live)} live from call {self.live[0]}"
        )


class ReplayReport(_Record):
    """How a replay's tool calls (and, with ``--llm recorded``, its LLM calls) met the
    recording."""

    tool_match: Literal["strict", "fifo"] = "strict"
    has_recording: bool = True
    answered: int = 0
    drift: list[ArgumentDrift] = Field(default_factory=list)
    unanswered: list[UnansweredCall] = Field(default_factory=list)
    unused: list[RecordedCallRef] = Field(default_factory=list)
    llm: LlmReport | None = None
    #: ``--llm recorded --live-tools``: every tool ran for real; its results against the recording
    tools_live: int = Field(
        default=0, description="tool calls run for real (all, with --llm recorded)"
    )
    tool_results_compared: int = 0
    tool_result_drift: list[ToolResultDrift] = Field(default_factory=list)
    history: Literal["given", "not taken"] | None = Field(
        default=None,
        description="a case with history: given to the agent, or not taken (the agent takes "
        "none: it was replayed on its question alone); None for a case without history",
    )
    diverged_at: int | None = Field(
        default=None,
        description="the first LLM call whose request the recording no longer answers because "
        "live tool results differed (its messages drifted): the run is not comparable from there",
    )

    def tool_results_note(self) -> str:
        """``--live-tools`` with ``--llm recorded``: how many tools ran for real and how many of
        their results differ from the recording; ``""`` when none was compared (``--live-tools``
        without ``--llm recorded`` runs only the calls no recording answers: nothing to compare)."""
        if not self.tools_live or not self.tool_results_compared:
            return ""
        differ = len(self.tool_result_drift)
        return (
            f"{self.tools_live} tool call(s) ran for real: "
            f"{self.tool_results_compared - differ} result(s) as recorded, {differ} differ"
        )

    def diverged_note(self) -> str:
        """The LLM call from which the run is no longer comparable with the recording."""
        if self.diverged_at is None:
            return ""
        return (
            f"LLM call {self.diverged_at}: the recording no longer answers this decision (its "
            "request carries the changed tool results): the run is not comparable from here"
        )

    @property
    def missing(self) -> list[UnansweredCall]:
        """Calls with no recording that did not run live (each makes the case an ERROR)."""
        return [c for c in self.unanswered if not c.live]

    @property
    def live_calls(self) -> int:
        return sum(1 for c in self.unanswered if c.live)


class CaseRun(_Record):
    """One repetition of one case: its ``EvaluationResult`` plus what was scored and how."""

    case_id: str
    seq: int = 0
    repetition: int = 0
    attempts: int = 1
    result: EvaluationResult
    source_run_id: str | None = None
    response: str | None = None
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    replay: ReplayReport | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    #: a turn of a multi-turn case: its 1-based number; None for a case as a whole
    turn: int | None = None
    #: a multi-turn case: each turn's own run, in order (``scoring/conversation.py``)
    turns: list[CaseRun] = Field(default_factory=list)

    @property
    def status(self) -> Status:
        return self.result.status


class CaseReport(_Record):
    """A case with its result over all repetitions, and each repetition."""

    case: EvalCase
    result: EvaluationResult
    runs: list[CaseRun] = Field(default_factory=list)


class EvalRunRecord(_Record):
    """A row of ``eval_runs``: one evaluation of a suite (or of some of its cases)."""

    eval_run_id: str
    suite_id: str
    suite_name: str
    mode: EvalMode
    agent: str | None = None
    label: str | None = None
    started_at: datetime
    finished_at: datetime | None = None
    git_commit: str | None = None
    git_dirty: bool | None = None
    status: EvalRunStatus = "running"
    total_cases: int = 0
    passed: int = 0
    failed: int = 0
    errored: int = 0
    pass_rate: float | None = None
    aggregate_score: float | None = None
    options: dict[str, Any] = Field(default_factory=dict)
