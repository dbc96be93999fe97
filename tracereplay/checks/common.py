"""Small helpers shared by the built-in checks."""

from __future__ import annotations

from tracereplay.checks.subject import CheckSubject


def clip(text: str, limit: int = 80) -> str:
    """``text`` cut to ``limit`` characters (an ellipsis marks the cut), for explanations."""
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def expected_text(subject: CheckSubject) -> str | None:
    """The case's expected output, or None when nothing (or only whitespace) is expected."""
    expected = subject.case.expected_output
    if expected is None or not expected.strip():
        return None
    return expected


NOTHING_EXPECTED = "nothing is expected: the case has no expected_output"
