"""A run's tool calls: tool spans matched to the LLM's ``tool_call`` parts, or rebuilt from the
messages when the run has no tool spans.

- A tool span is matched to a ``tool_call`` part by call id, else by name in order. Its round is
  the round of that part, else the last LLM call that ended before the tool started (0 when none
  did). Missing call id, arguments or result are taken from the part and from the
  ``tool_call_response`` with the same id in a later LLM input.
- Without tool spans, every ``tool_call`` part of an LLM output is a tool call of that round; its
  result is the matching ``tool_call_response`` (by id, else by order in the next call's input),
  its duration the gap until the next LLM call, and its error the result when that reads as an
  error (``error: ...``, ``{"error": ...}``).
- A tool span whose call id no request asked for and that recorded neither arguments nor a
  result is a framework's summary of other calls (Google ADK's ``(merged tools)`` span after
  parallel calls), no tool call (``is_summary_span``). A handoff's call (``transfer_to_...``) is
  a tool call like any other: the model asked for it.
- The framework's answer tool (smolagents' ``final_answer``, ``forms.smolagents.is_answer_tool``)
  is a tool call like any other (the model asked for it), and its argument is also the run's
  answer; it is no tool *execution* for the airtight check (``tool_execution_spans``): the
  framework runs it, not the user.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from operator import attrgetter, itemgetter
from typing import Any

from tracereplay.convert import extract
from tracereplay.convert.detect import LLM, TOOL, detect
from tracereplay.convert.forms import is_answer_tool, tool_output
from tracereplay.convert.info import LlmInfo, ToolInfo
from tracereplay.convert.values import arguments_dict, as_text, decoded
from tracereplay.models.fast import build
from tracereplay.models.run import ToolCallRecord
from tracereplay.spans import Span


@dataclass(slots=True)
class LlmRound:
    """A counted LLM call of a run: its 1-based round, span, convention and extracted call."""

    round: int
    span: Span
    convention: str
    info: LlmInfo


@dataclass(slots=True)
class SpanCall:
    """A tool call seen as a span (a tool span, or a sub-agent run called as a tool)."""

    start_ns: int
    span_id: str
    info: ToolInfo
    duration_ms: float
    error: str | None
    default_arguments: dict[str, Any] | None = None


@dataclass(slots=True)
class _Request:
    round: int
    end_ns: int
    part: dict[str, Any]
    used: bool = False
    #: its place among the run's requests: the order of tool spans that start together
    index: int = 0


_call_order = attrgetter("start_ns", "span_id")
_first_three = itemgetter(0, 1, 2)


def result_error(result: str) -> str | None:
    """``result`` when it reads as a tool error (``error: ...`` or ``{"error": ...}``)."""
    text = result.lstrip()
    if text[:6].lower() == "error:":
        return text
    if text.startswith("{") and '"error"' in text:
        value = decoded(text)
        if isinstance(value, dict) and value.get("error"):
            return as_text(value["error"])
    return None


def is_summary_span(info: ToolInfo, requested_ids: Collection[str]) -> bool:
    """Whether a tool span stands for no tool execution: the LLM's tool-call requests carry ids
    (``requested_ids``), none of them is the span's call id, and the span recorded neither
    arguments nor a result (see the module's rules)."""
    return bool(
        info.call_id
        and info.arguments is None
        and info.result is None
        and requested_ids
        and info.call_id not in requested_ids
    )


def tool_execution_spans(spans: Sequence[Span]) -> list[tuple[Span, ToolInfo]]:
    """The tool spans of one trace that stand for a tool execution, nested ones included, each
    with what it records, in start order: every tool span but the summary spans
    (``is_summary_span``, against the requests of every LLM call of the trace)."""
    tools: list[tuple[Span, ToolInfo]] = []
    llm: list[tuple[Span, str]] = []
    for span in spans:
        role, convention = detect(span)
        if role == TOOL:
            info = extract.tool_info(span, convention)
            if not is_answer_tool(info.name):
                tools.append((span, info))
        elif role == LLM:
            llm.append((span, convention))
    if any(info.arguments is None and info.result is None for _, info in tools):
        requested = {
            part["id"]
            for span, convention in llm
            for message in extract.llm_info(span, convention).output_messages
            for part in message["parts"]
            if part.get("type") == "tool_call" and part["id"]
        }
        tools = [(span, info) for span, info in tools if not is_summary_span(info, requested)]
    return sorted(tools, key=lambda pair: _call_order(pair[0]))


def _echoed_calls(r: LlmRound) -> list[dict[str, Any]]:
    """The tool calls of the last assistant turn in a request's history: the previous round's
    calls as the agent sent them back."""
    for message in reversed(r.info.input_messages):
        calls = [p for p in message["parts"] if p.get("type") == "tool_call"]
        if calls:
            return calls
    return []


def _fill_ids_from_history(rounds: list[LlmRound]) -> None:
    """A round's tool calls recorded without an id (a streamed response an instrumentation
    assembled without them) take the ids the next request's history gives the same calls (same
    names, in order)."""
    for r, following in zip(rounds, rounds[1:], strict=False):
        asked = [
            part
            for message in r.info.output_messages
            for part in message["parts"]
            if part.get("type") == "tool_call"
        ]
        if not asked or all(part["id"] for part in asked):
            continue
        echoed = _echoed_calls(following)
        if len(echoed) == len(asked) and all(
            a["name"] == e["name"] for a, e in zip(asked, echoed, strict=True)
        ):
            for part, echo in zip(asked, echoed, strict=True):
                if not part["id"]:
                    part["id"] = echo["id"]


def _requests(rounds: list[LlmRound]) -> list[_Request]:
    _fill_ids_from_history(rounds)
    out = []
    for r in rounds:
        for message in r.info.output_messages:
            for part in message["parts"]:
                if part.get("type") == "tool_call":
                    out.append(_Request(r.round, r.span.end_ns, part, index=len(out)))
    return out


class _Answers:
    """The tool responses the LLM calls received: for each round, the responses that follow the
    last tool-call message in the next call's input (the answers to that round's calls), and
    the first response seen for each call id. Call ids may repeat across rounds. Both are read
    from the messages only when a call needs them (``take``): most tool spans record their
    result."""

    __slots__ = ("_by_round", "_first", "_rounds")

    def __init__(self, rounds: list[LlmRound]) -> None:
        self._rounds = rounds
        self._first: dict[str, Any] | None = None
        self._by_round: dict[int, list[list[Any]]] | None = None

    def _trailing(self) -> dict[int, list[list[Any]]]:
        by_round: dict[int, list[list[Any]]] = {}
        for r in self._rounds[1:]:
            trailing: list[list[Any]] = []
            for message in reversed(r.info.input_messages):
                parts = message["parts"]
                if any(part.get("type") == "tool_call" for part in parts):
                    break
                for part in reversed(parts):
                    if part.get("type") == "tool_call_response":
                        trailing.append([part["id"], part, False])
            if trailing:
                trailing.reverse()
                by_round[r.round - 1] = trailing
        return by_round

    def _first_by_id(self) -> dict[str, Any]:
        if self._first is None:
            self._first = {}
            for r in self._rounds:
                for message in r.info.input_messages:
                    for part in message["parts"]:
                        if part.get("type") == "tool_call_response" and part["id"]:
                            self._first.setdefault(part["id"], part)
        return self._first

    def take(self, round_: int, call_id: str) -> dict[str, Any] | None:
        """The response part to call ``call_id`` asked in ``round_``, or ``None``: the one with that
        id, else the next id-less one in order (a tool message that carries no call id, as
        OpenInference's litellm spans record them, answers the calls in the order they were
        asked), else, for a call with no id, the next one in order."""
        if self._by_round is None:
            self._by_round = self._trailing()
        entries = self._by_round.get(round_, ())
        for entry in entries:
            if not entry[2] and entry[0] == call_id:
                entry[2] = True
                return entry[1]
        for entry in entries:
            if not entry[2] and (not entry[0] or not call_id):
                entry[2] = True
                return entry[1]
        return self._first_by_id().get(call_id) if call_id else None


def _time_round(rounds: list[LlmRound], ends: list[int], sorted_ends: bool, start: int) -> int:
    if sorted_ends:
        return bisect_right(ends, start)
    best = 0
    for r in rounds:
        if r.span.end_ns <= start:
            best = r.round
    return best


def tool_calls(
    rounds: list[LlmRound], span_calls: list[SpanCall], rebuild: bool
) -> list[ToolCallRecord]:
    """The run's tool calls in the order they happened. ``rebuild``: also turn the ``tool_call``
    parts no span matched into tool calls (the run has no tool spans)."""
    requests = _requests(rounds)
    if not requests and not span_calls:
        return []
    answers = _Answers(rounds)
    by_id: dict[str, list[_Request]] = {}
    by_name: dict[str, list[_Request]] = {}
    for q in requests:
        if q.part["id"]:
            by_id.setdefault(q.part["id"], []).append(q)
        by_name.setdefault(q.part["name"], []).append(q)
    ends = [r.span.end_ns for r in rounds]
    sorted_ends = ends == sorted(ends)
    #: (time, place among the requests, place made, record): tool spans that start in the
    #: same instant (clocks of millisecond resolution) keep the order the model asked them in
    keyed: list[tuple[int, int, int, ToolCallRecord]] = []
    if len(span_calls) > 1:
        span_calls = sorted(span_calls, key=_call_order)
    matched: list[tuple[SpanCall, int, _Request | None]] = []
    for call in span_calls:
        info = call.info
        if call.default_arguments is None and is_summary_span(info, by_id):
            continue  # no request asked for it and it ran nothing: a framework's summary span
        time_round = _time_round(rounds, ends, sorted_ends, call.start_ns)
        request = None
        if info.call_id and by_id and info.call_id not in by_id:
            # an id no request gave: the framework's own (OpenLIT writes LangChain's run id
            # as gen_ai.tool.call.id), not the model's call id; the request's id is
            info.call_id = ""
        if info.call_id:
            for q in by_id.get(info.call_id, ()):
                if not q.used:
                    request = q
                    break
        if request is None and info.name:
            # the oldest request for this tool not matched yet, if asked before the tool ran
            for q in by_name.get(info.name, ()):
                if q.used or (info.call_id and q.part["id"]):
                    continue
                if q.round <= max(time_round, 1):
                    request = q
                break
        if request is not None:
            request.used = True
        matched.append((call, time_round, request))
    # a span neither id nor name ties to a request (the instrumentation named it its own way:
    # "handoff to forecaster"; a sub-agent run by a tool that has no span, named after its
    # entry point): the one request of its round nothing else answered
    for index, (call, time_round, request) in enumerate(matched):
        if request is None and not call.info.call_id:
            left = [q for q in requests if not q.used and q.round == time_round]
            if len(left) == 1 and not any(
                r is None and c is not call and t == time_round for c, t, r in matched
            ):
                left[0].used = True
                call.info.name = left[0].part["name"] or call.info.name
                matched[index] = (call, time_round, left[0])
    for call, time_round, request in matched:
        info = call.info
        call_id = info.call_id
        arguments = info.arguments
        result = info.result
        round_ = time_round
        if request is not None:
            round_ = request.round
            call_id = call_id or request.part["id"]
            if arguments is None:
                arguments = arguments_dict(request.part["arguments"])
        if result is None and call_id:
            answer = answers.take(round_, call_id)
            if answer is not None:
                result = tool_output(answer["response"]).text
        if arguments is None:
            if info.fallback_arguments is not None:
                arguments = info.fallback_arguments
            else:
                arguments = call.default_arguments or {}
        record = build(
            ToolCallRecord,
            {
                "round": round_,
                "tool_name": info.name,
                "tool_call_id": call_id,
                "arguments": arguments,
                "result": result or "",
                "duration_ms": call.duration_ms,
                "error": call.error,
            },
        )
        place = request.index if request is not None else len(requests)
        keyed.append((call.start_ns, place, len(keyed), record))
    if rebuild:
        starts = {r.round: r.span.start_ns for r in rounds}
        for q in requests:
            if q.used:
                continue
            part = q.part
            answer = answers.take(q.round, part["id"])
            output = None if answer is None else tool_output(answer["response"])
            result = "" if output is None else output.text
            if output is not None and answer is not None and answer.get("status") == "error":
                output.error = True  # the message says the tool failed (is_error, status)
            next_start = starts.get(q.round + 1)
            gap = max(0, next_start - q.end_ns) / 1e6 if next_start is not None else 0.0
            record = build(
                ToolCallRecord,
                {
                    "round": q.round,
                    "tool_name": part["name"],
                    "tool_call_id": part["id"],
                    "arguments": arguments_dict(part["arguments"]),
                    "result": result,
                    "duration_ms": gap,
                    "error": (output.text or "error")
                    if output is not None and output.error
                    else (result_error(result) if result else None),
                },
            )
            keyed.append((q.end_ns, q.index, len(keyed), record))
    keyed.sort(key=_first_three)
    return [entry[3] for entry in keyed]
