"""``CheckSubject``: what a check looks at (the case, the agent's result, the run's costs)."""

from __future__ import annotations

from dataclasses import dataclass, field

from tracereplay.models.evals import EvalCase
from tracereplay.models.run import AgentResult, Run, ToolCallRecord


@dataclass(slots=True)
class TranscriptTurn:
    """One turn of a conversation as a conversation check sees it: the user's question, what
    the agent answered and the tools it called (the replay's, or the recording's in recorded
    mode), and whether the turn ended in the agent failing."""

    number: int
    query: str
    response: str
    tool_calls: list[ToolCallRecord] = field(default_factory=list)
    failed: bool = False
    expected_output: str | None = None


@dataclass(slots=True)
class CheckSubject:
    """One case and the agent result being scored against it.

    ``run`` (the recorded or replayed run) supplies what budgets need; the explicit
    ``duration_ms`` / ``input_tokens`` / ``output_tokens`` override it when a runner measured
    them itself. ``None`` means unknown: a budget check on an unknown quantity is an ERROR.
    """

    case: EvalCase
    result: AgentResult
    run: Run | None = None
    duration_ms: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    #: a replay: the source run's tool calls (what ``toolResultsMatch`` compares the replay's
    #: tool results with); None when the subject is no replay
    recorded_tool_calls: list[ToolCallRecord] | None = None
    #: a multi-turn case judged as a whole: every turn, in order (``scoring/conversation.py``);
    #: None for one turn, whose transcript is that turn alone (``conversation``)
    transcript: list[TranscriptTurn] | None = None

    def conversation(self) -> list[TranscriptTurn]:
        """The turns a conversation check judges: the whole conversation of a multi-turn case,
        else the one turn this subject is (a one-question case is a conversation of one)."""
        if self.transcript is not None:
            return self.transcript
        return [
            TranscriptTurn(
                number=1,
                query=self.case.query,
                response=self.result.response,
                tool_calls=list(self.result.tool_calls),
                failed=self.result.status == "failed",
                expected_output=self.case.expected_output,
            )
        ]

    @property
    def output(self) -> str:
        """The agent's final response text."""
        return self.result.response

    @property
    def expected_output(self) -> str | None:
        return self.case.expected_output

    def latency_ms(self) -> float | None:
        """Wall time of the run in ms, or None when unknown."""
        if self.duration_ms is not None:
            return self.duration_ms
        return self.run.duration_ms if self.run is not None else None

    def token_usage(self) -> tuple[int, int] | None:
        """``(input_tokens, output_tokens)``, or None when no token count was recorded."""
        if self.input_tokens is not None or self.output_tokens is not None:
            return (self.input_tokens or 0, self.output_tokens or 0)
        run = self.run
        if run is None:
            return None
        if run.input_tokens or run.output_tokens:
            return (run.input_tokens, run.output_tokens)
        calls = run.llm_calls
        if not calls and self.result.total_llm_calls:
            return None  # LLM calls counted but not loaded with the run
        if calls and all(c.input_tokens is None and c.output_tokens is None for c in calls):
            return None  # LLM calls happened but none reported usage
        return (
            sum(c.input_tokens or 0 for c in calls),
            sum(c.output_tokens or 0 for c in calls),
        )
