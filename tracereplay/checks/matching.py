"""Comparing tool-call arguments: subset matching with numbers compared by value.

Used by the ``toolCallArgsMatch`` check and available to replay's argument matching.

Rules of ``values_match(expected, actual)``:

- dict: every expected key is present in ``actual`` and its value matches (extra keys are fine),
  recursively at every level;
- list / tuple: same length, element by element;
- numbers: by value, ``1 == 1.0`` (a bool is not a number: ``True`` never matches ``1``);
- anything else: ``==`` (strings are compared exactly, ``None`` only matches ``None``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tracereplay.checks.common import clip


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def values_match(expected: Any, actual: Any) -> bool:
    """True when ``actual`` satisfies ``expected`` (see the module rules)."""
    # fast paths for the plain JSON types (same answers as the general rules below)
    cls = expected.__class__
    if cls is str and actual.__class__ is str:
        return expected == actual
    if cls is dict and actual.__class__ is dict:
        for key, want in expected.items():
            if key not in actual:
                return False
            got = actual[key]
            if want.__class__ is str and got.__class__ is str:
                if want != got:
                    return False
            elif not values_match(want, got):
                return False
        return True
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return False
        for key, want in expected.items():
            if key not in actual or not values_match(want, actual[key]):
                return False
        return True
    if isinstance(expected, (list, tuple)):
        if not isinstance(actual, (list, tuple)) or len(expected) != len(actual):
            return False
        return all(values_match(e, a) for e, a in zip(expected, actual))
    if isinstance(expected, bool) or isinstance(actual, bool):
        return isinstance(expected, bool) and isinstance(actual, bool) and expected == actual
    if _is_number(expected):
        return _is_number(actual) and expected == actual
    if _is_number(actual):
        return False
    return bool(expected == actual)


def arg_differences(expected: Any, actual: Any, path: str = "") -> list[str]:
    """Human-readable reasons ``actual`` does not satisfy ``expected`` (empty when it does)."""
    where = path or "arguments"
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [f"{where}: expected an object, got {clip(repr(actual), 40)}"]
        out: list[str] = []
        for key, want in expected.items():
            sub = f"{path}.{key}" if path else str(key)
            if key not in actual:
                out.append(f"{sub}: missing")
            else:
                out.extend(arg_differences(want, actual[key], sub))
        return out
    if isinstance(expected, (list, tuple)):
        if not isinstance(actual, (list, tuple)):
            return [f"{where}: expected a list, got {clip(repr(actual), 40)}"]
        if len(expected) != len(actual):
            return [f"{where}: expected {len(expected)} items, got {len(actual)}"]
        out = []
        for i, (e, a) in enumerate(zip(expected, actual)):
            out.extend(arg_differences(e, a, f"{path}[{i}]"))
        return out
    if values_match(expected, actual):
        return []
    return [f"{where}: expected {clip(repr(expected), 40)}, got {clip(repr(actual), 40)}"]


def argument_changes(
    recorded: dict[str, Any], passed: dict[str, Any], *, extra: bool = True
) -> list[str]:
    """How a call's arguments changed from a recorded (or expected) call's, one phrase each: a
    renamed argument (a recorded key gone and a new key with the same value: ``a renamed x``),
    then each other difference (``arg_differences``), then, with ``extra``, each argument the
    recording lacks."""
    gone = [k for k in recorded if k not in passed]
    new = [k for k in passed if k not in recorded]
    out: list[str] = []
    for old in list(gone):
        twin = next((k for k in new if values_match(recorded[old], passed[k])), None)
        if twin is not None:
            out.append(f"{old} renamed {twin}")
            gone.remove(old)
            new.remove(twin)
    out += [f"{k}: missing" for k in gone]
    out += [
        d for k in recorded if k in passed for d in arg_differences(recorded[k], passed[k], str(k))
    ]
    if extra:
        out += [f"{k}: not recorded (the call passed {clip(repr(passed[k]), 40)})" for k in new]
    return out


def max_matching(adjacent: Sequence[Sequence[int]], n_right: int) -> list[int | None]:
    """Maximum bipartite matching (augmenting paths): ``result[i]`` is the right index matched
    to left ``i``, or None. ``adjacent[i]`` lists the right indices left ``i`` may take."""
    owner: list[int | None] = [None] * n_right

    def augment(i: int, seen: list[bool]) -> bool:
        for j in adjacent[i]:
            if seen[j]:
                continue
            seen[j] = True
            o = owner[j]
            if o is None or augment(o, seen):
                owner[j] = i
                return True
        return False

    for i in range(len(adjacent)):
        if adjacent[i]:
            augment(i, [False] * n_right)
    result: list[int | None] = [None] * len(adjacent)
    for j, i in enumerate(owner):
        if i is not None:
            result[i] = j
    return result
