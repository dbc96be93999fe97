"""What an agent run is: its tool calls, LLM calls and result (the ffai vocabulary)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field

from tracereplay.models.fast import build

RunStatus = Literal["success", "failed", "max_rounds_exceeded"]
RUN_STATUSES: tuple[str, ...] = ("success", "failed", "max_rounds_exceeded")


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its class and field values, unpickled by ``fast.build`` (the values are
        valid already): pydantic's own ``__getstate__``/``__setstate__`` made passing a replay
        case's result between processes cost about as much as scoring it."""
        return (build, (type(self), self.__dict__))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict; ``from_dict`` reads it back unchanged."""
        return self.model_dump(mode="json")

    @classmethod
    def from_dict(cls, data: dict[str, Any]):
        """Validate and build from ``to_dict`` output (or any dict of the same shape)."""
        return cls.model_validate(data)

    def to_json(self) -> bytes:
        return orjson.dumps(self.to_dict())


class ToolCallRecord(_Record):
    """Record of a single tool call within an agentic loop."""

    round: int = Field(description="1-based index of the LLM call whose output asked for the tool")
    tool_name: str
    tool_call_id: str = ""
    arguments: dict[str, Any] = Field(default_factory=dict)
    result: str = ""
    duration_ms: float = 0.0
    error: str | None = None


class AgentResult(_Record):
    """Result of an agentic execution loop."""

    response: str = ""
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    total_rounds: int = 0
    total_llm_calls: int = 0
    status: RunStatus = "success"

    @property
    def tool_calls_count(self) -> int:
        """Total number of tool calls made."""
        return len(self.tool_calls)

    @property
    def last_tool_name(self) -> str:
        """Name of the last tool called, or empty string if no tools used."""
        return self.tool_calls[-1].tool_name if self.tool_calls else ""

    @property
    def failed_tool_calls(self) -> list[ToolCallRecord]:
        """Tool calls that resulted in errors."""
        return [tc for tc in self.tool_calls if tc.error is not None]


class Document(_Record):
    """One context document given to an agent (``name`` plus its text)."""

    name: str = "context"
    content: str = ""


class LlmCall(_Record):
    """One LLM call of a run (counted once even when two instrumentations wrap it).

    Messages are normalized to the GenAI shape: ``[{"role", "parts": [{"type", ...}]}]``.
    """

    round: int
    span_id: str = ""
    model: str = ""
    provider: str = ""
    input_tokens: int | None = None
    output_tokens: int | None = None
    duration_ms: float = 0.0
    finish_reason: str = ""
    started_at: datetime | None = None
    input_messages: list[dict[str, Any]] = Field(default_factory=list)
    output_messages: list[dict[str, Any]] = Field(default_factory=list)
    #: what answered a replay's call: "recording", "live" (a model) or "refused" (nothing
    #: recorded matched); None in a production run
    source: str | None = None


RunKind = Literal["live", "replay", "imported"]  # imported: `suite import` of ffai results


class Run(_Record):
    """A stored agent run: its ``AgentResult`` plus where it came from and what it cost."""

    run_id: str
    trace_id: str
    root_span_id: str
    parent_run_id: str | None = None
    agent_name: str = ""
    service_name: str = ""
    kind: RunKind = "live"
    convention: str = ""
    query: str = ""
    context: list[Document] = Field(default_factory=list)
    parameters: dict[str, Any] = Field(default_factory=dict)
    models: list[str] = Field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0
    started_at: datetime | None = None
    duration_ms: float = 0.0
    error: str | None = None
    eval_run_id: str | None = None
    case_id: str | None = None
    #: the conversation the run is a turn of (``convert/sessions.py``: the telemetry's
    #: ``gen_ai.conversation.id``, ``session.id``...); None when it names none
    session_id: str | None = None
    result: AgentResult = Field(default_factory=AgentResult)
    llm_calls: list[LlmCall] = Field(default_factory=list)

    @property
    def status(self) -> str:
        return self.result.status
