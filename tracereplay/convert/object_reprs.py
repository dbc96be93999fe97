"""Python object reprs that instrumentations record instead of data, read as data.

An instrumentation that ``str()``s what it wraps records a framework's messages as their
Python repr: ``ChatMessage(_role=<ChatRole.TOOL: 'tool'>, _content=[ToolCallResult(
result='Paris: 18°C, cloudy', origin=ToolCall(tool_name='get_weather', arguments={...},
id='call_0001'), error=False)], ...)`` (OpenInference's Haystack instrumentation, whose
flattened tool messages carry only their role). Such a repr of a dataclass, pydantic model or
attrs class is a Python expression but for its enum members (``<ChatRole.TOOL: 'tool'>``) and
objects with no repr of their own (``<function f at 0x...>``): those are replaced by their
value or ``None``, and the expression is read with :mod:`ast` (never evaluated) into dicts,
lists and constants. A call ``Name(a=1)`` becomes ``{"__type__": "Name", "a": 1}``.

``repr_message`` then reads a message from such an object by the fields chat messages have in
every framework: a role (``role`` / ``_role``), and content (``content`` / ``_content`` /
``text``) that is text, or parts: text, a tool call (a name, arguments and an id), a tool
call's result (a result and the call it answers, ``origin`` / ``tool_call``).
"""

from __future__ import annotations

import ast
import re
from typing import Any

from tracereplay.convert.values import as_name, as_text, python_literal

_NONE = object()

#: an enum member's repr, ``<ChatRole.TOOL: 'tool'>``: its value
_ENUM = re.compile(r"<[A-Za-z_][\w.]*: ('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|-?\d+(?:\.\d+)?)>")
#: the repr of an object that has none of its own, ``<function f at 0x7f...>``
_OPAQUE = re.compile(r"<[^<>'\"]* at 0x[0-9a-fA-F]+>")
_START = re.compile(r"\s*[A-Za-z_][\w.]*\(")
#: reprs longer than this are not read (a whole history is a few kilobytes)
MAX_REPR = 1 << 20


def _value(node: ast.AST) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Call):
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        out: dict[str, Any] = {"__type__": name}
        if node.args:
            out["args"] = [_value(a) for a in node.args]
        for keyword in node.keywords:
            if keyword.arg is not None:
                out[keyword.arg] = _value(keyword.value)
        return out
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [_value(e) for e in node.elts]
    if isinstance(node, ast.Dict):
        return {
            _value(k) if k is not None else None: _value(v)
            for k, v in zip(node.keys, node.values, strict=True)
            if k is None or isinstance(_value(k), (str, int, float, bool))
        }
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _value(node.operand)
        return -inner if isinstance(inner, (int, float)) else None
    if isinstance(node, ast.Name):
        return None  # a bare name: nothing readable
    return None


def read_repr(text: Any) -> Any:
    """The data in an object's repr (see the module docstring), ``None`` when ``text`` is none
    or cannot be read."""
    if type(text) is not str or len(text) > MAX_REPR or not _START.match(text):
        return None
    source = _OPAQUE.sub("None", _ENUM.sub(r"\1", text))
    try:
        tree = ast.parse(source.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    try:
        return _value(tree.body)
    except RecursionError:
        return None


def _field(obj: dict[str, Any], *names: str) -> Any:
    for name in names:
        if name in obj:
            return obj[name]
    return None


def _part(obj: Any) -> dict[str, Any] | None:
    if isinstance(obj, str):
        return {"type": "text", "content": obj}
    if not isinstance(obj, dict):
        return None
    result = _field(obj, "result", "_result")
    origin = _field(obj, "origin", "tool_call", "_origin")
    if result is not None and isinstance(origin, dict):
        part = {
            "type": "tool_call_response",
            "id": as_name(_field(origin, "id", "_id", "tool_call_id")),
            "response": result,
        }
        if _field(obj, "error", "is_error") is True:
            part["status"] = "error"
        return part
    name = _field(obj, "tool_name", "name", "_tool_name")
    arguments = _field(obj, "arguments", "args", "_arguments")
    if name is not None and isinstance(arguments, dict):
        return {
            "type": "tool_call",
            "id": as_name(_field(obj, "id", "_id", "tool_call_id")),
            "name": as_name(name),
            "arguments": arguments,
        }
    text = _field(obj, "text", "_text", "content")
    return {"type": "text", "content": as_text(text)} if isinstance(text, str) else None


def repr_message(text: Any) -> dict[str, Any] | None:
    """A normalized message (``{"role", "parts"}``) from a chat message's repr, else ``None``."""
    obj = read_repr(text)
    if not isinstance(obj, dict):
        return None
    role = as_name(_field(obj, "role", "_role")).lower()
    content = _field(obj, "content", "_content", "text")
    if not role or content is None:
        return None
    items = content if isinstance(content, list) else [content]
    parts = [
        p
        for p in (_part(item) for item in items)
        if p is not None and not (p["type"] == "text" and not p["content"])
    ]
    return {"role": role, "parts": parts}


_FIELD = re.compile(r"(?:^| )([A-Za-z_]\w*)=")


def read_fields(text: Any) -> dict[str, Any] | None:
    """The fields of a pydantic model's ``str()``: ``name=<repr> name=<repr> ...``, as
    LangChain's ``str(ToolMessage)`` (``content='Paris: 18°C' name='get_weather'
    tool_call_id='call_1'``), which OpenLIT records as a tool's result; ``None`` when ``text``
    is not one. Each value must read as a Python literal (``values.python_literal``)."""
    if type(text) is not str or len(text) > MAX_REPR or not _FIELD.match(text):
        return None
    marks = list(_FIELD.finditer(text))
    out: dict[str, Any] = {}
    i = 0
    while i < len(marks):
        name, start = marks[i].group(1), marks[i].end()
        for j in range(i + 1, len(marks) + 1):
            end = marks[j].start() if j < len(marks) else len(text)
            value = python_literal(text[start:end], _NONE)
            if value is _NONE:
                continue
            out[name] = value
            i = j
            break
        else:
            return None
    return out
