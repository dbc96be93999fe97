"""A one-pass reader for the YAML that suite files are made of, many times faster than PyYAML.

PyYAML builds a node per value and resolves every scalar in Python: a 10,000-case suite file
takes seconds. Suite files are block mappings and sequences of plain, quoted and ``|`` text
scalars (what ``suite export`` writes, and what people write by hand); this reader parses that
shape line by line and resolves a plain scalar only when its first character could make it
something other than text (PyYAML's own resolver decides then, so the values are the same).

Anything else (anchors, aliases, tags, flow collections other than ``[]`` and ``{}``, ``>``
blocks, multi-line quoted or plain scalars, a key given twice, comments after a value, tabs in
indentation...) makes ``load`` return ``None``: the caller reads the file with PyYAML, which
also reports the problem with its line. ``load`` never returns something PyYAML would not.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import yaml

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_RESOLVER = yaml.resolver.Resolver()
_CONSTRUCTOR = yaml.constructor.SafeConstructor()
#: first characters with which a plain scalar may be something other than a string
_MAYBE_TYPED = frozenset(k for k in yaml.resolver.Resolver.yaml_implicit_resolvers if k)
_STR_TAG = "tag:yaml.org,2002:str"
#: a plain key (a name, possibly with spaces or dots) then ':' then the value or nothing
_KEY = re.compile(r"([^\s\-?:,\[\]{}#&*!|>'\"%@`][^:#]*?|\"[^\"\\]*\"|'[^']*')[ ]*:(?:[ ]+(.*))?$")
#: characters that start something this reader does not handle in a plain scalar
_INDICATORS = frozenset("[]{}#&*!|>'\"%@`,?:-")
#: text this reader leaves to PyYAML wherever it appears
_UNSUPPORTED = re.compile(r"[\t\r\x85\u2028\u2029\ufeff]")
_BLOCK_HEADER = re.compile(r"\|([+-]?)([1-9]?)([+-]?)$")


class _Unsupported(Exception):
    """Something outside the shapes this reader handles: PyYAML reads the file instead."""


def load(text: str) -> Any | None:
    """The data of a YAML document made of block mappings, sequences and simple scalars, or
    ``None`` when the text has anything else (then read it with PyYAML)."""
    if _UNSUPPORTED.search(text) or not text.endswith("\n"):
        return None
    try:
        return _Reader(text.split("\n")).document()
    except (_Unsupported, yaml.YAMLError, RecursionError):
        return None


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _blank(line: str) -> bool:
    stripped = line.strip(" ")
    return not stripped or stripped.startswith("#")


@lru_cache(maxsize=4096)
def _resolve(value: str) -> Any:
    """A plain scalar's value as PyYAML gives it (its implicit resolvers and constructors)."""
    tag = _RESOLVER.resolve(yaml.ScalarNode, value, (True, False))
    if tag == _STR_TAG:
        return value
    if tag == "tag:yaml.org,2002:timestamp":
        raise _Unsupported("timestamp")  # a datetime: leave it to PyYAML
    node = yaml.ScalarNode(tag, value)
    return _CONSTRUCTOR.construct_object(node, deep=True)


def _scalar(value: str) -> Any:
    """A one-line value: plain, single- or double-quoted, ``[]`` or ``{}``."""
    if value == "[]":
        return []
    if value == "{}":
        return {}
    first = value[0]
    if first == '"':
        if "\\" in value:  # escapes: the C parser decodes this one scalar
            result = yaml.load(value, Loader=_Loader)  # noqa: S506 (the safe C loader)
            if not isinstance(result, str):
                raise _Unsupported("double-quoted")
            return result
        if len(value) < 2 or not value.endswith('"') or '"' in value[1:-1]:
            raise _Unsupported("double-quoted")
        return value[1:-1]
    if first == "'":
        inner = value[1:-1]
        if len(value) < 2 or not value.endswith("'") or "'" in inner.replace("''", ""):
            raise _Unsupported("single-quoted")
        return inner.replace("''", "'")
    if first in _INDICATORS or ": " in value or " #" in value or value.endswith(":"):
        raise _Unsupported("plain")
    value = value.rstrip(" ")
    return _resolve(value) if first in _MAYBE_TYPED else value


class _Reader:
    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.i = 0

    def _next(self) -> int | None:
        """Index of the next line that is not blank or a comment (from ``self.i``)."""
        i = self.i
        while i < len(self.lines) and _blank(self.lines[i]):
            i += 1
        return i if i < len(self.lines) else None

    def document(self) -> Any:
        first = self._next()
        if first is None:
            raise _Unsupported("empty")
        line = self.lines[first]
        if _indent(line) != 0 or line.startswith(("---", "...", "%")):
            raise _Unsupported("document markers")
        self.i = first
        value = self._node(0)
        if self._next() is not None:
            raise _Unsupported("trailing text")
        return value

    def _node(self, indent: int) -> Any:
        """The block node at line ``self.i`` (already known to be indented ``indent``)."""
        content = self.lines[self.i][indent:]
        if content == "-" or content.startswith("- "):
            return self._sequence(indent)
        return self._mapping(indent)

    def _child(self, parent_indent: int, in_mapping: bool) -> Any:
        """The value of a key (or ``-``) with nothing after it: a nested block, or null."""
        nxt = self._next()
        if nxt is None:
            return None
        line = self.lines[nxt]
        ind = _indent(line)
        content = line[ind:]
        is_item = content == "-" or content.startswith("- ")
        if ind > parent_indent or (in_mapping and ind == parent_indent and is_item):
            self.i = nxt
            return self._node(ind)
        return None

    def _mapping(self, indent: int) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        while True:
            nxt = self._next()
            if nxt is None:
                return out
            line = self.lines[nxt]
            ind = _indent(line)
            if ind < indent:
                return out
            if ind > indent:
                raise _Unsupported("indentation")
            content = line[ind:]
            if content == "-" or content.startswith("- "):
                return out  # the end of an indentless sequence's item: the caller goes on
            match = _KEY.match(content)
            if match is None:
                raise _Unsupported("key")
            key = _scalar(match.group(1))
            if isinstance(key, (dict, list)) or key in out:
                raise _Unsupported("key")  # twice: PyYAML's pass reports it with its line
            value = match.group(2)
            self.i = nxt + 1
            if value is None or value.startswith("#"):
                if value is not None:
                    raise _Unsupported("comment")
                out[key] = self._child(indent, in_mapping=True)
            elif value.startswith("|"):
                out[key] = self._literal(value, indent)
            else:
                out[key] = _scalar(value)

    def _sequence(self, indent: int) -> list[Any]:
        out: list[Any] = []
        while True:
            nxt = self._next()
            if nxt is None:
                return out
            line = self.lines[nxt]
            ind = _indent(line)
            content = line[ind:]
            if ind != indent or not (content == "-" or content.startswith("- ")):
                if ind > indent:
                    raise _Unsupported("indentation")
                return out
            rest = content[1:]
            item = rest.lstrip(" ")
            if not item:
                self.i = nxt + 1
                out.append(self._child(indent, in_mapping=False))
                continue
            item_indent = ind + len(content) - len(item)
            if item.startswith("|"):
                self.i = nxt + 1
                out.append(self._literal(item, indent))
            elif item == "-" or item.startswith("- ") or _KEY.match(item):
                # a nested block starting on the item's line: read it as if on a line of its own
                self.lines[nxt] = " " * item_indent + item
                self.i = nxt
                out.append(self._node(item_indent))
            else:
                self.i = nxt + 1
                out.append(_scalar(item))

    def _literal(self, header: str, parent_indent: int) -> str:
        """A ``|`` block scalar (clip, ``-`` strip, ``+`` keep; an indentation digit)."""
        match = _BLOCK_HEADER.match(header.rstrip(" "))
        if match is None or (match.group(1) and match.group(3)):
            raise _Unsupported("block header")
        chomp = match.group(1) or match.group(3)
        explicit = int(match.group(2)) if match.group(2) else None
        lines = self.lines
        i = self.i
        if explicit is not None:
            block_indent = parent_indent + explicit
        else:
            j = i
            while j < len(lines) and not lines[j].strip(" "):
                j += 1
            if j == len(lines):
                block_indent = parent_indent + 1
            else:
                block_indent = _indent(lines[j])
                if any(len(lines[k]) > block_indent for k in range(i, j)):
                    raise _Unsupported("leading spaces")  # YAML's rule there is subtle
            if block_indent <= parent_indent:
                raise _Unsupported("empty block")
        body: list[str] = []
        while i < len(lines):
            line = lines[i]
            if line.strip(" "):
                if _indent(line) < block_indent:
                    break
                body.append(line[block_indent:])
            else:
                if len(line) > block_indent:
                    body.append(line[block_indent:])
                else:
                    body.append("")
            i += 1
        self.i = i
        # trailing empty lines: not content; the chomping indicator says what becomes of them
        end = len(body)
        while end and body[end - 1] == "":
            end -= 1
        trailing = len(body) - end
        if i == len(lines) and trailing:
            trailing -= 1  # the text's final newline ends the last line; it is no extra line
        text = "\n".join(body[:end])
        if chomp == "-":
            return text
        if not end:
            return "\n" * trailing if chomp == "+" else ""
        if chomp == "+":
            return text + "\n" + "\n" * trailing
        return text + "\n"
