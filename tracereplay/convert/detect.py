"""Which convention wrote a span, and what role the span plays in an agent run.

Checked in order: ``openinference.span.kind``, ``traceloop.span.kind``, ``gen_ai.operation.name``,
then the legacy OpenLLMetry LLM markers (``llm.request.type``, indexed ``gen_ai.prompt.N.*``).
OpenLLMetry >= 0.55 LLM spans use the GenAI attributes and are parsed as GenAI, but keep the
``openllmetry`` label when a Traceloop marker is on them.
"""

from __future__ import annotations

from typing import Any

from tracereplay.spans import Span

# span roles
OTHER = 0
AGENT = 1
WORKFLOW = 2
LLM = 3
TOOL = 4

GENAI = "genai"
OPENINFERENCE = "openinference"
OPENLLMETRY = "openllmetry"

_OPENINFERENCE_ROLES = {"AGENT": AGENT, "CHAIN": WORKFLOW, "LLM": LLM, "TOOL": TOOL}
_TRACELOOP_ROLES = {"agent": AGENT, "workflow": WORKFLOW, "tool": TOOL}
_GENAI_ROLES = {
    "chat": LLM,
    "text_completion": LLM,
    "generate_content": LLM,
    "completion": LLM,
    "execute_tool": TOOL,
    "invoke_agent": AGENT,
    "invoke_workflow": WORKFLOW,
}
_TRACELOOP_MARKERS = (
    "llm.request.type",
    "traceloop.workflow.name",
    "traceloop.entity.path",
    "llm.usage.total_tokens",
    "gen_ai.usage.total_tokens",
)
_LEGACY_LLM_KEYS = (
    "gen_ai.prompt.0.role",
    "gen_ai.prompt.0.content",
    "gen_ai.completion.0.role",
    "gen_ai.completion.0.content",
)
# GenAI LLM spans from before ``gen_ai.operation.name`` existed (semconv <= 1.26)
_GENAI_LLM_KEYS = ("gen_ai.system", "gen_ai.prompt", "gen_ai.completion", "gen_ai.input.messages")


def _lower(value: Any) -> str:
    return value.strip().lower() if isinstance(value, str) else ""


def detect(span: Span) -> tuple[int, str]:
    """``(role, convention)`` of ``span``: role is OTHER/AGENT/WORKFLOW/LLM/TOOL, convention is
    ``"genai"``, ``"openinference"``, ``"openllmetry"`` or ``""`` when no convention applies."""
    attrs = span.attributes
    kind = attrs.get("openinference.span.kind")
    if kind is not None:
        return _OPENINFERENCE_ROLES.get(_lower(kind).upper(), OTHER), OPENINFERENCE
    kind = attrs.get("traceloop.span.kind")
    if kind is not None:
        return _TRACELOOP_ROLES.get(_lower(kind), OTHER), OPENLLMETRY
    op = attrs.get("gen_ai.operation.name")
    if op is not None:
        role = _GENAI_ROLES.get(_lower(op), OTHER)
        if role == LLM and any(k in attrs for k in _TRACELOOP_MARKERS):
            return LLM, OPENLLMETRY
        return role, GENAI
    request_type = attrs.get("llm.request.type")
    if request_type is not None:
        return (LLM if _lower(request_type) in ("chat", "completion") else OTHER), OPENLLMETRY
    if any(k in attrs for k in _LEGACY_LLM_KEYS):
        return LLM, OPENLLMETRY
    if "gen_ai.request.model" in attrs and any(k in attrs for k in _GENAI_LLM_KEYS):
        return LLM, GENAI
    return OTHER, ""
