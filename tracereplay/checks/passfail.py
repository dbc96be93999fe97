"""``passfail``: AgenticAssure 0.4.0's default scorer, with its exact semantics.

It passes when all of these hold (each part only when the case sets it):

- the response is non-empty once stripped;
- every expected tool name was called (order and extra calls ignored);
- for each expected call that has arguments: the *first* call of that tool has every expected
  key with an equal value (``==``; extra keys are fine);
- the expected output is a case-insensitive substring of the response.
"""

from __future__ import annotations

from tracereplay.checks.common import clip
from tracereplay.checks.kinds import Verdict, builtin_check
from tracereplay.checks.subject import CheckSubject


@builtin_check("passfail")
def passfail(subject: CheckSubject) -> Verdict:
    """AgenticAssure's passfail: output, expected tools, first-call arguments, expected text."""
    case, result = subject.case, subject.result
    failures: list[str] = []
    notes: list[str] = []
    if not result.response.strip():
        failures.append("agent produced empty output")
    else:
        notes.append("agent produced output")

    expected = case.expected_tool_calls
    if expected:
        called = {tc.tool_name for tc in result.tool_calls}
        missing = sorted({e.name for e in expected} - called)
        if missing:
            failures.append(f"missing tool calls: {', '.join(missing)}")
        else:
            notes.append("all expected tools were called")
        first: dict[str, dict] = {}
        for tc in result.tool_calls:
            first.setdefault(tc.tool_name, tc.arguments)
        for exp in expected:
            if exp.arguments is None:
                continue
            actual = first.get(exp.name)
            if actual is None:
                failures.append(f"tool {exp.name!r} was not called")
                continue
            for key, value in exp.arguments.items():
                if key not in actual:
                    failures.append(f"tool {exp.name!r} missing arg {key!r}")
                elif actual[key] != value:
                    failures.append(
                        f"tool {exp.name!r} arg {key!r}: expected {clip(repr(value), 40)}, "
                        f"got {clip(repr(actual[key]), 40)}"
                    )

    if case.expected_output is not None:
        if case.expected_output.lower() in result.response.lower():
            notes.append("expected output found in response")
        else:
            failures.append("expected output not found in response")

    passed = not failures
    return Verdict(
        passed,
        None,
        "; ".join(failures) if failures else "; ".join(notes),
        {"failures": failures},
    )
