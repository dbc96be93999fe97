"""Tool results against the recording: ``toolResultsMatch``, and the comparison a replay with
tools run for real (``--llm recorded --live-tools``) stores as tool-result drift.

Each call of the replay is paired with a recorded call of the source run: the first unused one
with the same tool name and equal arguments, else the next unused one of that name (its
arguments drifted). A pair's results are compared in one of three modes:

- ``exact``: the two texts are equal;
- ``json``: both are decoded when they are JSON, and equal as values (keys in any order,
  numbers by value: ``1 == 1.0``); text that is not JSON compares exactly;
- ``fuzzy``: a rapidfuzz ratio (0..1) of the two texts at least ``threshold``.

A call that failed compares as ``Error: <message>``, so a tool that now raises is drift too.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Annotated, Any, Literal

import orjson
from pydantic import Field
from rapidfuzz import fuzz

from tracereplay.checks.common import clip
from tracereplay.checks.kinds import Verdict, builtin_check
from tracereplay.checks.matching import values_match
from tracereplay.checks.subject import CheckSubject
from tracereplay.models import ToolCallRecord

ResultMode = Literal["exact", "json", "fuzzy"]
RESULT_MODES: tuple[str, ...] = ("exact", "json", "fuzzy")
#: lines of a result diff kept (both results are kept whole beside it)
DIFF_LINES = 40


def result_text(call: ToolCallRecord) -> str:
    """What a call gave back, as text: its result, or ``Error: <message>`` when it failed."""
    return f"Error: {call.error}" if call.error is not None else call.result


def _decoded(text: str) -> tuple[bool, Any]:
    try:
        return True, orjson.loads(text)
    except orjson.JSONDecodeError:
        return False, text


def results_similarity(recorded: str, live: str, mode: ResultMode = "json") -> float:
    """1.0 when the two results are the same in ``mode`` (0.0 when not), or the fuzzy ratio."""
    if mode == "fuzzy":
        return fuzz.ratio(recorded, live) / 100.0
    if mode == "exact" or recorded == live:
        return 1.0 if recorded == live else 0.0
    ok_a, a = _decoded(recorded.strip())
    ok_b, b = _decoded(live.strip())
    if ok_a and ok_b:
        return 1.0 if values_match(a, b) and values_match(b, a) else 0.0
    return 0.0


def _pretty(text: str) -> list[str]:
    ok, value = _decoded(text.strip())
    if ok and isinstance(value, (dict, list)):
        text = orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode()
    return text.splitlines() or [""]


def result_diff(recorded: str, live: str) -> str:
    """A unified diff (recorded -> live) of two results, JSON pretty-printed with sorted keys."""
    lines = list(
        difflib.unified_diff(_pretty(recorded), _pretty(live), "recorded", "live", n=1, lineterm="")
    )
    if len(lines) > DIFF_LINES:
        lines = [*lines[:DIFF_LINES], f"... ({len(lines) - DIFF_LINES} more diff lines)"]
    return "\n".join(lines)


def pair_calls(
    recorded: Sequence[ToolCallRecord], replayed: Sequence[ToolCallRecord]
) -> list[int | None]:
    """For each replayed call, the index of the recorded call it stands for (or None): the first
    unused one with the same name and equal arguments, else the next unused one of that name."""
    used = [False] * len(recorded)
    out: list[int | None] = []
    for call in replayed:
        same = [i for i, r in enumerate(recorded) if not used[i] and r.tool_name == call.tool_name]
        exact = next(
            (
                i
                for i in same
                if values_match(recorded[i].arguments, call.arguments)
                and values_match(call.arguments, recorded[i].arguments)
            ),
            None,
        )
        chosen = exact if exact is not None else (same[0] if same else None)
        if chosen is not None:
            used[chosen] = True
        out.append(chosen)
    return out


def first_change(diff: str, recorded: str, live: str) -> str:
    """``recorded X, got Y`` of the first changed line of a result diff (the whole results,
    clipped, when the diff has no such pair)."""
    lines = diff.splitlines()[2:]
    old = next((x[1:].strip() for x in lines if x.startswith("-")), None)
    new = next((x[1:].strip() for x in lines if x.startswith("+")), None)
    if old is None or new is None:
        old, new = recorded, live
    return f"recorded {clip(old, 60)!r}, got {clip(new, 60)!r}"


@builtin_check("toolResultsMatch")
def tool_results_match(
    subject: CheckSubject,
    mode: ResultMode = "json",
    threshold: Annotated[float, Field(ge=0.0, le=1.0)] = 0.9,
) -> Verdict:
    """Every tool result of a replay is the recorded one (``mode``: exact, json or fuzzy at
    ``threshold``); score = share of calls whose result matched. Meant for replays that run the
    tools for real (``--live-tools``); not a replay: nothing to compare, passes."""
    recorded = subject.recorded_tool_calls
    calls = list(subject.result.tool_calls)
    if recorded is None:
        return Verdict(True, None, "not a replay: no recorded tool results to compare")
    if not calls:
        return Verdict(True, 1.0, "no tool calls to compare")
    drifted: list[dict[str, Any]] = []
    for call, index in zip(calls, pair_calls(recorded, calls)):
        live = result_text(call)
        if index is None:
            drifted.append({"tool": call.tool_name, "live": live, "recorded": None, "diff": ""})
            continue
        was = result_text(recorded[index])
        similarity = results_similarity(was, live, mode)
        if similarity < (threshold if mode == "fuzzy" else 1.0):
            drifted.append(
                {
                    "tool": call.tool_name,
                    "recorded_position": index,
                    "similarity": round(similarity, 4),
                    "recorded": was,
                    "live": live,
                    "diff": result_diff(was, live),
                }
            )
    score = 1.0 - len(drifted) / len(calls)
    if not drifted:
        return Verdict(True, 1.0, f"{len(calls)} tool results match the recording ({mode})")
    first = drifted[0]
    why = (
        "no recorded call of that tool"
        if first["recorded"] is None
        else first_change(first["diff"], first["recorded"], first["live"])
    )
    return Verdict(
        False,
        score,
        f"{len(drifted)} of {len(calls)} tool results differ from the recording ({mode}); "
        f"first: {first['tool']}: {why}",
        {"mode": mode, "drifted": drifted},
    )
