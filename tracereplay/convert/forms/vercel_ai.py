"""The Vercel AI SDK's payload form: a tool result's typed output (``{"type": "text",
"value": ...}``, ``json``, ``content``; ``error-text`` / ``error-json`` when the tool
failed)."""

from __future__ import annotations

from typing import Any

from tracereplay.convert.forms.base import ToolOutput, blocks_text
from tracereplay.convert.values import as_text

_TYPED_OUTPUTS = frozenset(("text", "json", "content", "error-text", "error-json"))


def typed_output(value: Any) -> ToolOutput | None:
    """A tool's output as the AI SDK types it, else ``None``."""
    if (
        isinstance(value, dict)
        and "value" in value
        and value.get("type") in _TYPED_OUTPUTS
        and len(value) <= 3
    ):
        inner = value["value"]
        text = blocks_text(inner) if isinstance(inner, list) else as_text(inner)
        return ToolOutput(text, error=str(value["type"]).startswith("error"))
    return None
