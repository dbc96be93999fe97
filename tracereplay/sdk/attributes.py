"""Span attribute names the SDK writes: OpenTelemetry GenAI semantic conventions plus tracereplay's.

The converter (``tracereplay.convert``) reads the same names; keep them in this one place.
"""

from __future__ import annotations

# OpenTelemetry GenAI semantic conventions (v1.37+ / semantic-conventions-genai)
OPERATION_NAME = "gen_ai.operation.name"
PROVIDER_NAME = "gen_ai.provider.name"
AGENT_NAME = "gen_ai.agent.name"
CONVERSATION_ID = "gen_ai.conversation.id"
REQUEST_MODEL = "gen_ai.request.model"
RESPONSE_MODEL = "gen_ai.response.model"
RESPONSE_ID = "gen_ai.response.id"
RESPONSE_FINISH_REASONS = "gen_ai.response.finish_reasons"
USAGE_INPUT_TOKENS = "gen_ai.usage.input_tokens"
USAGE_OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
SYSTEM_INSTRUCTIONS = "gen_ai.system_instructions"
TOOL_DEFINITIONS = "gen_ai.tool.definitions"
TOOL_NAME = "gen_ai.tool.name"
TOOL_TYPE = "gen_ai.tool.type"
TOOL_DESCRIPTION = "gen_ai.tool.description"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_CALL_ARGUMENTS = "gen_ai.tool.call.arguments"
TOOL_CALL_RESULT = "gen_ai.tool.call.result"
ERROR_TYPE = "error.type"

OP_INVOKE_AGENT = "invoke_agent"
OP_CHAT = "chat"
OP_EXECUTE_TOOL = "execute_tool"

# tracereplay's own attributes, on the invoke_agent span
RUN_CONTEXT = "tracereplay.run.context"  # JSON list of {"name", "content"}
RUN_PARAMETERS = "tracereplay.run.parameters"  # JSON object
RUN_STATUS = "tracereplay.run.status"  # "max_rounds_exceeded" when the agent marks it
RUN_KIND = "tracereplay.run.kind"  # "replay" while evaluation replays a case
EVAL_RUN_ID = "tracereplay.eval_run_id"
CASE_ID = "tracereplay.case_id"
# on an execute_tool span whose result came from a tool interceptor (replay), not the tool
TOOL_REPLAYED = "tracereplay.tool.replayed"
# "text": gen_ai.tool.call.result is the tool's str result as is; "json": any other value as JSON
TOOL_RESULT_ENCODING = "tracereplay.tool.result_encoding"

STATUS_MAX_ROUNDS_EXCEEDED = "max_rounds_exceeded"
