"""What content leaves the process: capture on/off, the redact hook, the per-value size cap.

Every string the SDK records (query, response, message text, tool arguments and results, context
documents, parameters, exception messages) goes through one ``ContentPolicy`` before it is put on
a span: first ``redact``, then the size cap with a visible truncation marker.
"""

from __future__ import annotations

import json as stdjson
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Union

import orjson

from tracereplay.otlp.text import valid_text
from tracereplay.sdk.health import health

#: a callable ``str -> str``, or regexes (strings or compiled) whose matches are replaced
Redactor = Union[Callable[[str], str], Sequence[Union[str, "re.Pattern[str]"]]]

REDACTED = "[REDACTED]"
DEFAULT_MAX_VALUE_CHARS = 100_000
_DUMPS_OPTS = orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY


def truncation_marker(dropped: int) -> str:
    """The text appended to a value cut by the size cap."""
    return f"…[truncated {dropped} chars]"


def compile_redactor(redact: Redactor | None) -> Callable[[str], str] | None:
    """A ``str -> str`` function from a callable or a list of regexes (``None`` stays ``None``)."""
    if redact is None:
        return None
    if callable(redact):
        return redact
    if isinstance(redact, (str, re.Pattern)):
        redact = [redact]
    patterns = [p if isinstance(p, re.Pattern) else re.compile(p) for p in redact]
    if not patterns:
        return None
    combined = re.compile("|".join(f"(?:{p.pattern})" for p in patterns))

    def _sub(text: str) -> str:
        return combined.sub(REDACTED, text)

    return _sub


def json_default(obj: Any) -> Any:
    """How recorded values that JSON has no type for are encoded (pydantic models, sets, tuples,
    anything else as ``str``); replay normalizes arguments with the same rule."""
    dump = getattr(obj, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    if isinstance(obj, (set, frozenset, tuple)):
        return list(obj)
    return str(obj)


def _dumps(value: Any) -> bytes:
    try:
        return orjson.dumps(value, default=json_default, option=_DUMPS_OPTS)
    except TypeError:  # integers beyond 64 bits, unusual keys, a lone surrogate: the slow,
        # tolerant encoder (a lone surrogate can only stand inside a string of its text)
        try:
            return valid_text(
                stdjson.dumps(value, default=json_default, ensure_ascii=False)
            ).encode()
        except (TypeError, ValueError):
            return orjson.dumps(valid_text(str(value)))


@dataclass(frozen=True)
class ContentPolicy:
    """How recorded content is filtered: ``capture``, ``redact`` hook, ``max_value_chars`` cap."""

    capture: bool = True
    redact: Callable[[str], str] | None = None
    max_value_chars: int = DEFAULT_MAX_VALUE_CHARS

    def text(self, value: str) -> str:
        """One string, redacted then capped (a lone surrogate in it replaced: ``valid_text``)."""
        value = valid_text(value)
        if self.redact is not None:
            try:
                value = self.redact(value)
                if not isinstance(value, str):
                    value = str(value)
            except Exception as exc:  # never let unredacted content out
                health.instrumentation_failed("redact hook", exc)
                return REDACTED
        if len(value) > self.max_value_chars:
            value = value[: self.max_value_chars] + truncation_marker(
                len(value) - self.max_value_chars
            )
        return value

    def clean(self, value: Any) -> Any:
        """A JSON-ready copy of ``value`` with every string leaf passed through ``text``."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {k: self.clean(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.clean(v) for v in value]
        if value is None or isinstance(value, (bool, int, float)):
            return value
        return self.clean(stdjson.loads(_dumps(value)))

    def json(self, value: Any) -> str:
        """``value`` as JSON text, every string in it redacted and capped."""
        raw = _dumps(value)
        if self.redact is None and len(raw) <= self.max_value_chars:
            return raw.decode()  # no string inside can exceed the cap
        return _dumps(self.clean(stdjson.loads(raw))).decode()

    def value(self, value: Any) -> str:
        """A string as itself (redacted, capped), anything else as JSON text."""
        return self.text(value) if isinstance(value, str) else self.json(value)


_policy = ContentPolicy()


def current_policy() -> ContentPolicy:
    """The policy set by the last ``configure()`` (capture on, no redaction, default cap)."""
    return _policy


def set_policy(policy: ContentPolicy) -> None:
    global _policy
    _policy = policy
