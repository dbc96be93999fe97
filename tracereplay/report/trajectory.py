"""A case's tool trajectory: the recorded calls next to the replayed ones, the one way the UI's
eval-run and case pages and the HTML report compute it (``trajectory``).

The replayed side is the run the replay made, as the store holds it (``case_results.run_id``: a
replay run like any other, what ``tracereplay show`` prints): a replay that broke off half-way
(a call no recording answers ends the agent) left no scored result with its calls, but its run
has them. ``case_results.tool_calls`` is used only when that run is not in the store.

Pairs are made the way replay answers calls (``tracereplay.replay.answering.recorded_tools``): a replayed call
meets an unused recording of the same tool with equal arguments; failing that, the recording
its argument drift was reported against (``case_results.drift``); failing that, the next
unused recording of that tool (drift computed here). What is left on either side is shown as
"no recording" (replayed only) or "unused" (recorded only).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

from tracereplay.checks.matching import arg_differences, values_match
from tracereplay.models import ToolCallRecord
from tracereplay.replay.answering.recorded_tools import arguments_equal, normalize_arguments
from tracereplay.scoring.outcomes import ArgumentDrift, ReplayReport

_NOT_ANSWERED = "no recording answered this call"

StepStatus = Literal["match", "drift", "no_recording", "unused", "recorded"]


class Step(BaseModel):
    """One row of the trajectory table."""

    status: StepStatus
    recorded_position: int | None = None
    recorded: ToolCallRecord | None = None
    replayed_position: int | None = None
    replayed: ToolCallRecord | None = None
    differences: list[str] = Field(default_factory=list)
    drifted_keys: list[str] = Field(default_factory=list)
    answered: bool | None = None


def drifted_keys(recorded: dict[str, Any], replayed: dict[str, Any]) -> list[str]:
    """Top-level argument names whose values differ (or that only one side has)."""
    keys = list(recorded) + [k for k in replayed if k not in recorded]
    return [
        k
        for k in keys
        if k not in recorded
        or k not in replayed
        or not (values_match(recorded[k], replayed[k]) and values_match(replayed[k], recorded[k]))
    ]


def _differences(recorded: dict[str, Any], replayed: dict[str, Any]) -> list[str]:
    out = arg_differences(recorded, replayed)
    out += [f"{k}: not recorded" for k in replayed if k not in recorded]
    return out


def trajectory(
    calls: Mapping[str, Sequence[ToolCallRecord]],
    *,
    replay_mode: bool,
    run_id: str | None,
    source_run_id: str | None,
    report: ReplayReport | None = None,
    scored: Sequence[ToolCallRecord] = (),
) -> list[Step]:
    """One repetition's trajectory. ``calls``: ``store.runs.stored_tool_calls`` of the eval
    run's scored runs and source runs; ``run_id``/``source_run_id``/``report``/``scored``: its ``case_results`` row
    (``scored``, the calls of the result it scored, stands in when the run is not stored)."""
    made = calls.get(run_id or "", scored)
    recorded = calls.get(source_run_id or "", [])
    if not replay_mode:
        return recorded_only(made or recorded)
    return align(recorded, made, report)


class Summary(BaseModel):
    """A replay's tool calls counted from its trajectory."""

    answered: int = 0
    drift: int = 0
    unanswered: int = 0
    unused: int = 0


def summarize(steps: Sequence[Step]) -> Summary:
    """Answered from the recording (same call, or drift answered), with argument drift, left
    unanswered (no recording, or drift strict matching refused), recordings never called."""
    out = Summary()
    for s in steps:
        if s.status == "match" or (s.status == "drift" and s.answered):
            out.answered += 1
        if s.status == "drift":
            out.drift += 1
        if s.status == "no_recording" or (s.status == "drift" and s.answered is False):
            out.unanswered += 1
        if s.status == "unused":
            out.unused += 1
    return out


def recorded_only(calls: Sequence[ToolCallRecord]) -> list[Step]:
    """The trajectory of a recorded-mode case: the source run's calls, nothing replayed."""
    return [Step(status="recorded", recorded_position=i, recorded=c) for i, c in enumerate(calls)]


def align(
    recorded: Sequence[ToolCallRecord],
    replayed: Sequence[ToolCallRecord],
    report: ReplayReport | None = None,
) -> list[Step]:
    """Pair replayed calls with recorded ones (see the module docstring), replay order first,
    then the recordings the replay never used."""
    rec_args = [normalize_arguments(c.arguments) for c in recorded]
    used = [False] * len(recorded)
    drift = list(report.drift) if report else []
    steps: list[Step] = []
    for j, call in enumerate(replayed):
        args = normalize_arguments(call.arguments)
        same = [i for i, c in enumerate(recorded) if not used[i] and c.tool_name == call.tool_name]
        exact = next((i for i in same if arguments_equal(rec_args[i], args)), None)
        if exact is not None:
            used[exact] = True
            steps.append(
                Step(
                    status="match",
                    recorded_position=exact,
                    recorded=recorded[exact],
                    replayed_position=j,
                    replayed=call,
                    answered=True,
                )
            )
            continue
        reported = next(
            (
                d
                for d in drift
                if d.tool == call.tool_name
                and d.arguments == args
                and 0 <= d.recorded_position < len(recorded)
                and not used[d.recorded_position]
            ),
            None,
        )
        if reported is not None:
            drift.remove(reported)
            i = reported.recorded_position
            differences, answered = reported.differences, reported.answered
        elif same:
            i = same[0]
            differences, answered = _differences(rec_args[i], args), None
        else:
            steps.append(Step(status="no_recording", replayed_position=j, replayed=call))
            continue
        used[i] = True
        steps.append(
            Step(
                status="drift",
                recorded_position=i,
                recorded=recorded[i],
                replayed_position=j,
                replayed=call,
                differences=differences or _differences(rec_args[i], args),
                drifted_keys=drifted_keys(rec_args[i], args),
                answered=answered,
            )
        )
    steps.extend(_unrecorded_calls(recorded, replayed, report, drift, used))
    steps.extend(
        Step(status="unused", recorded_position=i, recorded=c)
        for i, c in enumerate(recorded)
        if not used[i]
    )
    return steps


def _unrecorded_calls(
    recorded: Sequence[ToolCallRecord],
    replayed: Sequence[ToolCallRecord],
    report: ReplayReport | None,
    drift: list[ArgumentDrift],
    used: list[bool],
) -> list[Step]:
    """Calls the replay report knows but the scored trajectory lacks (a call that raised
    ``no recording`` can end the agent before its run recorded it)."""
    if report is None:
        return []
    seen = [(c.tool_name, normalize_arguments(c.arguments)) for c in replayed]
    steps: list[Step] = []
    for d in drift:  # drift left unpaired: strict matching refused the call
        if (d.tool, d.arguments) in seen:
            seen.remove((d.tool, d.arguments))
            continue
        ok = 0 <= d.recorded_position < len(recorded) and not used[d.recorded_position]
        if ok:
            used[d.recorded_position] = True
        steps.append(
            Step(
                status="drift",
                recorded_position=d.recorded_position if ok else None,
                recorded=recorded[d.recorded_position] if ok else None,
                replayed=ToolCallRecord(round=0, tool_name=d.tool, arguments=d.arguments,
                                        error=None if d.answered else _NOT_ANSWERED),
                differences=d.differences,
                drifted_keys=drifted_keys(d.recorded_arguments, d.arguments),
                answered=d.answered,
            )
        )  # fmt: skip
        seen.append((d.tool, d.arguments))  # the same call is listed as unanswered too
    for u in report.unanswered:
        if (u.tool, u.arguments) in seen:
            seen.remove((u.tool, u.arguments))
            continue
        error = None if u.live else _NOT_ANSWERED
        steps.append(
            Step(
                status="no_recording",
                replayed=ToolCallRecord(
                    round=0, tool_name=u.tool, arguments=u.arguments, error=error
                ),
            )
        )
    return steps
