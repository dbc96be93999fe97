"""Per-span limits applied to a request before it is spooled, so they hold whoever drains it.

The same rules as ``tracereplay.otlp.limits`` (which works on decoded spans): attributes past
``max_attributes`` are dropped and counted under ``tracereplay.dropped_attributes_count``; string
values longer than ``max_value_length`` are cut and end with ``…[truncated N chars]``. Here they
act on the parsed protobuf message or JSON object, in place, and say whether anything changed:
the request is re-encoded only then.
"""

from __future__ import annotations

from typing import Any

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

from tracereplay.otlp.limits import DROPPED_ATTRIBUTES_KEY, truncate_string
from tracereplay.serve.config import Limits


class _PbLimiter:
    def __init__(self, limits: Limits, cut_values: bool) -> None:
        self.max_attributes = limits.max_attributes
        self.max_len = limits.max_value_length
        # A body shorter than the length limit cannot hold a string over it: skip the walk.
        self.cut_values = cut_values

    def attributes(self, kvs: Any) -> bool:
        changed = False
        if len(kvs) > self.max_attributes:
            dropped = len(kvs) - self.max_attributes
            del kvs[self.max_attributes :]
            extra = kvs.add()
            extra.key = DROPPED_ATTRIBUTES_KEY
            extra.value.int_value = dropped
            changed = True
        if self.cut_values:
            for kv in kvs:
                if self.value(kv.value):
                    changed = True
        return changed

    def value(self, value: AnyValue) -> bool:
        which = value.WhichOneof("value")
        if which == "string_value":
            if len(value.string_value) > self.max_len:
                value.string_value = truncate_string(value.string_value, self.max_len)
                return True
            return False
        changed = False
        if which == "array_value":
            for item in value.array_value.values:
                changed = self.value(item) or changed
        elif which == "kvlist_value":
            for kv in value.kvlist_value.values:
                changed = self.value(kv.value) or changed
        return changed


def limit_traces_pb(req: ExportTraceServiceRequest, limits: Limits, body_size: int) -> bool:
    """Apply ``limits`` to every span, event, link and resource of ``req``; True if changed."""
    lim = _PbLimiter(limits, body_size > limits.max_value_length)
    changed = False
    for rs in req.resource_spans:
        changed = lim.attributes(rs.resource.attributes) or changed
        for ss in rs.scope_spans:
            for span in ss.spans:
                changed = lim.attributes(span.attributes) or changed
                for event in span.events:
                    changed = lim.attributes(event.attributes) or changed
                for link in span.links:
                    changed = lim.attributes(link.attributes) or changed
    return changed


def limit_logs_pb(req: ExportLogsServiceRequest, limits: Limits, body_size: int) -> bool:
    """Apply ``limits`` to every log record (attributes and body) of ``req``; True if changed."""
    lim = _PbLimiter(limits, body_size > limits.max_value_length)
    changed = False
    for rl in req.resource_logs:
        for sl in rl.scope_logs:
            for record in sl.log_records:
                changed = lim.attributes(record.attributes) or changed
                if lim.cut_values and record.HasField("body"):
                    changed = lim.value(record.body) or changed
    return changed


# ---------------------------------------------------------------------------------- OTLP/JSON
_STRING_KEYS = ("stringValue", "string_value")
_ARRAY_KEYS = ("arrayValue", "array_value")
_KVLIST_KEYS = ("kvlistValue", "kvlist_value")


def _json_value(value: Any, max_len: int) -> bool:
    if value.__class__ is not dict:
        return False
    changed = False
    for key in _STRING_KEYS:
        s = value.get(key)
        if s.__class__ is str and len(s) > max_len:
            value[key] = truncate_string(s, max_len)
            changed = True
    for key in _ARRAY_KEYS + _KVLIST_KEYS:
        inner = value.get(key)
        if inner.__class__ is dict and inner.get("values").__class__ is list:
            for item in inner["values"]:
                if key in _ARRAY_KEYS:
                    changed = _json_value(item, max_len) or changed
                elif item.__class__ is dict:
                    changed = _json_value(item.get("value"), max_len) or changed
    return changed


def _walk_json(obj: Any, limits: Limits, cut_values: bool) -> bool:
    """Every ``attributes`` list (resource, span, event, link, log) and every log ``body``."""
    changed = False
    if obj.__class__ is dict:
        for key, value in obj.items():
            if key == "attributes" and value.__class__ is list:
                if len(value) > limits.max_attributes:
                    dropped = len(value) - limits.max_attributes
                    del value[limits.max_attributes :]
                    value.append(
                        {"key": DROPPED_ATTRIBUTES_KEY, "value": {"intValue": str(dropped)}}
                    )
                    changed = True
                if cut_values:
                    for kv in value:
                        if kv.__class__ is dict:
                            changed = (
                                _json_value(kv.get("value"), limits.max_value_length) or changed
                            )
            elif key == "body" and cut_values:
                changed = _json_value(value, limits.max_value_length) or changed
            elif value.__class__ in (dict, list):
                changed = _walk_json(value, limits, cut_values) or changed
    elif obj.__class__ is list:
        for item in obj:
            changed = _walk_json(item, limits, cut_values) or changed
    return changed


def limit_json(obj: dict[str, Any], limits: Limits, body_size: int) -> bool:
    """Apply ``limits`` in place to a parsed OTLP/JSON traces or logs request; True if changed."""
    return _walk_json(obj, limits, body_size > limits.max_value_length)
