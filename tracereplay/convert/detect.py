"""Which convention wrote a span, and what role the span plays in an agent run.

Checked in order: ``openinference.span.kind``, ``traceloop.span.kind``, the Vercel AI SDK's
``ai.operationId``, the OpenAI Agents SDK
span data on a Logfire span, ``gen_ai.operation.name``,
then the legacy OpenLLMetry LLM markers (``llm.request.type``, indexed ``gen_ai.prompt.N.*``).
An OpenInference CHAIN that LangChain names as an agent (``lc_agent_name`` in its metadata) is
an agent; a GenAI ``invoke_*`` operation other than ``invoke_agent`` (``invoke_workflow``,
strands' ``invoke_swarm``...) is a workflow, and so are Microsoft Agent Framework's
``workflow.run`` (``_agent_framework_workflow_role``) and a ``send`` of AutoGen's agent runtime
(``is_runtime_send``: a team's run).
OpenLLMetry >= 0.55 LLM spans use the GenAI attributes and are parsed as GenAI, but keep the
``openllmetry`` label when a Traceloop marker is on them; Logfire's spans keep the ``logfire``
label (their roles are GenAI's, plus what ``convert/logfire.py`` reads).
"""

from __future__ import annotations

import re
from typing import Any

from tracereplay.convert.ai_sdk import (
    AI_SDK,
    FUNCTION_OPERATIONS,
    OPERATION_ID,
    REQUEST_OPERATIONS,
    TOOL_OPERATION,
)
from tracereplay.convert.logfire import (
    LOGFIRE,
    SDK_AGENT_TYPES,
    SDK_LLM_TYPES,
    SDK_TOOL_TYPES,
    SDK_WORKFLOW_TYPES,
    sdk_span_type,
)
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
    LOGFIRE_MSG_TEMPLATE,
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


#: the key of the agent or topic an AutoGen runtime span's ``messaging.destination`` names
#: (``<type>.(<key>)-A`` for an agent, ``-T`` for a topic)
_RUNTIME_KEY = re.compile(r"\.\(([^()]+)\)-[AT]$")


def runtime_key(span: Span) -> str:
    """The key of the agent or topic a span of AutoGen's agent runtime (instrumentation scope
    ``autogen <Runtime>``) delivers to, ``""`` for any other span. A team's runtime keys every
    agent and topic of one team by the team's id."""
    if not span.scope_name.startswith("autogen "):
        return ""
    destination = span.attributes.get("messaging.destination")
    if type(destination) is not str:
        return ""
    match = _RUNTIME_KEY.search(destination)
    return match.group(1) if match else ""


def is_runtime_send(span: Span) -> bool:
    """A ``send`` of AutoGen's agent runtime (span ``autogen send <destination>``): a request to
    one agent, answered when handled. A team's ``run`` is one send to its group chat manager,
    keyed by the team's id; the turns of the team's agents are delivered after it, from the
    runtime's own task (``tree.adopt_deliveries`` puts them under it)."""
    return span.name.startswith("autogen send ") and bool(runtime_key(span))


def _agent_framework_workflow_role(span: Span) -> int:
    """Microsoft Agent Framework traces a workflow's run as ``workflow.run`` with its
    ``workflow.id`` (and no GenAI operation), its executors' agents inside: a multi-agent
    invocation, so a workflow, whose first agent's run is the invocation's (see
    ``tree.fold_wrappers``)."""
    if span.name == "workflow.run" and "workflow.id" in span.attributes:
        return WORKFLOW
    return OTHER


def _logfire_role(span: Span) -> int:
    """A Logfire span's role from the OpenAI Agents SDK span data it carries (see
    ``convert/logfire.py``); OTHER when it carries none (its ``gen_ai.*`` attributes decide)."""
    kind = sdk_span_type(span.attributes)
    if kind in SDK_AGENT_TYPES:
        return AGENT
    if kind in SDK_TOOL_TYPES:
        return TOOL
    if kind in SDK_WORKFLOW_TYPES:
        return WORKFLOW
    if kind in SDK_LLM_TYPES:
        return LLM
    return OTHER


def _ai_sdk_role(operation: Any) -> int:
    """The role of a Vercel AI SDK span by its ``ai.operationId`` (``convert/ai_sdk.py``)."""
    if operation in FUNCTION_OPERATIONS:
        return AGENT
    if operation in REQUEST_OPERATIONS:
        return LLM
    return TOOL if operation == TOOL_OPERATION else OTHER


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
    if OPERATION_ID in a:
        role = _ai_sdk_role(a[OPERATION_ID])
        if role != OTHER:
            return role, AI_SDK
    logfire = LOGFIRE_MSG_TEMPLATE in a
    if logfire:
        role = _logfire_role(span)
        if role != OTHER:
            return role, LOGFIRE
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
        return role, LOGFIRE if logfire else GENAI
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
    if is_runtime_send(span) or _agent_framework_workflow_role(span) == WORKFLOW:
        return WORKFLOW, GENAI
    return OTHER, ""
