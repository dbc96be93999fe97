"""OpenTelemetry SDK spans → tracereplay ``Span``s directly: what the OTLP protobuf encoder and
``decode_traces_pb`` make of them, without the protobuf between.

The SDK's OTLP encoder builds a protobuf message per attribute in Python, many times what
reading the span's fields costs (``benchmarks/RESULTS.md``, "replay"). The spool exporter and a replay's
in-process capture both need the spans, so both read them here. Anything the encoder treats
in a way of its own (a value it drops or refuses, an id or time the decoder rejects) makes
``from_sdk`` return ``None``, and the caller takes the protobuf path: the result is never
different from it, only cheaper.

One difference, on purpose: text holding a lone surrogate (half of a UTF-16 pair, as
``json.loads`` makes of an escaped half, or the ``surrogateescape`` handler of bytes that are
not UTF-8) has no UTF-8, so no OTLP encoding, JSON or store can hold it. The encoder drops such
an attribute, and for a span's name the whole batch; here each lone surrogate becomes U+FFFD,
as a UTF-8 decoder replaces bytes it cannot read, and the span keeps the rest of its text.
"""

from __future__ import annotations

from base64 import b64encode
from collections.abc import Mapping, Sequence
from typing import Any

from opentelemetry.attributes import BoundedAttributes
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind

from tracereplay.otlp.ids import MAX_TIME_NS
from tracereplay.otlp.model import service_name_of
from tracereplay.otlp.text import valid_text
from tracereplay.spans import Span

_KIND = {kind: kind.value + 1 for kind in SpanKind}  # the OTLP enum counts UNSPECIFIED as 0
_INT64 = (-(2**63), 2**63 - 1)


class _Unusual(Exception):
    """A value or span the protobuf path treats in a way of its own."""


def _value(value: Any) -> Any:
    """An attribute value as ``any_value`` decodes its protobuf encoding."""
    t = value.__class__
    if t is str:
        return valid_text(value)
    if t is bool or t is float or value is None:
        return value
    if t is int:
        if not _INT64[0] <= value <= _INT64[1]:
            raise _Unusual  # the encoder refuses it: the attribute is dropped there
        return value
    if t is tuple or t is list:
        return [_value(v) for v in value]
    if t is bytes:
        return b64encode(value).decode("ascii")
    if isinstance(value, Mapping):
        return {valid_text(str(k)): _value(v) for k, v in value.items()}
    raise _Unusual


def _attributes(attributes: Mapping[str, Any] | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if attributes:
        for key, value in _plain(attributes).items():
            if not key.isascii():
                key = valid_text(key)
            out[key] = value if value.__class__ is str and value.isascii() else _value(value)
    return out


def _plain(attributes: Mapping[str, Any]) -> Mapping[str, Any]:
    """The SDK's ``BoundedAttributes`` as the dict it keeps them in: its ``Mapping`` methods
    are Python calls per item, and a replayed case reads four or more such mappings. ``tests/test_library_internals.py`` fails when a release moves it."""
    if attributes.__class__ is BoundedAttributes:
        return attributes._dict  # type: ignore[attr-defined,no-any-return]
    return attributes


def _time(ns: int | None) -> int:
    if ns is None or not 0 <= ns <= MAX_TIME_NS:
        raise _Unusual  # the decoder rejects the span
    return ns


def _span(s: ReadableSpan, resource: dict[str, Any], service: str, scope: str) -> Span:
    ctx = s.context
    if ctx is None or not 0 < ctx.trace_id < 2**128 or not 0 < ctx.span_id < 2**64:
        raise _Unusual  # the decoder rejects the span, or the encoder refuses it
    parent = s.parent
    status = s.status
    events = s.events
    links = s.links
    return Span(
        f"{ctx.trace_id:032x}",
        f"{ctx.span_id:016x}",
        f"{parent.span_id:016x}" if parent is not None and parent.span_id else "",
        valid_text(s.name),
        _KIND[s.kind],
        _time(s.start_time),
        _time(s.end_time),
        status.status_code.value if status is not None else 0,
        valid_text(status.description or "") if status is not None else "",
        _attributes(s.attributes),
        [
            {
                "name": valid_text(e.name),
                "time_unix_nano": _time(e.timestamp),
                "attributes": _attributes(e.attributes),
            }
            for e in events
        ]
        if events
        else [],
        [
            {
                "trace_id": f"{link.context.trace_id:032x}",
                "span_id": f"{link.context.span_id:016x}",
                "attributes": _attributes(link.attributes),
            }
            for link in links
        ]
        if links
        else [],
        service,
        scope,
        resource,
    )


def from_sdk(spans: Sequence[ReadableSpan]) -> list[Span] | None:
    """``spans`` as ``decode_traces_pb(encode_spans(spans))`` gives them, in its order (grouped
    by resource, then by instrumentation scope, each in order of first appearance); ``None``
    when some span needs the protobuf path (see the module docstring).

    An ended span does not change, and a replay reads each of its spans twice (its capture,
    then the spool's export): what was read is kept on the SDK's span and given again, the same
    object instead of reading the span twice. Callers only read the spans they get."""
    groups: list[tuple[Any, dict[Any, list[ReadableSpan]]]] = []
    by_id: dict[int, dict[Any, list[ReadableSpan]]] = {}
    for s in spans:
        resource = s.resource
        scopes = by_id.get(id(resource))
        if scopes is None:
            # equal resources share a group, as in the encoder's dict of them (compared, not
            # hashed: a resource's hash is a JSON dump of its attributes)
            scopes = next((g for r, g in groups if r == resource), None)
            if scopes is None:
                scopes = {}
                groups.append((resource, scopes))
            by_id[id(resource)] = scopes
        scopes.setdefault(s.instrumentation_scope or None, []).append(s)
    out: list[Span] = []
    try:
        for resource, scopes in groups:
            attributes, service = _resource(resource)
            for scope, members in scopes.items():
                name = valid_text(scope.name) if scope is not None else ""
                for s in members:
                    read = s.__dict__.get(_READ)
                    if read is None or read.resource is not attributes:
                        read = s.__dict__[_READ] = _span(s, attributes, service, name)
                    out.append(read)
    except (_Unusual, KeyError, AttributeError, TypeError):
        return None
    return out


#: where ``from_sdk`` keeps what it read of an ended span (and of a resource) on the object
_READ = "_tracereplay_read"


def _resource(resource: Any) -> tuple[dict[str, Any], str]:
    """A resource's attributes and service name, read once per resource object: its spans all
    hold the one dict, as a decoded request's spans do, so a span read here is the same span
    when read again (``from_sdk`` keeps it on the SDK's span)."""
    read = resource.__dict__.get(_READ)
    if read is None:
        attributes = _attributes(resource.attributes)
        read = resource.__dict__[_READ] = (attributes, service_name_of(attributes))
    return read
