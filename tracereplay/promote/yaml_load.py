"""Suite-file YAML read by yaml-rs, a YAML 1.2 parser written in Rust (PyPI ``yaml-rs``).

PyYAML builds a Python node per value and resolves every scalar in Python, slow for a big
suite file. yaml-rs parses the whole YAML 1.2 language (flow and block collections,
every scalar style, anchors and aliases, complex keys) into Python values in one Rust pass
(``benchmarks/RESULTS.md``, "suite import"). Scalars follow the YAML 1.2 core schema: ``yes``/``no``/``on``/``off``
are text, timestamps stay text (``parse_datetime=False``: pydantic reads them), a key given
twice is an error.

yaml-rs builds data, not nodes: what the suite guard checks on PyYAML's nodes (tags other than
plain data, aliases that expand past the budget or refer to themselves, several documents) is
checked there whenever the text could hold it (``needs_node_check``: a ``!`` or ``&`` starting
a token, a document marker). A text yaml-rs refuses is handed to PyYAML too, which reports the
problem with its line the way suite files always did (``syntax_problem`` is the fallback).
"""

from __future__ import annotations

import re
from typing import Any

import yaml_rs

#: what may stand before a tag (``!x``) or an anchor (``&x``) that starts a token
_TOKEN_START = frozenset(" \t\r\n[]{},:?-")
#: a document marker (``---`` or ``...``, alone or before a space) on a line after the first
_DOCUMENT_MARKER = re.compile(r"\n(?:---|\.\.\.)(?:\s|$)")
_LINE = re.compile(r"\bat line (\d+)")


class YamlSyntaxError(ValueError):
    """yaml-rs refused the text: its reason (one line) and the line (1-based) when it says."""

    def __init__(self, reason: str, line: int | None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.line = line


def load(text: str) -> Any:
    """The data of one YAML document (``None`` for an empty one); ``YamlSyntaxError`` when the
    text is not valid YAML 1.2 (a key given twice included)."""
    try:
        return yaml_rs.loads(text.removeprefix("\ufeff"), parse_datetime=False)
    except yaml_rs.YAMLDecodeError as exc:
        raise syntax_error(str(exc)) from None
    except (ValueError, TypeError, RecursionError) as exc:  # e.g. an unhashable complex key
        raise YamlSyntaxError(" ".join(str(exc).split()), None) from None


def syntax_error(message: str) -> YamlSyntaxError:
    """yaml-rs's multi-line message (position, source excerpt, reason) as reason and line."""
    lines = [line for line in message.splitlines() if line.strip()]
    match = _LINE.search(lines[0]) if lines else None
    reason = lines[-1].strip() if lines else "not valid YAML"
    if match is None:
        reason = " ".join(message.split())
    return YamlSyntaxError(reason, int(match.group(1)) if match else None)


def needs_node_check(text: str) -> bool:
    """Whether the text could hold a tag, an anchor (so aliases) or several documents: then the
    suite guard checks PyYAML's nodes of it too. Every such text matches (and a few more,
    which only costs the check); ``str.find`` skips the rest of the text at C speed."""
    for mark in "!&":
        at = text.find(mark)
        while at != -1:
            after = text[at + 1 : at + 2]
            if (at == 0 or text[at - 1] in _TOKEN_START) and after and not after.isspace():
                return True
            at = text.find(mark, at + 1)
    return text.startswith(("---", "...")) or _DOCUMENT_MARKER.search(text) is not None
