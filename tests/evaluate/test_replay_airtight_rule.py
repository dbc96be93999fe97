"""``ran_live`` on small synthetic replay traces: what counts as a tool execution is the
converter's rule (a summary span over other calls is none; a handoff's call is a tool call)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import orjson

from tracereplay.models import AgentResult, Run, ToolCallRecord
from tracereplay.replay.answering.airtight import ran_live
from tracereplay.semconv import TOOL_REPLAYED
from tracereplay.spans import Span


class _Trace:
    def __init__(self) -> None:
        self.spans: list[Span] = []

    def span(self, name: str, attrs: dict[str, Any], parent: Span | None = None) -> Span:
        n = len(self.spans) + 1
        span = Span(
            trace_id="ab" * 16,
            span_id=f"{n:016x}",
            parent_span_id=parent.span_id if parent is not None else "",
            name=name,
            kind=1,
            start_ns=n * 1_000_000,
            end_ns=n * 1_000_000 + 500_000,
            status_code=0,
            status_message="",
            attributes=attrs,
            events=[],
            service_name="svc",
        )
        self.spans.append(span)
        return span

    def agent(self) -> Span:
        return self.span("invoke_agent a", {"gen_ai.operation.name": "invoke_agent"})

    def asks(self, parent: Span, *calls: tuple[str, str]) -> None:
        """A chat span whose answer asks for ``(call_id, tool_name)`` calls."""
        parts = [{"type": "tool_call", "id": i, "name": n, "arguments": {}} for i, n in calls]
        messages = orjson.dumps([{"role": "assistant", "parts": parts}]).decode()
        attrs = {"gen_ai.operation.name": "chat", "gen_ai.output.messages": messages}
        self.span("chat m", attrs, parent)

    def tool(self, parent: Span, name: str, replayed: bool = False, **attrs: Any) -> Span:
        attrs = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name, **attrs}
        if replayed:
            attrs[TOOL_REPLAYED] = True
        return self.span(f"execute_tool {name}", attrs, parent)


def _parallel_calls(summary_name: str, **summary: Any) -> _Trace:
    t = _Trace()
    root = t.agent()
    t.asks(root, ("c1", "get_weather"), ("c2", "get_weather"))
    t.tool(root, "get_weather", replayed=True, **{"gen_ai.tool.call.id": "c1"})
    t.tool(root, "get_weather", replayed=True, **{"gen_ai.tool.call.id": "c2"})
    t.tool(root, summary_name, **summary)
    return t


def test_a_summary_span_no_request_asked_for_ran_nothing() -> None:
    # Google ADK's span after parallel calls, and the same shape under any other name
    for name in ("(merged tools)", "summary"):
        t = _parallel_calls(name, **{"gen_ai.tool.call.id": "adk-event-id"})
        assert ran_live(t.spans, None, Counter()) is None


def test_an_unmarked_tool_span_that_recorded_a_call_ran_live() -> None:
    asked = _parallel_calls("lookup", **{"gen_ai.tool.call.id": "c2"})  # asked for
    assert ran_live(asked.spans, None, Counter()) == "lookup"
    args = '{"city": "Rome"}'
    recorded = _parallel_calls(
        "lookup", **{"gen_ai.tool.call.id": "x9", "gen_ai.tool.call.arguments": args}
    )
    assert ran_live(recorded.spans, None, Counter()) == "lookup"


def test_a_tool_wrapping_an_answered_tool_did_not_run_live() -> None:
    t = _Trace()
    root = t.agent()
    outer = t.tool(root, "framework_tool")
    t.tool(outer, "get_weather", replayed=True)
    assert ran_live(t.spans, None, Counter()) is None


def test_without_tool_spans_a_handoff_call_counts_like_any_tool_call() -> None:
    t = _Trace()
    t.agent()
    calls = [
        ToolCallRecord(round=1, tool_name="transfer_to_forecaster", arguments={}),
        ToolCallRecord(round=2, tool_name="get_forecast", arguments={}),
    ]
    run = Run(
        run_id="r",
        trace_id="ab" * 16,
        root_span_id="1",
        result=AgentResult(response="", tool_calls=calls),
    )
    asked = Counter({"transfer_to_forecaster": 1, "get_forecast": 1})
    assert ran_live(t.spans, run, asked) is None
    assert ran_live(t.spans, run, Counter({"get_forecast": 1})) == "transfer_to_forecaster"
