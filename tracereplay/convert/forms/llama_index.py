"""LlamaIndex's payload forms: its ``ToolOutput`` dumped as a tool's result, the agent a
workflow step ran for (only in the repr of the step's event), a ReAct agent's answer in its
last model turn, and the workflow context it injects into a handoff tool's arguments."""

from __future__ import annotations

import re
from typing import Any

from tracereplay.convert.forms.base import ToolOutput, blocks_text
from tracereplay.convert.values import as_text


def framework_tool_output(value: Any) -> ToolOutput | None:
    """A framework's tool-result object dumped as JSON, as LlamaIndex's ``ToolOutput``
    (``{"blocks": [...], "tool_name", "raw_input", "raw_output", "is_error"}``, older versions
    ``content``): the text the model got (the blocks' text, else ``content``, else the raw
    output), failed when ``is_error``; else ``None``."""
    if not isinstance(value, dict) or "tool_name" not in value or "is_error" not in value:
        return None
    if not set(value) & {"blocks", "content", "raw_output"}:
        return None
    text = blocks_text(value["blocks"]) if isinstance(value.get("blocks"), list) else ""
    if not text:
        content = value.get("content")
        raw = value.get("raw_output")
        text = as_text(content) if content else ("" if raw is None else as_text(raw))
    return ToolOutput(text, error=value.get("is_error") is True)


_OBJECT_AT = re.compile(r"<[\w.]+ object at 0x[0-9a-fA-F]+>")


def without_injected(arguments: dict[str, Any]) -> dict[str, Any]:
    """The arguments less those the framework injected into the call, recorded as a Python
    object's default repr (LlamaIndex's handoff tool gets ``ctx`` =
    ``"<workflows.context.context.Context object at 0x7f...>"``): the model never sent them."""
    if not any(type(v) is str and v[:1] == "<" for v in arguments.values()):
        return arguments
    return {k: v for k, v in arguments.items() if not (type(v) is str and _OBJECT_AT.fullmatch(v))}


_STEP_AGENT = re.compile(r"\bcurrent_agent_name='([^'\\]+)'")


def step_agent_name(value: Any) -> str | None:
    """The agent a workflow step ran for, as LlamaIndex's agent workflows record it only in
    the repr of the step's event (``AgentInput(..., current_agent_name='weather_agent')``);
    else ``None``."""
    if type(value) is not str or "current_agent_name=" not in value:
        return None
    found = _STEP_AGENT.search(value)
    return found.group(1) if found else None


_REACT_ANSWER = re.compile(r"(?:^|\n)Thought:.*?\nAnswer:\s*(.*)\Z", re.DOTALL)


def react_answer(text: str) -> str:
    """The answer of a ReAct model's last turn (``Thought: ...\nAnswer: <answer>``, as
    LlamaIndex's ``ReActAgent`` prompts for it); other text as it is."""
    if "Answer:" not in text:
        return text
    found = _REACT_ANSWER.search(text)
    return found.group(1).strip() if found else text
