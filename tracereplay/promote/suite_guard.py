"""Limits on what a suite file may be, checked before its data is built or used.

Suite files hold plain data: a file that is built to hurt (a "billion laughs" of YAML aliases,
YAML tags asking for Python objects, values nested thousands deep) is refused in well under a
second, in bounded memory, with one problem that names its line, never an internal error.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # PyYAML's nodes are checked only when the file could need it (yaml_load)
    import yaml

#: deepest nesting of mappings and lists a suite file may have (a real one stays under ~12;
#: DuckDB's JSON and orjson refuse a few hundred)
MAX_DEPTH = 64
#: values a file may hold once its YAML aliases are expanded, beyond ten times those it writes
ALIAS_BUDGET = 100_000
#: the tags plain YAML data has (what ``yaml.SafeLoader`` builds); any other is refused
_PLAIN_TAGS = frozenset(
    f"tag:yaml.org,2002:{name}"
    for name in (
        "str", "int", "float", "bool", "null", "seq", "map", "timestamp", "binary", "merge",
        "omap", "pairs", "set", "value",
    )
)  # fmt: skip
_BRACKETS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


class GuardProblem(Exception):
    """What is wrong with the file, and the line (1-based) when known."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


def check_nodes(root: yaml.Node) -> None:
    """Refuse a composed YAML document with tags other than plain data, nesting past
    ``MAX_DEPTH``, aliases that refer to themselves, or aliases that expand to more values than
    ``ALIAS_BUDGET`` allows. Visits each distinct node once (never expands an alias)."""
    expanded: dict[int, int] = {}  # node id -> values it stands for, aliases expanded
    depth_of: dict[int, int] = {}  # node id -> nesting below it, aliases followed
    visiting: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            visiting.discard(key)
            kids = _children(node)
            expanded[key] = 1 + sum(expanded[id(k)] for k in kids)
            depth_of[key] = 1 + max((depth_of[id(k)] for k in kids), default=0)
            if depth_of[key] > MAX_DEPTH:
                raise GuardProblem(
                    f"values are nested more than {MAX_DEPTH} levels deep", _line(node)
                )
            continue
        if key in expanded:
            continue
        if key in visiting:
            raise GuardProblem("a YAML alias refers to itself", _line(node))
        if node.tag not in _PLAIN_TAGS:
            raise GuardProblem(
                f"YAML tag {node.tag.replace('tag:yaml.org,2002:', '!!')!r} is not allowed"
                " (suite files hold plain data)",
                _line(node),
            )
        visiting.add(key)
        stack.append((node, True))
        if len(visiting) > MAX_DEPTH + 1:
            raise GuardProblem(f"values are nested more than {MAX_DEPTH} levels deep", _line(node))
        stack.extend((k, False) for k in _children(node) if id(k) not in expanded)
    total = expanded[id(root)]
    if total > 10 * len(expanded) + ALIAS_BUDGET:
        raise GuardProblem(
            f"YAML aliases expand this file to {total:,} values (a 'billion laughs'?);"
            " write the values out instead",
            _line(root),
        )


def _children(node: yaml.Node) -> list[yaml.Node]:
    import yaml

    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _line(node: yaml.Node) -> int | None:
    mark = getattr(node, "start_mark", None)
    return mark.line + 1 if mark is not None else None


def check_depth(data: Any) -> list[int | str] | None:
    """The path to a value nested past ``MAX_DEPTH`` in plain (tree-shaped) data, else None.
    Walks the containers level by level, without recursion."""
    if data.__class__ is not dict and data.__class__ is not list:
        return None
    level = [data]
    depth = 0
    while level:
        depth += 1
        if depth > MAX_DEPTH:
            return _deep_path(data)
        below: list[Any] = []
        append = below.append
        for value in level:
            for v in value.values() if value.__class__ is dict else value:
                cls = v.__class__
                if cls is dict or cls is list:
                    append(v)
        level = below
    return None


def _deep_path(data: Any) -> list[int | str]:
    """A path (at most ``MAX_DEPTH`` long) down to the deepest container (found depth-first)."""
    path: list[int | str] = []
    value = data
    while len(path) < MAX_DEPTH:
        items = value.items() if value.__class__ is dict else enumerate(value)
        nested = [(k, v) for k, v in items if v.__class__ in (dict, list)]
        if not nested:
            break
        key, value = max(nested, key=lambda kv: _height(kv[1]))
        path.append(key)
    return path


def _height(value: Any) -> int:
    height = 0
    level = [value]
    while level:
        height += 1
        below = []
        for v in level:
            items = v.values() if v.__class__ is dict else v
            below.extend(x for x in items if x.__class__ in (dict, list))
        level = below
    return height


def deep_line(text: str) -> int | None:
    """The line where brackets in JSON (or flow YAML) text first nest past ``MAX_DEPTH``."""
    depth = 0
    for match in _BRACKETS.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return text.count("\n", 0, match.start()) + 1
        elif token in "]}":
            depth -= 1
    return None
