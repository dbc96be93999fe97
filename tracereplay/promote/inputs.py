"""Command-line values for cases: ``--param k=v`` and ``--expected-tool NAME[:json-args]``."""

from __future__ import annotations

from collections.abc import Iterable

import orjson

from tracereplay.errors import BadParameterError
from tracereplay.models import EvalExpectedToolCall
from tracereplay.models.parameters import NAME


def parse_params(values: Iterable[str]) -> dict[str, str] | None:
    """``["k=v", ...]`` as a dict (the value may contain ``=``); None when there are none."""
    out: dict[str, str] = {}
    for text in values:
        key, sep, value = text.partition("=")
        if not sep or not NAME.match(key):
            raise BadParameterError(f"--param '{text}' must look like name=value")
        if key in out:
            raise BadParameterError(f"--param '{key}' is given twice")
        out[key] = value
    return out or None


def parse_expected_tool(text: str) -> EvalExpectedToolCall:
    """``NAME`` or ``NAME:{"arg": ...}`` (the arguments a JSON object, matched as a subset)."""
    name, sep, args = text.partition(":")
    name = name.strip()
    if not name:
        raise BadParameterError(f"--expected-tool '{text}' has no tool name")
    if not sep:
        return EvalExpectedToolCall(name=name)
    try:
        arguments = orjson.loads(args)
    except orjson.JSONDecodeError as exc:
        raise BadParameterError(
            f"--expected-tool '{text}': the arguments after ':' are not JSON ({exc})"
        ) from None
    if not isinstance(arguments, dict):
        raise BadParameterError(
            f"--expected-tool '{text}': the arguments after ':' must be a JSON object"
        )
    return EvalExpectedToolCall(name=name, arguments=arguments)
