"""Conversation checks: ``turnCount`` and ``toolCalledInSession`` judge a multi-turn case once, as
a whole (``CheckSubject.conversation()``: every turn; a one-question case is a conversation of
that one turn). ``llmJudge`` with ``over: conversation`` is the third (``judge.py``)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from tracereplay.checks.kinds import Verdict, builtin_check
from tracereplay.checks.matching import argument_changes, values_match
from tracereplay.checks.subject import CheckSubject, TranscriptTurn
from tracereplay.checks.tools import _names, _render
from tracereplay.models.evals import EvalExpectedToolCall


def _turns(numbers: list[int], limit: int = 8) -> str:
    """``turn 3`` / ``turns 1, 2, 4`` (the first ``limit`` of them)."""
    shown = ", ".join(str(n) for n in numbers[:limit]) + (", …" if len(numbers) > limit else "")
    return f"turn{'s' if len(numbers) != 1 else ''} {shown}"


def _times(n: int) -> str:
    return f"{n} time{'s' if n != 1 else ''}"


def answered(turn: TranscriptTurn) -> bool:
    """Whether the agent answered the turn: it did not fail and its response is not blank."""
    return not turn.failed and bool(turn.response.strip())


def _check_bounds(options: dict[str, Any]) -> None:
    low, high = options.get("min"), options.get("max")
    if low is None and high is None:
        raise ValueError("give 'min', 'max' or both (the bounds on the number of answered turns)")
    if low is not None and high is not None and low > high:
        raise ValueError(f"'min' ({low}) is greater than 'max' ({high})")


def _bounds(low: int | None, high: int | None) -> str:
    if low is not None and high is not None:
        return f"exactly {low} required" if low == high else f"{low} to {high} required"
    if low is not None:
        return f"at least {low} required"
    return f"at most {high} allowed"


@builtin_check("turnCount", validate=_check_bounds, conversation=True)
def turn_count(
    subject: CheckSubject,
    min: Annotated[int, Field(ge=0)] | None = None,
    max: Annotated[int, Field(ge=0)] | None = None,
) -> Verdict:
    """The number of turns the agent answered (not failed, a non-blank response) is within
    ``min``..``max`` (at least one bound); score 1.0 inside, else how close it came."""
    turns = subject.conversation()
    done = [t.number for t in turns if answered(t)]
    failed = [t.number for t in turns if t.failed]
    blank = [t.number for t in turns if not t.failed and not t.response.strip()]
    n = len(done)
    too_few = min is not None and n < min
    too_many = max is not None and n > max
    if too_few:
        score = n / min if min else 0.0
    elif too_many:
        score = max / n
    else:
        score = 1.0
    explanation = f"{n} of {len(turns)} turn{'s' if len(turns) != 1 else ''} answered"
    missed = [f"{_turns(failed)} failed"] if failed else []
    missed += [f"{_turns(blank)} answered nothing"] if blank else []
    if missed:
        explanation += f" ({'; '.join(missed)})"
    explanation += f"; {_bounds(min, max)}"
    return Verdict(
        not (too_few or too_many),
        score,
        explanation,
        {
            "answered": n,
            "turns": len(turns),
            "failed": failed,
            "unanswered": blank,
            "min": min,
            "max": max,
        },
    )


@builtin_check("toolCalledInSession", conversation=True)
def tool_called_in_session(
    subject: CheckSubject,
    tool: Annotated[str, Field(min_length=1)],
    arguments: dict[str, Any] | None = None,
    times: Annotated[int, Field(ge=1)] = 1,
) -> Verdict:
    """The tool was called at least ``times`` times across all turns of the conversation (with
    ``arguments`` as a subset of its arguments, when given, compared as ``toolCallArgsMatch``
    does); score = the share of ``times`` reached."""
    turns = subject.conversation()
    label = _render(EvalExpectedToolCall(name=tool, arguments=arguments))
    named = [(t.number, tc) for t in turns for tc in t.tool_calls if tc.tool_name == tool]
    hits = [
        number for number, tc in named if arguments is None or values_match(arguments, tc.arguments)
    ]
    in_turns = sorted(set(hits))
    passed = len(hits) >= times
    details: dict[str, Any] = {"calls": len(hits), "turns": in_turns, "times": times}
    need = f"at least {_times(times)} required"
    if hits:
        explanation = f"{label} called {_times(len(hits))} (in {_turns(in_turns)}); {need}"
    elif named:
        named_turns = sorted({number for number, _ in named})
        closest = min(
            (argument_changes(arguments or {}, tc.arguments, extra=False) for _, tc in named),
            key=len,
        )
        details["differences"] = closest
        explanation = (
            f"{tool} called {_times(len(named))} (in {_turns(named_turns)}), never as {label}: "
            + "; ".join(closest[:3])
        )
    else:
        others = [f"{tc.tool_name} (turn {t.number})" for t in turns for tc in t.tool_calls]
        details["called"] = [tc.tool_name for t in turns for tc in t.tool_calls]
        where = f"in {len(turns)} turn{'s' if len(turns) != 1 else ''}"
        explanation = f"{tool} never called {where}; " + (
            f"called instead: {_names(others)}" if others else "no tool was called"
        )
    return Verdict(passed, min(len(hits), times) / times, explanation, details)
