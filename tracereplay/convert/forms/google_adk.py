"""Google ADK's payload form: a Gemini function response object (``{"id", "name",
"response": {"result": ...}}``) as a tool's recorded output."""

from __future__ import annotations

from typing import Any

_FUNCTION_RESPONSE_KEYS = frozenset(("id", "name", "response", "will_continue", "scheduling"))


def function_response(value: Any) -> Any | None:
    """What a Gemini function response object wraps (its ``response``), else ``None``."""
    if isinstance(value, dict) and "response" in value and set(value) <= _FUNCTION_RESPONSE_KEYS:
        return value["response"]
    return None
