"""Checks on the tool calls: toolCalled, toolCallsPresent, toolCallArgsMatch, toolTrajectory,
noToolErrors."""

from __future__ import annotations

from collections import Counter
from typing import Annotated, Any, Literal

from pydantic import Field

from tracereplay.checks.batch import BatchVerdicts, SubjectBatch
from tracereplay.checks.common import clip
from tracereplay.checks.kinds import Verdict, batch_form, builtin_check
from tracereplay.checks.matching import argument_changes, max_matching, values_match
from tracereplay.checks.subject import CheckSubject
from tracereplay.models.evals import EvalExpectedToolCall


def _names(names: list[str], limit: int = 8) -> str:
    shown = ", ".join(names[:limit])
    return f"[{shown}{', …' if len(names) > limit else ''}]"


@builtin_check("toolCalled")
def tool_called(
    subject: CheckSubject,
    tools: Annotated[list[str], Field(min_length=1)],
    mode: Literal["all", "any"] = "all",
) -> Verdict:
    """All (or any) of the named tools were called at least once; score = fraction called."""
    called = {tc.tool_name for tc in subject.result.tool_calls}
    hit = [t for t in tools if t in called]
    missing = [t for t in tools if t not in called]
    passed = not missing if mode == "all" else bool(hit)
    explanation = f"{len(hit)} of {len(tools)} tools called"
    if missing:
        explanation += f"; not called: {_names(missing)}"
    return Verdict(passed, len(hit) / len(tools), explanation, {"called": hit, "missing": missing})


@builtin_check("toolCallsPresent")
def tool_calls_present(subject: CheckSubject) -> Verdict:
    """The agent made at least one tool call."""
    n = len(subject.result.tool_calls)
    return Verdict(n > 0, None, f"{n} tool call{'s' if n != 1 else ''} made", {"count": n})


def _render(call: EvalExpectedToolCall) -> str:
    if call.arguments is None:
        return call.name
    args = ", ".join(f"{k}={clip(repr(v), 30)}" for k, v in call.arguments.items())
    return clip(f"{call.name}({args})", 120)


def _assignment(
    expected: list[tuple[str, dict[str, Any] | None]], actual: list[tuple[str, Any]]
) -> list[int | None]:
    """For each expected ``(name, arguments)``, the index of the distinct actual ``(name,
    arguments)`` matched to it (a maximum matching), or None."""
    adjacent: list[list[int]] = []
    for name, want in expected:
        adjacent.append(
            [
                j
                for j, (got, args) in enumerate(actual)
                if got == name and (want is None or values_match(want, args))
            ]
        )
    if len(adjacent) == 1:
        row = adjacent[0]
        return [row[0] if row else None]
    return max_matching(adjacent, len(actual))


@builtin_check("toolCallArgsMatch")
def tool_call_args_match(subject: CheckSubject) -> Verdict:
    """Every expected tool call is matched by a distinct actual call of that name whose
    arguments contain the expected ones; an empty expectation passes."""
    expected = subject.case.expected_tool_calls
    if not expected:
        return Verdict(True, 1.0, "no tool calls expected")
    actual = subject.result.tool_calls
    assignment = _assignment(
        [(e.name, e.arguments) for e in expected], [(tc.tool_name, tc.arguments) for tc in actual]
    )
    matched = sum(1 for a in assignment if a is not None)
    if matched == len(expected):
        return Verdict(
            True,
            1.0,
            f"all {matched} expected tool calls matched",
            {"matched": [[i, j] for i, j in enumerate(assignment)]},
        )
    unmatched: list[dict[str, Any]] = []
    reasons: list[str] = []
    for i, (exp, j) in enumerate(zip(expected, assignment)):
        if j is not None:
            continue
        same_name = [tc for tc in actual if tc.tool_name == exp.name]
        entry: dict[str, Any] = {"index": i, "name": exp.name, "arguments": exp.arguments}
        if not same_name:
            reasons.append(f"{_render(exp)}: never called")
        else:
            diffs = min(
                (
                    argument_changes(exp.arguments or {}, tc.arguments, extra=False)
                    for tc in same_name
                ),
                key=len,
            )
            entry["differences"] = diffs
            reasons.append(
                f"{_render(exp)}: "
                + (
                    "; ".join(diffs[:3])
                    if diffs
                    else "its matching calls are taken by other expected calls"
                )
            )
        unmatched.append(entry)
    return Verdict(
        False,
        matched / len(expected),
        f"{matched} of {len(expected)} expected tool calls matched; " + " | ".join(reasons[:3]),
        {
            "matched": [[i, j] for i, j in enumerate(assignment) if j is not None],
            "unmatched": unmatched,
        },
    )


def _first_match(expected: dict[str, Any], actual: list[dict[str, Any]]) -> int | None:
    """The first actual call matching one expected call (``_assignment`` for one call)."""
    name, want = expected["name"], expected.get("arguments")
    for j, tc in enumerate(actual):
        if tc["tool_name"] == name and (
            want is None or values_match(want, tc.get("arguments", {}))
        ):
            return j
    return None


@batch_form("toolCallArgsMatch")
def _tool_call_args_match_batch(batch: SubjectBatch) -> BatchVerdicts:
    """The rows where every expected call is matched (the others are left to the scalar check,
    which explains what did not match)."""
    passed: list[bool | None] = []
    explanation: list[str] = []
    details: list[dict[str, Any]] = []
    for expected, actual in zip(batch.expected_tool_calls(), batch.tool_calls()):
        if not expected:
            passed.append(True)
            explanation.append("no tool calls expected")
            details.append({})
            continue
        if len(expected) == 1:
            j = _first_match(expected[0], actual)
            if j is None:
                passed.append(None)
                explanation.append("")
                details.append({})
            else:
                passed.append(True)
                explanation.append("all 1 expected tool calls matched")
                details.append({"matched": [[0, j]]})
            continue
        assignment = _assignment(
            [(e["name"], e.get("arguments")) for e in expected],
            [(tc["tool_name"], tc.get("arguments", {})) for tc in actual],
        )
        if None in assignment:
            passed.append(None)
            explanation.append("")
            details.append({})
        else:
            passed.append(True)
            explanation.append(f"all {len(assignment)} expected tool calls matched")
            details.append({"matched": [[i, j] for i, j in enumerate(assignment)]})
    return BatchVerdicts(passed, [1.0] * len(passed), explanation, details)


@batch_form("toolCallsPresent")
def _tool_calls_present_batch(batch: SubjectBatch) -> BatchVerdicts:
    counts = [len(calls) for calls in batch.tool_calls()]
    return BatchVerdicts(
        [n > 0 for n in counts],
        [1.0 if n > 0 else 0.0 for n in counts],
        [f"{n} tool call{'s' if n != 1 else ''} made" for n in counts],
        [{"count": n} for n in counts],
    )


def _lcs(a: list[str], b: list[str]) -> int:
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def _covered(want: list[str], have: list[str]) -> int:
    """How many of ``want`` (a multiset) ``have`` contains."""
    return sum((Counter(want) & Counter(have)).values())


TrajectoryMode = Literal["exact", "in_order", "any_order", "subset", "superset"]


@builtin_check("toolTrajectory")
def tool_trajectory(subject: CheckSubject, mode: TrajectoryMode = "exact") -> Verdict:
    """The sequence of tool names against the case's expected tool calls.

    exact: same names in the same order; in_order: the expected names appear in order, other
    calls allowed between; any_order: the same names in any order (as multisets); subset: every
    actual call is an expected one; superset: every expected call was made (extras allowed).
    """
    want = [c.name for c in subject.case.expected_tool_calls]
    got = [tc.tool_name for tc in subject.result.tool_calls]
    if mode == "exact":
        passed = got == want
        longest = max(len(want), len(got))
        score = 1.0 if passed else (_lcs(want, got) / longest if longest else 1.0)
    elif mode == "in_order":
        common = _lcs(want, got)
        passed = common == len(want)
        score = common / len(want) if want else 1.0
    elif mode == "any_order":
        passed = Counter(want) == Counter(got)
        longest = max(len(want), len(got))
        score = 1.0 if passed else _covered(want, got) / longest
    elif mode == "subset":
        inside = _covered(got, want)
        passed = inside == len(got)
        score = inside / len(got) if got else 1.0
    else:  # superset
        inside = _covered(want, got)
        passed = inside == len(want)
        score = inside / len(want) if want else 1.0
    return Verdict(
        passed,
        score,
        f"{mode}: expected {_names(want)}, got {_names(got)}",
        {"mode": mode, "expected": want, "actual": got},
    )


@builtin_check("noToolErrors")
def no_tool_errors(subject: CheckSubject) -> Verdict:
    """No tool call ended in an error; score = fraction of calls without error."""
    calls = subject.result.tool_calls
    failed = [tc for tc in calls if tc.error is not None]
    if not failed:
        return Verdict(True, 1.0, f"{len(calls)} tool calls, none failed")
    first = failed[0]
    return Verdict(
        False,
        1.0 - len(failed) / len(calls),
        f"{len(failed)} of {len(calls)} tool calls failed; first: "
        f"{first.tool_name}: {clip(first.error or '', 80)}",
        {"failed": [{"tool": tc.tool_name, "error": tc.error} for tc in failed]},
    )


@batch_form("noToolErrors")
def _no_tool_errors_batch(batch: SubjectBatch) -> BatchVerdicts:
    """The rows without a failed call (the others are left to the scalar check)."""
    passed: list[bool | None] = []
    explanation: list[str] = []
    for calls in batch.tool_calls():
        if any(tc.get("error") is not None for tc in calls):
            passed.append(None)
            explanation.append("")
        else:
            passed.append(True)
            explanation.append(f"{len(calls)} tool calls, none failed")
    return BatchVerdicts(passed, [1.0] * batch.n, explanation, [{} for _ in range(batch.n)])
