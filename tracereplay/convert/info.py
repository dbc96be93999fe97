"""What the per-convention readers extract from one span, before runs are assembled."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class LlmInfo:
    """One LLM span's call: model, usage and messages in the GenAI shape."""

    model: str = ""
    provider: str = ""
    input_tokens: int | None = None
    output_tokens: int | None = None
    finish_reason: str = ""
    input_messages: list[dict[str, Any]] = field(default_factory=list)
    output_messages: list[dict[str, Any]] = field(default_factory=list)
    source: str = ""  # a replay's call: what answered it (``tracereplay.llm.source``)

    def fill_from(self, other: LlmInfo) -> None:
        """Take ``other``'s value for every field this one lacks (same call, inner span)."""
        if not self.model:
            self.model = other.model
        if not self.provider:
            self.provider = other.provider
        if self.input_tokens is None:
            self.input_tokens = other.input_tokens
        if self.output_tokens is None:
            self.output_tokens = other.output_tokens
        if not self.finish_reason:
            self.finish_reason = other.finish_reason
        if not self.input_messages:
            self.input_messages = other.input_messages
        if not self.output_messages:
            self.output_messages = other.output_messages
        if not self.source:
            self.source = other.source


@dataclass(slots=True)
class ToolInfo:
    """One tool span's call. ``None`` means "not recorded" (content capture off), so the value
    can be taken from the matching ``tool_call`` part of the LLM messages instead."""

    name: str = ""
    call_id: str = ""
    arguments: dict[str, Any] | None = None
    result: str | None = None
    #: the tool's failure as its output reports it (a ``ToolMessage`` with status error, a
    #: ``{"error": ...}`` result), for spans whose status does not say why
    error: str | None = None
    #: arguments to use when no LLM request gives them (the span's input was not an object)
    fallback_arguments: dict[str, Any] | None = None


@dataclass(slots=True)
class AgentInfo:
    """An agent (or workflow / top) span: its name, question, answer and token totals.

    ``query`` / ``response`` hold text told apart from the span's input / output; ``raw_input`` /
    ``raw_output`` the whole payload as text, used only when the LLM messages give nothing either.
    """

    name: str = ""
    query: str | None = None
    response: str | None = None
    raw_input: str | None = None
    raw_output: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
