"""Span attribute and event names: the ones the SDK writes and the converter reads, in one place.

OpenTelemetry names are taken from ``opentelemetry-semantic-conventions`` (installed with the OTel
SDK) where the installed version defines them. The GenAI names there are incubating and marked as
moving to their own package, so each falls back to its literal name when a version no longer (or
not yet) defines it: the wire names never change, only where the Python constants live.
OpenInference, OpenLLMetry (Traceloop) and tracereplay's own names are defined here.

Every name is a plain module-level string, looked up once at import: the converter's hot paths
read them as globals, no per-call lookup. ``tests/test_semconv.py`` checks every fallback against
the installed package.
"""

from __future__ import annotations

from types import ModuleType
from typing import Final

from opentelemetry.semconv.attributes import error_attributes, exception_attributes

try:  # incubating in opentelemetry-semantic-conventions; may move out of the package
    from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as _gen_ai
except ImportError:  # pragma: no cover - depends on the installed version
    _gen_ai = None


def _name(module: ModuleType | None, constant: str, fallback: str) -> str:
    """``module.constant`` when the installed semantic conventions define it, else ``fallback``."""
    value = getattr(module, constant, None)
    return value if isinstance(value, str) else fallback


# ------------------------------------------------------------------ OpenTelemetry (stable)
ERROR_TYPE: Final = _name(error_attributes, "ERROR_TYPE", "error.type")
EXCEPTION_TYPE: Final = _name(exception_attributes, "EXCEPTION_TYPE", "exception.type")
EXCEPTION_MESSAGE: Final = _name(exception_attributes, "EXCEPTION_MESSAGE", "exception.message")
EXCEPTION_STACKTRACE: Final = _name(
    exception_attributes, "EXCEPTION_STACKTRACE", "exception.stacktrace"
)
EXCEPTION_ESCAPED: Final = _name(exception_attributes, "EXCEPTION_ESCAPED", "exception.escaped")

# ------------------------------------------------------------------ OpenTelemetry GenAI
GEN_AI_OPERATION_NAME: Final = _name(_gen_ai, "GEN_AI_OPERATION_NAME", "gen_ai.operation.name")
GEN_AI_PROVIDER_NAME: Final = _name(_gen_ai, "GEN_AI_PROVIDER_NAME", "gen_ai.provider.name")
GEN_AI_SYSTEM: Final = _name(_gen_ai, "GEN_AI_SYSTEM", "gen_ai.system")  # before provider.name
GEN_AI_AGENT_NAME: Final = _name(_gen_ai, "GEN_AI_AGENT_NAME", "gen_ai.agent.name")
GEN_AI_AGENT_ID: Final = _name(_gen_ai, "GEN_AI_AGENT_ID", "gen_ai.agent.id")
GEN_AI_WORKFLOW_NAME: Final = _name(_gen_ai, "GEN_AI_WORKFLOW_NAME", "gen_ai.workflow.name")
GEN_AI_REQUEST_MODEL: Final = _name(_gen_ai, "GEN_AI_REQUEST_MODEL", "gen_ai.request.model")
GEN_AI_RESPONSE_MODEL: Final = _name(_gen_ai, "GEN_AI_RESPONSE_MODEL", "gen_ai.response.model")
GEN_AI_RESPONSE_ID: Final = _name(_gen_ai, "GEN_AI_RESPONSE_ID", "gen_ai.response.id")
GEN_AI_RESPONSE_FINISH_REASONS: Final = _name(
    _gen_ai, "GEN_AI_RESPONSE_FINISH_REASONS", "gen_ai.response.finish_reasons"
)
GEN_AI_USAGE_INPUT_TOKENS: Final = _name(
    _gen_ai, "GEN_AI_USAGE_INPUT_TOKENS", "gen_ai.usage.input_tokens"
)
GEN_AI_USAGE_OUTPUT_TOKENS: Final = _name(
    _gen_ai, "GEN_AI_USAGE_OUTPUT_TOKENS", "gen_ai.usage.output_tokens"
)
# the usage counts' names before semconv 1.27
GEN_AI_USAGE_PROMPT_TOKENS: Final = _name(
    _gen_ai, "GEN_AI_USAGE_PROMPT_TOKENS", "gen_ai.usage.prompt_tokens"
)
GEN_AI_USAGE_COMPLETION_TOKENS: Final = _name(
    _gen_ai, "GEN_AI_USAGE_COMPLETION_TOKENS", "gen_ai.usage.completion_tokens"
)
GEN_AI_INPUT_MESSAGES: Final = _name(_gen_ai, "GEN_AI_INPUT_MESSAGES", "gen_ai.input.messages")
GEN_AI_OUTPUT_MESSAGES: Final = _name(_gen_ai, "GEN_AI_OUTPUT_MESSAGES", "gen_ai.output.messages")
GEN_AI_SYSTEM_INSTRUCTIONS: Final = _name(
    _gen_ai, "GEN_AI_SYSTEM_INSTRUCTIONS", "gen_ai.system_instructions"
)
# the messages' names before semconv 1.37 (also OpenLLMetry's indexed prefix, below)
GEN_AI_PROMPT: Final = _name(_gen_ai, "GEN_AI_PROMPT", "gen_ai.prompt")
GEN_AI_COMPLETION: Final = _name(_gen_ai, "GEN_AI_COMPLETION", "gen_ai.completion")
GEN_AI_TOOL_DEFINITIONS: Final = _name(
    _gen_ai, "GEN_AI_TOOL_DEFINITIONS", "gen_ai.tool.definitions"
)
GEN_AI_TOOL_NAME: Final = _name(_gen_ai, "GEN_AI_TOOL_NAME", "gen_ai.tool.name")
GEN_AI_CONVERSATION_ID: Final = _name(_gen_ai, "GEN_AI_CONVERSATION_ID", "gen_ai.conversation.id")
GEN_AI_TOOL_TYPE: Final = _name(_gen_ai, "GEN_AI_TOOL_TYPE", "gen_ai.tool.type")
GEN_AI_TOOL_DESCRIPTION: Final = _name(
    _gen_ai, "GEN_AI_TOOL_DESCRIPTION", "gen_ai.tool.description"
)
GEN_AI_TOOL_CALL_ID: Final = _name(_gen_ai, "GEN_AI_TOOL_CALL_ID", "gen_ai.tool.call.id")
GEN_AI_TOOL_CALL_ARGUMENTS: Final = _name(
    _gen_ai, "GEN_AI_TOOL_CALL_ARGUMENTS", "gen_ai.tool.call.arguments"
)
GEN_AI_TOOL_CALL_RESULT: Final = _name(
    _gen_ai, "GEN_AI_TOOL_CALL_RESULT", "gen_ai.tool.call.result"
)
# not in the conventions: written by some instrumentations (strands: tool status; OpenLLMetry)
GEN_AI_TOOL_STATUS: Final = "gen_ai.tool.status"
TOOL_STATUS: Final = "tool.status"  # the same, by strands < 1.0
# the agent's system prompt on its agent span, by strands < 1.0 (its LLM spans record none)
AGENT_SYSTEM_PROMPT: Final = "system_prompt"
GEN_AI_USAGE_TOTAL_TOKENS: Final = "gen_ai.usage.total_tokens"
GEN_AI_AGENT_MAX_ROUNDS_EXCEEDED: Final = "gen_ai.agent.max_rounds_exceeded"

# gen_ai.operation.name values
OP_INVOKE_AGENT: Final = "invoke_agent"
OP_CHAT: Final = "chat"
OP_EXECUTE_TOOL: Final = "execute_tool"

# GenAI event names (span events and log records)
EVENT_INFERENCE_DETAILS: Final = "gen_ai.client.inference.operation.details"  # semconv 1.37+
EVENT_CONTENT_PROMPT: Final = "gen_ai.content.prompt"  # span events of semconv <= 1.27
EVENT_CONTENT_COMPLETION: Final = "gen_ai.content.completion"
EVENT_SYSTEM_MESSAGE: Final = "gen_ai.system.message"  # per-message events of semconv <= 1.36
EVENT_USER_MESSAGE: Final = "gen_ai.user.message"
EVENT_ASSISTANT_MESSAGE: Final = "gen_ai.assistant.message"
EVENT_TOOL_MESSAGE: Final = "gen_ai.tool.message"
EVENT_CHOICE: Final = "gen_ai.choice"
EVENT_PREFIX: Final = "gen_ai."
EVENT_NAME: Final = "event.name"  # the log record attribute older SDKs name the event with

# ------------------------------------------------------------------ OpenLLMetry (Traceloop)
TRACELOOP_SPAN_KIND: Final = "traceloop.span.kind"
TRACELOOP_WORKFLOW_NAME: Final = "traceloop.workflow.name"
TRACELOOP_ENTITY_NAME: Final = "traceloop.entity.name"
TRACELOOP_ENTITY_PATH: Final = "traceloop.entity.path"
TRACELOOP_ENTITY_INPUT: Final = "traceloop.entity.input"
TRACELOOP_ENTITY_OUTPUT: Final = "traceloop.entity.output"
LLM_REQUEST_TYPE: Final = "llm.request.type"
LLM_USAGE_TOTAL_TOKENS: Final = "llm.usage.total_tokens"
# the <= 0.54 indexed messages: gen_ai.prompt.N.*, gen_ai.completion.N.*
LEGACY_PROMPT_PREFIX: Final = GEN_AI_PROMPT + "."
LEGACY_COMPLETION_PREFIX: Final = GEN_AI_COMPLETION + "."
LEGACY_PROMPT_0_ROLE: Final = LEGACY_PROMPT_PREFIX + "0.role"
LEGACY_PROMPT_0_CONTENT: Final = LEGACY_PROMPT_PREFIX + "0.content"
LEGACY_COMPLETION_0_ROLE: Final = LEGACY_COMPLETION_PREFIX + "0.role"
LEGACY_COMPLETION_0_CONTENT: Final = LEGACY_COMPLETION_PREFIX + "0.content"

# ------------------------------------------------------------------ OpenInference (Arize)
OPENINFERENCE_SPAN_KIND: Final = "openinference.span.kind"
INPUT_VALUE: Final = "input.value"
OUTPUT_VALUE: Final = "output.value"
OUTPUT_MIME_TYPE: Final = "output.mime_type"
OPENINFERENCE_METADATA: Final = "metadata"
OPENINFERENCE_AGENT_NAME: Final = "agent.name"
#: the agent's node in a multi-agent graph: its name (CrewAI: the role; agno, AutoGen, OpenAI Agents)
OPENINFERENCE_GRAPH_NODE_ID: Final = "graph.node.id"
OPENINFERENCE_TOOL_NAME: Final = "tool.name"
OPENINFERENCE_TOOL_ID: Final = "tool.id"
OPENINFERENCE_TOOL_CALL_ID: Final = "tool_call.id"
LLM_MODEL_NAME: Final = "llm.model_name"
LLM_PROVIDER: Final = "llm.provider"
LLM_SYSTEM: Final = "llm.system"
LLM_TOKEN_COUNT_PROMPT: Final = "llm.token_count.prompt"
LLM_TOKEN_COUNT_COMPLETION: Final = "llm.token_count.completion"
LLM_FINISH_REASON: Final = "llm.finish_reason"
LLM_INPUT_MESSAGES_PREFIX: Final = "llm.input_messages."
LLM_OUTPUT_MESSAGES_PREFIX: Final = "llm.output_messages."
LLM_INPUT_MESSAGES_0_ROLE: Final = LLM_INPUT_MESSAGES_PREFIX + "0.message.role"
LLM_INPUT_MESSAGES_0_CONTENT: Final = LLM_INPUT_MESSAGES_PREFIX + "0.message.content"
LLM_OUTPUT_MESSAGES_0_ROLE: Final = LLM_OUTPUT_MESSAGES_PREFIX + "0.message.role"
LLM_OUTPUT_MESSAGES_0_CONTENT: Final = LLM_OUTPUT_MESSAGES_PREFIX + "0.message.content"

# ------------------------------------------------------------------ Logfire (Pydantic)
# every Logfire span: the message template (also the span's name) and the message it made
LOGFIRE_MSG_TEMPLATE: Final = "logfire.msg_template"
LOGFIRE_MSG: Final = "logfire.msg"
# Logfire's LLM spans: the request's and response's messages as GenAI <= 1.36 event dicts
# (``event.name`` inside each), one JSON list; the Responses API request input and response
LOGFIRE_EVENTS: Final = "events"
LOGFIRE_RESPONSE: Final = "response"
# the OpenAI Agents SDK's span data (``SpanData.export()``) spread as attributes by Logfire
AGENTS_SPAN_TYPE: Final = "type"
AGENTS_SDK_SPAN_TYPE: Final = "sdk_span_type"
AGENTS_NAME: Final = "name"
AGENTS_INPUT: Final = "input"
AGENTS_OUTPUT: Final = "output"
AGENTS_ERROR: Final = "error"
AGENTS_HANDOFFS: Final = "handoffs"
AGENTS_OUTPUT_TYPE: Final = "output_type"
AGENTS_MCP_DATA: Final = "mcp_data"
AGENTS_MODEL_CONFIG: Final = "model_config"
AGENTS_FROM_AGENT: Final = "from_agent"
AGENTS_TO_AGENT: Final = "to_agent"
AGENTS_TRACE_ID: Final = "agent_trace_id"

# ------------------------------------------------------------------ sessions (conversations)
# the conversation a run is a turn of, as other conventions name it (``convert/sessions.py``
# reads them in this order after gen_ai.conversation.id)
SESSION_ID: Final = "session.id"  # OpenInference, Langfuse, OTel's general session attribute
LANGFUSE_SESSION_ID: Final = "langfuse.session.id"  # Langfuse's SDK (v3)
# OpenLLMetry's association properties: its LangChain callback copies the run's metadata
# (LangGraph's thread_id: the config's ``configurable.thread_id``)
TRACELOOP_SESSION_ID: Final = "traceloop.association.properties.session_id"
TRACELOOP_THREAD_ID: Final = "traceloop.association.properties.thread_id"
TRACELOOP_CONVERSATION_ID: Final = "traceloop.association.properties.conversation_id"
# the Vercel AI SDK's telemetry metadata, as Langfuse's integration names a session
AI_SDK_SESSION_ID: Final = "ai.telemetry.metadata.sessionId"
LANGSMITH_SESSION_ID: Final = "langsmith.metadata.session_id"
LANGSMITH_THREAD_ID: Final = "langsmith.metadata.thread_id"
# the OpenAI Agents SDK's ``trace(group_id=...)`` ("links traces of one conversation"), as
# Logfire spreads the trace's data on its trace span
AGENTS_GROUP_ID: Final = "group_id"

# ------------------------------------------------------------------ tracereplay's own
# on the invoke_agent span
RUN_CONTEXT: Final = "tracereplay.run.context"  # JSON list of {"name", "content"}
RUN_PARAMETERS: Final = "tracereplay.run.parameters"  # JSON object
RUN_STATUS: Final = "tracereplay.run.status"  # "max_rounds_exceeded" when the agent marks it
RUN_KIND: Final = "tracereplay.run.kind"  # "replay" while evaluation replays a case
EVAL_RUN_ID: Final = "tracereplay.eval_run_id"
CASE_ID: Final = "tracereplay.case_id"
# on a chat span of a replay run: what answered the call ("recording", "live", "refused")
LLM_SOURCE: Final = "tracereplay.llm.source"
# on an execute_tool span whose result came from a tool interceptor (replay), not the tool
TOOL_REPLAYED: Final = "tracereplay.tool.replayed"
# "text": gen_ai.tool.call.result is the tool's str result as is; "json": any other value as JSON
TOOL_RESULT_ENCODING: Final = "tracereplay.tool.result_encoding"

STATUS_MAX_ROUNDS_EXCEEDED: Final = "max_rounds_exceeded"
RUN_KIND_REPLAY: Final = "replay"
