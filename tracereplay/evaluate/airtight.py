"""Airtight replay: did a tool run for real during a replay that should have answered it?

No tool runs for real in a replay unless ``--live-tools``. A tool span of the replay's trace not
marked ``tracereplay.tool.replayed`` (and with no answered tool span inside it), or, in a trace
with no tool spans at all, more calls of a tool in the replay run than the interceptor saw,
makes the case an ERROR: "tool get_weather ran live during replay (no --live-tools)".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from tracereplay.convert.detect import TOOL, detect
from tracereplay.evaluate.frameworks.base import REPLAYED_ATTRIBUTE
from tracereplay.models import Run
from tracereplay.spans import Span

#: tool spans that stand for no tool execution (Google ADK's span over parallel calls)
_NOT_TOOL_EXECUTIONS = frozenset({"(merged tools)"})


def _tool_name(span: Span) -> str:
    a = span.attributes
    for key in ("gen_ai.tool.name", "tool.name", "traceloop.entity.name"):
        value = a.get(key)
        if isinstance(value, str) and value:
            return value
    name = span.name
    for prefix in ("execute_tool ", "running tool: ", "tool "):
        if name.startswith(prefix):
            return name[len(prefix) :]
    return name


def ran_live(spans: Sequence[Span], run: Run | None, seen: Counter[str]) -> str | None:
    """The name of a tool that ran for real in a replay, or None.

    A tool span not marked ``tracereplay.tool.replayed`` ran live, unless a tool span inside it
    was answered (a framework tool wrapping an ``@tracereplay.tool`` the recording answered).
    In a trace with no tool spans at all (a framework that records none), the replay run's tool
    calls are counted against the calls the interceptor saw.
    """
    tool_spans = [
        s for s in spans if detect(s)[0] == TOOL and _tool_name(s) not in _NOT_TOOL_EXECUTIONS
    ]
    if tool_spans:
        replayed = {s.span_id for s in tool_spans if s.attributes.get(REPLAYED_ATTRIBUTE) is True}
        parents = {s.span_id: s.parent_span_id for s in spans}
        covered: set[str] = set()
        for span_id in replayed:
            parent = parents.get(span_id)
            hops = 0
            while parent and hops < 1000:
                covered.add(parent)
                parent = parents.get(parent)
                hops += 1
        for s in sorted(tool_spans, key=lambda s: s.start_ns):
            if s.span_id not in replayed and s.span_id not in covered:
                return _tool_name(s)
        return None
    if run is None:
        return None
    made = Counter(c.tool_name for c in run.result.tool_calls)
    for name, count in made.items():
        if name.startswith("transfer_to_"):  # a handoff: the framework's control flow
            continue
        if count > seen.get(name, 0):
            return name
    return None
