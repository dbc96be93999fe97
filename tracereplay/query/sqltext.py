"""Lexical helpers for SQL text: where a statement really ends, ignoring quotes and comments."""

from __future__ import annotations


def _significant_end(text: str) -> int | None:
    """Index just past the last character outside comments that is not blank; None when a
    string, quoted name or block comment is left open."""
    i, n = 0, len(text)
    end = 0
    while i < n:
        c = text[i]
        if c in "'\"":
            close = i + 1
            while True:
                close = text.find(c, close)
                if close == -1:
                    return None
                if close + 1 < n and text[close + 1] == c:  # a doubled quote inside
                    close += 2
                    continue
                break
            i = end = close + 1
            continue
        if text.startswith("--", i):
            nl = text.find("\n", i)
            i = n if nl == -1 else nl + 1
            continue
        if text.startswith("/*", i):
            close = text.find("*/", i + 2)
            if close == -1:
                return None
            i = close + 2
            continue
        i += 1
        if not c.isspace():
            end = i
    return end


def statement_complete(text: str) -> bool:
    """True when ``text`` ends with ``;`` outside quotes and comments (trailing blanks and
    comments aside): a prompt buffer holding whole statements, ready to run."""
    end = _significant_end(text)
    return end is not None and end > 0 and text[end - 1] == ";"


def strip_terminator(text: str) -> str:
    """``text`` without what follows its last significant character, and without trailing
    ``;`` (DuckDB embeds a relation's text in larger queries, where they do not parse)."""
    while True:
        end = _significant_end(text)
        if end is None:
            return text
        text = text[:end]
        if not text.endswith(";"):
            return text
        text = text[:-1]
