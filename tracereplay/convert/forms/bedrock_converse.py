"""Bedrock Converse content blocks (strands, Bedrock's own clients): ``{"text": ...}``,
``{"toolUse": {"toolUseId", "name", "input"}}``, ``{"toolResult": {"toolUseId", "status",
"content": [blocks]}}``."""

from __future__ import annotations

from typing import Any

from tracereplay.convert.forms.base import ToolOutput, blocks_text
from tracereplay.convert.values import as_name, decoded


def converse_part(block: dict[str, Any]) -> dict[str, Any] | None:
    """A Converse ``toolUse`` / ``toolResult`` content block as a GenAI part, else ``None``."""
    use = block.get("toolUse")
    if isinstance(use, dict):
        return {
            "type": "tool_call",
            "id": as_name(use.get("toolUseId")),
            "name": as_name(use.get("name")),
            "arguments": decoded(use.get("input")),
        }
    result = block.get("toolResult")
    if isinstance(result, dict):
        part = {
            "type": "tool_call_response",
            "id": as_name(result.get("toolUseId")),
            "response": blocks_text(result.get("content")),
        }
        if result.get("status") == "error":
            part["status"] = "error"
        return part
    return None


def tool_result_block(value: Any) -> ToolOutput | None:
    """A tool's output recorded as a one-block list holding a ``toolResult``."""
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], dict):
        part = converse_part(value[0])
        if part is not None and part["type"] == "tool_call_response":
            return ToolOutput(part["response"], part["id"], part.get("status") == "error")
    return None
