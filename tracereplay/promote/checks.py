"""Check definitions of a suite: the defaults, and validating a list of them."""

from __future__ import annotations

from collections.abc import Sequence

from tracereplay.checks.registry import prepare_check
from tracereplay.errors import TraceReplayError
from tracereplay.models import CheckSpec

#: checks a suite gets when promotion creates it (the run's status, its answer, its tool calls)
DEFAULT_CHECK_KINDS: tuple[str, ...] = ("status", "containsExpected", "toolCallArgsMatch")


class InvalidChecksError(TraceReplayError):
    """A list of check definitions that cannot be used."""


def default_checks() -> list[CheckSpec]:
    """The checks of a suite that promotion creates: ``status``, ``containsExpected``,
    ``toolCallArgsMatch``, each with its default options."""
    return [CheckSpec(kind=kind) for kind in DEFAULT_CHECK_KINDS]


def check_problems(specs: Sequence[CheckSpec]) -> list[tuple[tuple[int | str, ...], str]]:
    """Every problem of ``specs`` as ``(path, message)``; the path is relative to the list,
    e.g. ``(1, "kind")``. An empty list means the checks can be stored."""
    problems: list[tuple[tuple[int | str, ...], str]] = []
    seen: dict[str, int] = {}
    for index, spec in enumerate(specs):
        label = spec.label
        if label in seen:
            problems.append(
                (
                    (index, "name" if spec.name else "kind"),
                    f"check {label!r} is defined twice (also at index {seen[label]}); "
                    "give one of them a distinct name",
                )
            )
        else:
            seen[label] = index
        problems.extend(((index, *path), message) for path, message in _kind_problems(spec))
    return problems


def validate_checks(specs: Sequence[CheckSpec]) -> list[CheckSpec]:
    """``specs`` unchanged when they are usable, else ``InvalidChecksError`` naming each problem."""
    problems = check_problems(specs)
    if problems:
        listed = "; ".join(f"checks[{path[0]}]{_suffix(path[1:])}: {msg}" for path, msg in problems)
        raise InvalidChecksError(f"invalid checks: {listed}")
    return list(specs)


def _suffix(path: tuple[int | str, ...]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)


def _kind_problems(spec: CheckSpec) -> list[tuple[tuple[int | str, ...], str]]:
    """What the check registry says about one spec: an unknown kind, or bad options."""
    prepared = prepare_check(spec)
    if prepared.problem is None:
        return []
    return [((("kind",) if prepared.entry is None else ()), prepared.problem)]
