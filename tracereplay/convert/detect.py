"""Which convention wrote a span, and what role the span plays in an agent run.

Checked in order: ``openinference.span.kind``, ``traceloop.span.kind``, ``gen_ai.operation.name``,
then the legacy OpenLLMetry LLM markers (``llm.request.type``, indexed ``gen_ai.prompt.N.*``).
An OpenInference CHAIN that LangChain names as an agent (``lc_agent_name`` in its metadata) is
an agent; a GenAI ``invoke_*`` operation other than ``invoke_agent`` (``invoke_workflow``,
strands' ``invoke_swarm``...) is a workflow.
OpenLLMetry >= 0.55 LLM spans use the GenAI attributes and are parsed as GenAI, but keep the
``openllmetry`` label when a Traceloop marker is on them.
"""

from __future__ import annotations

from typing import Any

from tracereplay.convert.values import loads
from tracereplay.semconv import (
    GEN_AI_COMPLETION,
    GEN_AI_INPUT_MESSAGES,
    GEN_AI_OPERATION_NAME,
    GEN_AI_PROMPT,
    GEN_AI_REQUEST_MODEL,
    GEN_AI_SYSTEM,
    GEN_AI_USAGE_TOTAL_TOKENS,
    LEGACY_COMPLETION_0_CONTENT,
    LEGACY_COMPLETION_0_ROLE,
    LEGACY_PROMPT_0_CONTENT,
    LEGACY_PROMPT_0_ROLE,
    LLM_FINISH_REASON,
    LLM_OUTPUT_MESSAGES_0_ROLE,
    LLM_REQUEST_TYPE,
    LLM_TOKEN_COUNT_COMPLETION,
    LLM_TOKEN_COUNT_PROMPT,
    LLM_USAGE_TOTAL_TOKENS,
    OPENINFERENCE_METADATA,
    OPENINFERENCE_SPAN_KIND,
    OUTPUT_VALUE,
    TRACELOOP_ENTITY_PATH,
    TRACELOOP_SPAN_KIND,
    TRACELOOP_WORKFLOW_NAME,
)
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
_LEGACY_REQUEST_TYPES = {"chat": LLM, "completion": LLM}


def _role(table: dict[str, int], value: Any, upper: bool = False) -> int:
    if type(value) is not str:
        return OTHER
    role = table.get(value)
    if role is None:
        value = value.strip()
        role = table.get(value.upper() if upper else value.lower(), OTHER)
    return role


def _langchain_role(span: Span, role: int) -> int:
    """An OpenInference chain or agent span of LangChain/LangGraph, by its run metadata:

    - LangChain names an agent in ``lc_agent_name``, which every step inside inherits; the
      agent itself is the run that bears the name (an agent, whatever its span kind);
    - a LangGraph node's run bears its node name (``langgraph_node``): a graph step, even when
      the kind says AGENT because the node is called "agent".
    """
    metadata = span.attributes.get(OPENINFERENCE_METADATA)
    if type(metadata) is not str or (
        "lc_agent_name" not in metadata and "langgraph_node" not in metadata
    ):
        return role
    value = loads(metadata)
    if not isinstance(value, dict):
        return role
    if value.get("lc_agent_name") == span.name:
        return AGENT
    if role == AGENT and value.get("langgraph_node") == span.name:
        return WORKFLOW
    return role


def is_request_helper(span: Span) -> bool:
    """Whether an OpenInference LLM span is a helper that prepares a request, not a provider
    call: LlamaIndex traces ``OpenAI._prepare_chat_with_tools`` as an LLM span beside each real
    ``OpenAI.astream_chat``. Such a span succeeded and recorded nothing a call returns (no
    output messages, token counts or finish reason), and its output is the request it built
    (a JSON object with ``messages``)."""
    a = span.attributes
    if span.status_code == 2 or LLM_OUTPUT_MESSAGES_0_ROLE in a or LLM_FINISH_REASON in a:
        return False
    if LLM_TOKEN_COUNT_PROMPT in a or LLM_TOKEN_COUNT_COMPLETION in a:
        return False
    output = a.get(OUTPUT_VALUE)
    if type(output) is not str or not output.startswith("{"):
        return False
    value = loads(output)
    return isinstance(value, dict) and isinstance(value.get("messages"), list)


def detect(span: Span) -> tuple[int, str]:
    """``(role, convention)`` of ``span``: role is OTHER/AGENT/WORKFLOW/LLM/TOOL, convention is
    ``"genai"``, ``"openinference"``, ``"openllmetry"`` or ``""`` when no convention applies."""
    a = span.attributes
    kind = a.get(OPENINFERENCE_SPAN_KIND)
    if kind is not None:
        role = _role(_OPENINFERENCE_ROLES, kind, upper=True)
        if role in (WORKFLOW, AGENT):
            role = _langchain_role(span, role)
        elif role == LLM and is_request_helper(span):
            role = OTHER
        return role, OPENINFERENCE
    kind = a.get(TRACELOOP_SPAN_KIND)
    if kind is not None:
        return _role(_TRACELOOP_ROLES, kind), OPENLLMETRY
    op = a.get(GEN_AI_OPERATION_NAME)
    if op is not None:
        role = _role(_GENAI_ROLES, op)
        if role == OTHER and type(op) is str and op.startswith("invoke_"):
            role = WORKFLOW  # invoke_swarm, invoke_graph...: a multi-agent invocation
        if role == LLM and (
            LLM_REQUEST_TYPE in a  # OpenLLMetry >= 0.55 writes GenAI attributes, plus these
            or TRACELOOP_WORKFLOW_NAME in a
            or TRACELOOP_ENTITY_PATH in a
            or LLM_USAGE_TOTAL_TOKENS in a
            or GEN_AI_USAGE_TOTAL_TOKENS in a
        ):
            return LLM, OPENLLMETRY
        return role, GENAI
    request_type = a.get(LLM_REQUEST_TYPE)
    if request_type is not None:
        return (LLM if _role(_LEGACY_REQUEST_TYPES, request_type) else OTHER), OPENLLMETRY
    if (
        LEGACY_PROMPT_0_ROLE in a
        or LEGACY_PROMPT_0_CONTENT in a
        or LEGACY_COMPLETION_0_ROLE in a
        or LEGACY_COMPLETION_0_CONTENT in a
    ):
        return LLM, OPENLLMETRY
    if GEN_AI_REQUEST_MODEL in a and (  # GenAI before gen_ai.operation.name (semconv <= 1.26)
        GEN_AI_SYSTEM in a
        or GEN_AI_PROMPT in a
        or GEN_AI_COMPLETION in a
        or GEN_AI_INPUT_MESSAGES in a
    ):
        return LLM, GENAI
    return OTHER, ""
