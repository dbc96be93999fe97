"""Airtight replay: did a tool run for real during a replay that should have answered it?

No tool runs for real in a replay unless ``--live-tools``. A tool span of the replay's trace not
marked ``tracereplay.tool.replayed`` (and with no answered tool span inside it), or, in a trace
with no tool spans at all, more calls of a tool in the replay run than the interceptor saw,
makes the case an ERROR: "tool get_weather ran live during replay (no --live-tools)". An
unmarked span is forgiven only for a call the interceptor answered that no marked span stands
for (an instrumentation whose tool span is not current while the tool runs cannot be marked),
and a tool span with an agent run inside is the framework delegating to that agent (whose own
tool executions are judged one by one). A plain
loop's replay (no framework) also counts the tool results its LLM requests carried
(``llm.sent_results``): a tool the fallback could not reach leaves no span, but its result
reaches the model. A framework whose every tool execution leaves a span (its adapter's
``records_tool_spans``) is judged by its spans alone: no tool span, no tool ran.

What is a tool execution is the converter's rule (``convert.tools``): a framework's summary span
over other calls is none, nor is its answer tool (smolagents' ``final_answer``: a tool call of
the run, which the framework runs, not the user), and a handoff's call is one (every framework adapter asks the
recording for it, as for any tool).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence

from tracereplay.convert.detect import AGENT, detect
from tracereplay.convert.forms import is_answer_tool
from tracereplay.convert.tools import tool_execution_spans
from tracereplay.models import Run
from tracereplay.replay.frameworks.base import REPLAYED_ATTRIBUTE
from tracereplay.spans import Span


def ran_live(
    spans: Sequence[Span],
    run: Run | None,
    seen: Counter[str],
    sent: Counter[str] | None = None,
    *,
    tool_spans: bool = False,
    frameworks_own: Callable[[str], bool] | None = None,
) -> str | None:
    """The name of a tool that ran for real in a replay, or None.

    A tool span not marked ``tracereplay.tool.replayed`` ran live, unless a tool span inside it
    was answered (a framework tool wrapping an ``@tracereplay.tool`` the recording answered).
    In a trace with no tool spans at all (a framework that records none), the replay run's tool
    calls are counted against the calls the interceptor saw. ``sent`` (a plain loop's replay:
    the tool results its LLM requests carried, per tool) is counted against them too: a result
    the interceptor never gave came from a tool that ran, with or without a span.
    ``tool_spans``: every tool execution leaves a span (``FrameworkAgent.records_tool_spans``),
    so a trace with none ran no tool: a call the model asked that the framework refused (a
    tool renamed since the recording) is not counted as one that ran. ``frameworks_own(name)``:
    the tool is the framework's own (no function of the user's code is that tool, and the
    framework's code has one of that name: a team's delegation, a handoff), which runs as the
    framework's control flow, not as a tool of the user's.
    """
    own = frameworks_own or (lambda name: False)
    live = _ran_live_by_spans(spans, None if tool_spans else run, seen, own)
    if live is None and sent:
        live = more_than_seen(sent, seen, own)
    return live


def more_than_seen(
    made: Counter[str], seen: Counter[str], own: Callable[[str], bool] = lambda name: False
) -> str | None:
    """The first tool ``made`` counts more calls of than the interceptor ``seen``, or None; a
    framework's ``own`` tool is not counted (asked only of a tool that would count as run)."""
    for name, count in made.items():
        if count > seen.get(name, 0) and not own(name):
            return name
    return None


def _ancestors(span_ids: Iterable[str], parents: dict[str, str | None]) -> set[str]:
    """Every span above one of ``span_ids`` (a broken parent chain ends the climb)."""
    out: set[str] = set()
    for span_id in span_ids:
        parent, hops = parents.get(span_id), 0
        while parent and hops < 1000:
            out.add(parent)
            parent, hops = parents.get(parent), hops + 1
    return out


def _ran_live_by_spans(
    spans: Sequence[Span], run: Run | None, seen: Counter[str], own: Callable[[str], bool]
) -> str | None:
    tool_spans = tool_execution_spans(spans)
    if tool_spans:
        replayed = {
            s.span_id for s, _ in tool_spans if s.attributes.get(REPLAYED_ATTRIBUTE) is True
        }
        parents = {s.span_id: s.parent_span_id for s in spans}
        covered = _ancestors(replayed, parents)
        # an instrumentation whose tool span is not the current span while the tool runs
        # (LangChain-callback spans: OpenLIT's) cannot be marked by the adapter that answered
        # the call: it counts against the answers no marked span stands for
        spare = Counter(seen)
        spare.subtract(info.name or s.name for s, info in tool_spans if s.span_id in replayed)
        # a span with an agent run inside (a team's delegate_task_to_member, an agent-as-tool
        # the framework runs) hands the work to that agent, whose own tools are judged one by one
        delegating = _ancestors((s.span_id for s in spans if detect(s)[0] == AGENT), parents)
        for s, info in tool_spans:
            if s.span_id in delegating:
                continue  # a framework's delegation to an agent: that agent's tools are checked
            if s.span_id not in replayed and s.span_id not in covered:
                name = info.name or s.name
                if spare[name] > 0:
                    spare[name] -= 1
                    continue
                if own(name):
                    continue
                return name
        return None
    if run is None:
        return None
    made = Counter(c.tool_name for c in run.result.tool_calls if not is_answer_tool(c.tool_name))
    return more_than_seen(made, seen, own)
