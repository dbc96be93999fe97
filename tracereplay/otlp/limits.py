"""Apply ``Limits`` to decoded spans and logs: drop attributes past a count, cut long strings."""

from __future__ import annotations

from typing import Any

from tracereplay.otlp.model import Decoded, Limits

DROPPED_ATTRIBUTES_KEY = "tracereplay.dropped_attributes_count"
"""Attribute recording how many attributes ``Limits.max_attributes`` dropped."""


def truncate_string(value: str, max_length: int) -> str:
    """``value`` cut to ``max_length`` characters plus a visible ``…[truncated N chars]`` marker."""
    extra = len(value) - max_length
    if extra <= 0:
        return value
    return f"{value[:max_length]}…[truncated {extra} chars]"


def _cut_value(value: Any, max_length: int) -> Any:
    if isinstance(value, str):
        return truncate_string(value, max_length) if len(value) > max_length else value
    if isinstance(value, list):
        return [_cut_value(v, max_length) for v in value]
    if isinstance(value, dict):
        return {k: _cut_value(v, max_length) for k, v in value.items()}
    return value


def limit_attributes(attributes: dict[str, Any], limits: Limits) -> dict[str, Any]:
    """``attributes`` within ``limits`` (a new dict when a limit is set)."""
    out = attributes
    max_attrs = limits.max_attributes
    if max_attrs is not None and len(out) > max_attrs:
        dropped = len(out) - max(max_attrs, 0)
        out = dict(list(out.items())[: max(max_attrs, 0)])
        out[DROPPED_ATTRIBUTES_KEY] = dropped
    max_len = limits.max_value_length
    if max_len is not None:
        out = _cut_value(out, max(max_len, 0))
    return out


def apply_limits(decoded: Decoded, limits: Limits | None) -> Decoded:
    """Apply ``limits`` in place to every span, event, link and log record; returns ``decoded``."""
    if limits is None or (limits.max_attributes is None and limits.max_value_length is None):
        return decoded
    # resource dicts are shared by the spans of one ResourceSpans: limit each once (the original
    # is kept in the map so its id cannot be reused while we run)
    resources: dict[int, tuple[dict[str, Any], dict[str, Any]]] = {}
    for span in decoded.spans:
        span.attributes = limit_attributes(span.attributes, limits)
        for item in (*span.events, *span.links):
            item["attributes"] = limit_attributes(item["attributes"], limits)
        key = id(span.resource)
        if key not in resources:
            resources[key] = (span.resource, limit_attributes(span.resource, limits))
        span.resource = resources[key][1]
    max_len = limits.max_value_length
    for log in decoded.logs:
        log.attributes = limit_attributes(log.attributes, limits)
        if max_len is not None:
            log.body = _cut_value(log.body, max(max_len, 0))
    return decoded
