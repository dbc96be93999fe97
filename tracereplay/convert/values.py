"""Tolerant readers for attribute values: whatever type arrives, they return a usable value.

Span attributes come from instrumentation libraries we do not control: a JSON document may be a
string or already structured, a token count may be a string, any value may be garbage. Nothing
here raises on bad input.
"""

from __future__ import annotations

import ast
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


class _NotLiteral(Exception):
    pass


def _literal(node: ast.AST) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [_literal(e) for e in node.elts]
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            raise _NotLiteral
        return {_literal(k): _literal(v) for k, v in zip(node.keys, node.values, strict=True)}  # type: ignore[arg-type]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _literal(node.operand)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return -value if isinstance(node.op, ast.USub) else value
    raise _NotLiteral


def python_literal(text: str, default: Any = None) -> Any:
    """A Python literal's value (``"{'city': 'Paris'}"``, what an instrumentation writes when it
    ``str()``s a dict), read from its syntax tree (never evaluated; not ``ast.literal_eval``,
    whose nested functions leave a reference cycle per call); ``default`` when ``text`` is
    none. Lists, tuples and sets all read as lists; a dict key must be hashable."""
    if len(text) > 1 << 20:
        return default
    try:
        return _literal(ast.parse(text.strip(), mode="eval").body)
    except (_NotLiteral, SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
        return default


def arguments_dict(value: Any) -> dict[str, Any]:
    """Tool arguments as a dict: JSON strings decoded, else a Python dict's repr read
    (``python_literal``); any other value becomes ``{"input": v}``."""
    value = decoded(value)
    if isinstance(value, dict):
        return value
    if type(value) is str and value[:1] == "{" and value[-1:] == "}":
        literal = python_literal(value)
        if isinstance(literal, dict):
            return literal
    if value is None or value == "":
        return {}
    return {"input": value}


def utc(ns: int) -> datetime | None:
    """A UTC datetime from integer nanoseconds since the epoch (``None`` when out of range)."""
    try:
        return datetime.fromtimestamp(ns / 1e9, tz=UTC)
    except (OverflowError, OSError, ValueError, TypeError):
        return None
