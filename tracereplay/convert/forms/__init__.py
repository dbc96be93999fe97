"""The message and payload forms agent frameworks write into span attributes and events, one
module per framework that owns them (``langchain``, ``llama_index``, ``bedrock_converse``,
``smolagents``, ``google_adk``, ``vercel_ai``; each replay adapter names its own in
``FrameworkAgent.conversion_forms``), the forms every framework shares (``base``) and the
readers that try each framework's (``generic``). Everything here turns such a value into the
plain forms the rest of the converter reads (OpenAI chat messages, GenAI parts, text), and
returns ``None`` for a value it does not recognise.

A new framework's forms are one module here, tried where ``generic`` reads that kind of value.
"""

from tracereplay.convert.forms.base import ToolOutput, blocks_text, is_block_list
from tracereplay.convert.forms.bedrock_converse import converse_part
from tracereplay.convert.forms.generic import (
    call_envelope,
    is_object_repr,
    method_span_name,
    parameter_names,
    tool_arguments,
    tool_output,
    tool_result,
)
from tracereplay.convert.forms.langchain import langchain_message
from tracereplay.convert.forms.llama_index import (
    framework_tool_output,
    react_answer,
    step_agent_name,
    without_injected,
)
from tracereplay.convert.forms.smolagents import (
    ANSWER_TOOLS,
    is_answer_tool,
    repr_finish_reason,
)

#: the forms module of each framework: what ``FrameworkAgent.conversion_forms`` names
FRAMEWORK_FORMS = (
    "bedrock_converse",
    "google_adk",
    "langchain",
    "llama_index",
    "smolagents",
    "vercel_ai",
)

__all__ = [
    "ANSWER_TOOLS",
    "FRAMEWORK_FORMS",
    "ToolOutput",
    "blocks_text",
    "call_envelope",
    "converse_part",
    "framework_tool_output",
    "is_answer_tool",
    "is_block_list",
    "is_object_repr",
    "langchain_message",
    "method_span_name",
    "parameter_names",
    "react_answer",
    "repr_finish_reason",
    "step_agent_name",
    "tool_arguments",
    "tool_output",
    "tool_result",
    "without_injected",
]
