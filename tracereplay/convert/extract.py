"""Pick the convention reader for a span: one entry point per span role."""

from __future__ import annotations

from collections.abc import Sequence

from tracereplay.convert import ai_sdk, genai, logfire, openinference, openllmetry
from tracereplay.convert.detect import AI_SDK, GENAI, LOGFIRE, OPENINFERENCE, OPENLLMETRY
from tracereplay.convert.info import AgentInfo, LlmInfo, ToolInfo
from tracereplay.convert.values import as_name
from tracereplay.semconv import (
    GEN_AI_AGENT_NAME,
    GEN_AI_INPUT_MESSAGES,
    GEN_AI_OUTPUT_MESSAGES,
    INPUT_VALUE,
    LLM_SOURCE,
    OPENINFERENCE_AGENT_NAME,
    OUTPUT_VALUE,
    TRACELOOP_ENTITY_INPUT,
    TRACELOOP_ENTITY_NAME,
    TRACELOOP_ENTITY_OUTPUT,
)
from tracereplay.spans import LogRecord, Span


def llm_info(span: Span, convention: str, logs: Sequence[LogRecord] = ()) -> LlmInfo:
    """The LLM call recorded by ``span``."""
    if convention == OPENINFERENCE:
        info = openinference.llm_info(span)
    elif convention == AI_SDK:
        info = ai_sdk.llm_info(span)
    else:
        info = openllmetry.llm_info(span, logs)  # GenAI form first, then the indexed form
        if convention == LOGFIRE:
            info = logfire.fill_llm_info(span, info)
    source = span.attributes.get(LLM_SOURCE)
    if source is not None:  # a replay's own span of the call (``replay.llm.noted_calls``), or
        info.source = as_name(source)  # an agent command's, marked (``replay.command.trace``)
    return info


def tool_info(span: Span, convention: str) -> ToolInfo:
    """The tool call recorded by ``span``."""
    if convention == OPENINFERENCE:
        return openinference.tool_info(span)
    if convention == OPENLLMETRY:
        return openllmetry.tool_info(span)
    if convention == AI_SDK:
        return ai_sdk.tool_info(span)
    if convention == LOGFIRE and logfire.sdk_span_type(span.attributes):
        return logfire.tool_info(span)
    return genai.tool_info(span)


def agent_info(span: Span, convention: str) -> AgentInfo:
    """The agent (or workflow, or plain top span) heading a run."""
    a = span.attributes
    if convention == GENAI:
        return genai.agent_info(span)
    if convention == LOGFIRE:
        if logfire.sdk_span_type(a):
            return logfire.agent_info(span)
        info = genai.agent_info(span)
        info.name = logfire.display_name(span) if info.name == span.name else info.name
        return info
    if convention == OPENINFERENCE:
        return openinference.agent_info(span)
    if convention == OPENLLMETRY:
        return openllmetry.agent_info(span)
    if convention == AI_SDK:
        return ai_sdk.agent_info(span)
    # a span of no convention (an HTTP handler...): use whatever input/output it carries
    if GEN_AI_INPUT_MESSAGES in a or GEN_AI_OUTPUT_MESSAGES in a:
        info = genai.agent_info(span)
    elif INPUT_VALUE in a or OUTPUT_VALUE in a:
        info = openinference.agent_info(span)
    elif TRACELOOP_ENTITY_INPUT in a or TRACELOOP_ENTITY_OUTPUT in a:
        info = openllmetry.agent_info(span)
    else:
        info = AgentInfo()
    info.name = (
        as_name(a.get(GEN_AI_AGENT_NAME))
        or as_name(a.get(OPENINFERENCE_AGENT_NAME))
        or as_name(a.get(TRACELOOP_ENTITY_NAME))
        or logfire.display_name(span)
    )
    return info
