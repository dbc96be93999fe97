"""Forms every framework's payloads share: a tool's output as the tool returned it
(``ToolOutput``), and content-block lists (``[{"text": ...}, {"json": ...}]``: Converse,
LlamaIndex's blocks, MCP content)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tracereplay.convert.values import as_text, decoded


@dataclass(slots=True)
class ToolOutput:
    """A tool's output as the tool returned it: its text, the call id and whether it failed,
    when the framework's wrapper says so."""

    text: str
    call_id: str = ""
    error: bool = False


def blocks_text(value: Any) -> str:
    """The text of a content-block list (``[{"text": ...}, {"json": ...}]``) joined, or the
    value as text when it is not one."""
    value = decoded(value)
    if isinstance(value, list) and value and all(isinstance(b, dict) for b in value):
        texts = []
        for block in value:
            if "text" in block:
                texts.append(as_text(block["text"]))
            elif "json" in block:
                texts.append(as_text(block["json"]))
            elif "content" in block:
                texts.append(as_text(block["content"]))
        return "".join(texts)
    return as_text(value)


def is_block_list(value: Any) -> bool:
    """A list of content blocks with text and no roles (a Converse message's content)."""
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(b, dict) and "role" not in b for b in value)
        and any("text" in b for b in value)
    )
