"""Tolerant readers for attribute values: whatever type arrives, they return a usable value.

Span attributes come from instrumentation libraries we do not control: a JSON document may be a
string or already structured, a token count may be a string, any value may be garbage. Nothing
here raises on bad input.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import orjson

_MISSING = object()


def loads(value: Any, default: Any = None) -> Any:
    """``value`` JSON-decoded when it is a JSON string (or bytes); ``default`` when it is not."""
    if isinstance(value, (str, bytes)):
        try:
            return orjson.loads(value)
        except (orjson.JSONDecodeError, TypeError):
            return default
    return default


def decoded(value: Any) -> Any:
    """A JSON string decoded, any other value (or a string that is not JSON) unchanged."""
    if isinstance(value, str) and value:
        head = value[0]
        if head in " \t\r\n":
            head = value.lstrip()[:1]
        if head in ("{", "[", '"') or value in ("true", "false", "null"):
            out = loads(value, _MISSING)
            if out is not _MISSING:
                return out
    return value


def dumps(value: Any) -> str:
    """Compact JSON text of ``value`` (never raises; unknown types become strings)."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        try:
            return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)
        except (TypeError, ValueError):
            return str(value)


def as_text(value: Any) -> str:
    """A string as is; ``None`` as ``""``; anything else as compact JSON."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return dumps(value)


def as_name(value: Any) -> str:
    """A short identifier-like string (name, id, model): strings and numbers only."""
    cls = value.__class__
    if cls is str:  # the usual cases first, without isinstance: a few calls per span
        return value  # type: ignore[no-any-return]
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return ""


def as_int(value: Any) -> int | None:
    """An integer from an int, an integral float or a numeric string; ``None`` otherwise."""
    cls = value.__class__
    if cls is int:  # the usual cases first, without isinstance
        return value  # type: ignore[no-any-return]
    if value is None:
        return None
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if value == value and abs(value) < 2**63 else None
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            return None
    return None


def is_true(value: Any) -> bool:
    """True for ``True`` and for the strings ``"true"``/``"1"``/``"yes"`` (any case)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return value.strip().lower() in ("true", "1", "yes")
    return False


def first_name(value: Any) -> str:
    """The first string of a list (``["stop"]`` -> ``"stop"``; also sent as JSON text, as
    Logfire sends lists), or the string itself."""
    if type(value) is str and value[:1] == "[":
        value = decoded(value)
    if isinstance(value, (list, tuple)):
        for item in value:
            name = as_name(item)
            if name:
                return name
        return ""
    return as_name(value)


def arguments_dict(value: Any) -> dict[str, Any]:
    """Tool arguments as a dict: JSON strings decoded; any other value becomes ``{"input": v}``."""
    value = decoded(value)
    if isinstance(value, dict):
        return value
    if value is None or value == "":
        return {}
    return {"input": value}


def utc(ns: int) -> datetime | None:
    """A UTC datetime from integer nanoseconds since the epoch (``None`` when out of range)."""
    try:
        return datetime.fromtimestamp(ns / 1e9, tz=UTC)
    except (OverflowError, OSError, ValueError, TypeError):
        return None
