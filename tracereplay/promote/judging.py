"""Which of a case's checks will really judge it, when it expects nothing.

A case promoted from a failed run (or any run promoted without an expected output) has no
expected output and, unless given, no expected tool calls. Some built-in checks then judge
nothing: ``containsExpected`` is skipped, ``toolCallArgsMatch`` has no call to compare, while
``exact``, ``fuzzy`` and ``similarity`` fail whatever the answer. ``promote`` says so (and how to
give an expected output) instead of leaving a case that passes with almost any answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from tracereplay.models import CheckSpec, EvalCase

#: kind -> what it does when the case expects no output
_NO_OUTPUT = {
    "containsExpected": "is skipped (nothing is expected)",
    "exact": "fails on any answer (nothing is expected)",
    "fuzzy": "fails on any answer (nothing is expected)",
    "similarity": "fails on any answer (nothing is expected)",
}
#: kind -> what it does when the case expects no tool call
_NO_CALLS = {
    "toolCallArgsMatch": "passes (no expected tool calls)",
    "toolTrajectory": "compares with no expected tool calls",
}


@dataclass
class Judging:
    """The checks of a case that judge it, and those that cannot, with what they do instead."""

    expects_output: bool
    expects_calls: bool
    judging: list[str] = field(default_factory=list)
    idle: list[tuple[str, str]] = field(default_factory=list)  # (label, what it does)

    @property
    def expects_nothing(self) -> bool:
        return not self.expects_output or not self.expects_calls


def judging(case: EvalCase, checks: Sequence[CheckSpec]) -> Judging:
    """Sort ``checks`` (the case's own, else the suite's) by whether they judge ``case``."""
    has_output = bool((case.expected_output or "").strip())
    has_calls = bool(case.expected_tool_calls)
    out = Judging(expects_output=has_output, expects_calls=has_calls)
    for spec in case.checks if case.checks is not None else checks:
        idle = None if has_output else _NO_OUTPUT.get(spec.kind)
        if idle is None and not has_calls:
            idle = _NO_CALLS.get(spec.kind)
        if idle is None:
            out.judging.append(spec.label)
        else:
            out.idle.append((spec.label, idle))
    return out


def missing_text(j: Judging) -> str:
    """``no expected output and no expected tool calls`` (what the case lacks)."""
    parts = []
    if not j.expects_output:
        parts.append("no expected output")
    if not j.expects_calls:
        parts.append("no expected tool calls")
    return " and ".join(parts)


def judging_note(j: Judging, them: str = "it") -> str | None:
    """One sentence: which checks will judge, which will not and why (None: every one
    judges)."""
    if not j.idle:
        return None
    who = ", ".join(j.judging) if j.judging else "no check"
    idle = ", ".join(f"{label} {what}" for label, what in j.idle)
    return f"only {who} will judge {them}: {idle}"
