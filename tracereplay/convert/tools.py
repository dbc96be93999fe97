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
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from typing import Any

from tracereplay.convert.info import LlmInfo, ToolInfo
from tracereplay.convert.records import construct
from tracereplay.convert.values import arguments_dict, as_text, decoded
from tracereplay.models.run import ToolCallRecord


@dataclass(slots=True)
class LlmRound:
    """A counted LLM call of a run: its 1-based round, times and extracted call."""

    round: int
    start_ns: int
    end_ns: int
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
    seq: int
    end_ns: int
    part: dict[str, Any]
    used: bool = False


def result_error(result: str) -> str | None:
    """``result`` when it reads as a tool error (``error: ...`` or ``{"error": ...}``)."""
    text = result.lstrip()
    head = text[:6].lower()
    if head.startswith("error") and head[5:6] in (":", " ", ""):
        return text
    if text.startswith("{") and '"error"' in text:
        value = decoded(text)
        if isinstance(value, dict) and value.get("error"):
            return as_text(value["error"])
    return None


def _requests(rounds: list[LlmRound]) -> list[_Request]:
    out = []
    for r in rounds:
        for message in r.info.output_messages:
            for part in message["parts"]:
                if part.get("type") == "tool_call":
                    out.append(_Request(r.round, len(out), r.end_ns, part))
    return out


def _responses(rounds: list[LlmRound]) -> tuple[dict[str, Any], dict[int, list[Any]]]:
    """Tool responses by call id, and the id-less ones answering each round (in order)."""
    by_id: dict[str, Any] = {}
    idless: dict[int, list[Any]] = {}
    for r in rounds:
        trailing: list[Any] = []
        for message in r.info.input_messages:
            for part in message["parts"]:
                kind = part.get("type")
                if kind == "tool_call_response":
                    call_id = part["id"]
                    if call_id:
                        by_id.setdefault(call_id, part["response"])
                    else:
                        trailing.append(part["response"])
                elif kind == "tool_call":
                    trailing = []  # responses after the last assistant tool-call message
        if trailing and r.round > 1:
            idless[r.round - 1] = trailing
    return by_id, idless


def _time_round(rounds: list[LlmRound], ends: list[int], sorted_ends: bool, start: int) -> int:
    if sorted_ends:
        return bisect_right(ends, start)
    best = 0
    for r in rounds:
        if r.end_ns <= start:
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
    responses, idless = _responses(rounds) if requests else ({}, {})
    by_id = {q.part["id"]: q for q in requests if q.part["id"]}
    ends = [r.end_ns for r in rounds]
    sorted_ends = all(a <= b for a, b in zip(ends, ends[1:]))
    keyed: list[tuple[int, int, ToolCallRecord]] = []
    for call in sorted(span_calls, key=lambda c: (c.start_ns, c.span_id)):
        info = call.info
        time_round = _time_round(rounds, ends, sorted_ends, call.start_ns)
        request = by_id.get(info.call_id) if info.call_id else None
        if request is not None and request.used:
            request = None
        if request is None and info.name:
            for q in requests:
                if (
                    not q.used
                    and q.part["name"] == info.name
                    and q.round <= max(time_round, 1)
                    and not (info.call_id and q.part["id"])
                ):
                    request = q
                    break
        call_id = info.call_id
        arguments = info.arguments
        result = info.result
        round_ = time_round
        if request is not None:
            request.used = True
            round_ = request.round
            call_id = call_id or request.part["id"]
            if arguments is None:
                arguments = arguments_dict(request.part["arguments"])
        if result is None and call_id and call_id in responses:
            result = as_text(responses[call_id])
        if arguments is None:
            arguments = call.default_arguments or {}
        record = construct(
            ToolCallRecord,
            round=round_,
            tool_name=info.name,
            tool_call_id=call_id,
            arguments=arguments,
            result=result or "",
            duration_ms=call.duration_ms,
            error=call.error,
        )
        keyed.append((call.start_ns, len(keyed), record))
    if rebuild:
        starts = {r.round: r.start_ns for r in rounds}
        for q in requests:
            if q.used:
                continue
            part = q.part
            if part["id"]:
                response = responses.get(part["id"])
            else:
                pending = idless.get(q.round)
                response = pending.pop(0) if pending else None
            result = "" if response is None else as_text(response)
            next_start = starts.get(q.round + 1)
            gap = max(0, next_start - q.end_ns) / 1e6 if next_start is not None else 0.0
            record = construct(
                ToolCallRecord,
                round=q.round,
                tool_name=part["name"],
                tool_call_id=part["id"],
                arguments=arguments_dict(part["arguments"]),
                result=result,
                duration_ms=gap,
                error=result_error(result) if result else None,
            )
            keyed.append((q.end_ns, len(keyed), record))
    keyed.sort(key=lambda k: (k[0], k[1]))
    return [record for _, _, record in keyed]
