"""``one_line``: the one helper that puts an exception's message (or a text) on one line."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tracereplay.errors import one_line


def test_whitespace_and_lines_are_joined() -> None:
    assert one_line(ValueError("bad\n  value\tthere ")) == "bad value there"
    assert one_line("  ") == ""


def test_an_embedded_traceback_is_dropped() -> None:
    text = "boom\nTraceback (most recent call last):\n  File 'x.py', line 1\nValueError: boom"
    assert one_line(text) == "boom"
    assert (
        one_line("Traceback (most recent call last): x") == "Traceback (most recent call last): x"
    )


def test_a_caret_line_under_a_statement_is_dropped() -> None:
    exc = RuntimeError(
        'Parser Error: syntax error at or near "SELEC"\n\nLINE 1: SELEC 1\n        ^'
    )
    assert one_line(exc) == 'Parser Error: syntax error at or near "SELEC" LINE 1: SELEC 1'
    assert one_line("a ^ b") == "a ^ b"


@given(st.text())
def test_always_one_line(text: str) -> None:
    out = one_line(text)
    assert out == out.strip() and "  " not in out
    assert not any(ch in out for ch in "\n\r\t\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
