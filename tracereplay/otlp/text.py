"""Text that is not valid Unicode, made valid where spans come in: a lone surrogate becomes U+FFFD.

A lone surrogate is half of a UTF-16 pair on its own. JavaScript's ``JSON.stringify`` writes one
(a string cut between the two halves of an emoji, say) as an escape such as ``\\ud83d``, which
orjson refuses; in Python, ``json.loads`` makes one of such an escape, and the
``surrogateescape`` error handler makes them of bytes that are not UTF-8. No UTF-8 can hold one,
so no store, OTLP encoding or JSON document can either: OpenTelemetry's own encoder drops the
attribute, or fails the whole batch. Replacing each with U+FFFD, as a UTF-8 decoder replaces
bytes it cannot read, keeps the span and the rest of its text.
"""

from __future__ import annotations

import json
import re
from typing import Any, NoReturn

import orjson

_SURROGATE = re.compile("[\ud800-\udfff]")


def valid_text(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD. ASCII text, nearly all of it, is
    answered by a flag the string carries, without a scan."""
    if text.isascii() or _SURROGATE.search(text) is None:
        return text
    return _SURROGATE.sub("\ufffd", text)


def valid_values(value: Any) -> Any:
    """JSON-shaped ``value`` (dicts, lists, strings, scalars) with ``valid_text`` on every
    string in it, keys included."""
    t = value.__class__
    if t is str:
        return valid_text(value)
    if t is list:
        return [valid_values(v) for v in value]
    if t is dict:
        return {valid_text(k): valid_values(v) for k, v in value.items()}
    return value


def _no_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not JSON")


def loads(data: bytes | str) -> Any:
    """``orjson.loads``, except that a document with an escaped lone surrogate is read (by the
    standard library's parser, which accepts one) with U+FFFD in its place. Any other fault
    raises orjson's ``JSONDecodeError``, as ``orjson.loads`` does."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as err:
        if "surrogate" not in err.msg:
            raise
        try:
            value = json.loads(data, parse_constant=_no_constant)
        except ValueError:
            raise err from None
        return valid_values(value)
