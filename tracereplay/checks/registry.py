"""The check registry: ``@check`` registers a function, ``run_check`` runs a configured spec.

The kinds and their registration are ``kinds.py`` (re-exported here); this module loads the
built-in check modules on its first lookup and prepares and runs specs.

A check is a plain function ``fn(subject, **options)``. Its keyword parameters *are* its options:
their annotations and defaults become a strict pydantic model that validates a ``CheckSpec``'s
extra fields once per spec (then cached), so a typo'd, missing or mistyped option is an ERROR
result with a reason, never an exception and never a silent default.

A check returns a ``Verdict`` (or ``bool``, ``(bool, explanation)``, or a ``ScoreResult``) and
raises ``CheckError`` when it cannot run (nothing to judge, endpoint down, bad pattern).
"""

from __future__ import annotations

import importlib
import typing
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import orjson
from pydantic import ValidationError

from tracereplay.checks.kinds import (
    _LOCK,
    _REGISTRY,
    CheckDefinitionError,
    CheckError,
    CheckKind,
    Verdict,
    batch_form,
    builtin_check,
    on_change,
)
from tracereplay.checks.kinds import register_check as _register_kind
from tracereplay.models.evals import CheckSpec, ScoreResult, Status
from tracereplay.models.fast import build

if typing.TYPE_CHECKING:
    from tracereplay.checks.subject import CheckSubject

#: the kinds' names are re-exported: checks written against the registry keep importing them here
__all__ = [
    "BUILTIN_MODULES",
    "CheckDefinitionError",
    "CheckError",
    "CheckKind",
    "PreparedCheck",
    "Verdict",
    "batch_form",
    "builtin_check",
    "check",
    "clear_prepared",
    "error_score",
    "get_check_kind",
    "is_conversation_check",
    "list_check_kinds",
    "load_builtins",
    "prepare_check",
    "prepared",
    "register_check",
    "run_check",
    "validate_check_specs",
]

#: Modules that register the built-in checks (imported on first registry lookup).
BUILTIN_MODULES: tuple[str, ...] = (
    "tracereplay.checks.text",
    "tracereplay.checks.similarity",
    "tracereplay.checks.tools",
    "tracereplay.checks.tool_results",
    "tracereplay.checks.run",
    "tracereplay.checks.passfail",
    "tracereplay.checks.judge",
    "tracereplay.checks.conversation",
)


_PASSED, _FAILED = Status.PASSED, Status.FAILED


_BUILTINS_LOADED = False


def load_builtins() -> None:
    """Import the built-in check modules now (each registers its checks), once; every lookup
    does it first, so only a process that wants them loaded ahead (an agent process's fork
    server) calls it."""
    global _BUILTINS_LOADED
    if _BUILTINS_LOADED:
        return
    with _LOCK:
        if _BUILTINS_LOADED:
            return
        for name in BUILTIN_MODULES:
            importlib.import_module(name)
        _BUILTINS_LOADED = True


def register_check(
    kind: str,
    func: Callable[..., Any],
    *,
    description: str | None = None,
    builtin: bool = False,
    validate: Callable[[dict[str, Any]], None] | None = None,
    conversation: bool = False,
) -> CheckKind:
    """Register ``func`` as check ``kind`` (what ``@check`` does); a custom kind after the
    built-ins are loaded, so that it cannot take a built-in's name. ``conversation``: it
    judges a multi-turn case once, as a whole."""
    if not builtin:
        load_builtins()
    return _register_kind(
        kind,
        func,
        description=description,
        builtin=builtin,
        validate=validate,
        conversation=conversation,
    )


def check(
    kind: str | Callable[..., Any] | None = None,
    *,
    description: str | None = None,
    conversation: bool = False,
):
    """Decorator registering a check function: ``@check("kind")`` or bare ``@check``.

    The function receives a ``CheckSubject`` and its options as keyword arguments, e.g.
    ``def polite(subject, min_words: int = 3) -> bool``; it returns a ``Verdict``, a bool, a
    ``(bool, explanation)`` pair or a ``ScoreResult``, and raises ``CheckError`` if it cannot run.
    ``conversation=True``: it judges a multi-turn case once, as a whole
    (``subject.conversation()``), instead of each turn.
    """
    if callable(kind):
        func = kind
        register_check(func.__name__, func, description=description)
        return func

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        register_check(
            kind or func.__name__, func, description=description, conversation=conversation
        )
        return func

    return decorate


def get_check_kind(kind: str) -> CheckKind | None:
    """The registered check of that kind, or None."""
    load_builtins()
    return _REGISTRY.get(kind)


def is_conversation_check(spec: CheckSpec) -> bool:
    """Whether ``spec`` judges a multi-turn case as a whole (a conversation check) rather than
    each turn: its kind says so, or it is an ``llmJudge`` given ``over: conversation``."""
    entry = get_check_kind(spec.kind)
    if entry is not None and entry.conversation:
        return True
    return spec.kind == "llmJudge" and (spec.model_extra or {}).get("over") == "conversation"


def list_check_kinds() -> list[CheckKind]:
    """Every registered check (built-in first, then custom), sorted by kind within each group."""
    load_builtins()
    return sorted(_REGISTRY.values(), key=lambda k: (not k.builtin, k.kind))


# --- preparing (validating) specs: once per spec object --------------------------------------


def _describe_validation(kind: CheckKind, exc: ValidationError) -> str:
    parts: list[str] = []
    for err in exc.errors(include_url=False):
        loc = ".".join(str(x) for x in err.get("loc", ())) or "options"
        typ = err.get("type", "")
        if typ == "extra_forbidden":
            known = ", ".join(kind.option_names) or "none"
            parts.append(f"unknown option {loc!r} (options: {known})")
        elif typ == "missing":
            parts.append(f"missing required option {loc!r}")
        else:
            msg = str(err.get("msg", "invalid")).removeprefix("Value error, ")
            parts.append(f"option {loc!r}: {msg}")
    return "; ".join(parts)


@dataclass(slots=True)
class PreparedCheck:
    """A spec resolved against the registry: validated options, or the reason it cannot run."""

    label: str
    kind: str
    entry: CheckKind | None
    options: dict[str, Any]
    problem: str | None

    def run(self, subject: CheckSubject) -> ScoreResult:
        """Run the check on ``subject``; never raises."""
        if self.problem is not None:
            return error_score(self.label, self.problem)
        assert self.entry is not None
        try:
            out = self.entry.func(subject, **self.options)
        except CheckError as exc:
            return error_score(self.label, str(exc) or type(exc).__name__)
        except Exception as exc:
            return error_score(self.label, f"check raised {type(exc).__name__}: {exc}")
        if out.__class__ is Verdict:  # fast path: bool, float-or-None score, str, dict
            score, passed = out.score, out.passed
            if (
                passed.__class__ is bool
                and out.explanation.__class__ is str
                and out.details.__class__ is dict
                and (score is None or (score.__class__ is float and 0.0 <= score <= 1.0))
            ):
                return build(
                    ScoreResult,
                    {
                        "check": self.label,
                        "score": (1.0 if passed else 0.0) if score is None else score,
                        "passed": passed,
                        "status": _PASSED if passed else _FAILED,
                        "explanation": out.explanation,
                        "details": out.details,
                    },
                )
        return _to_score(self.label, out)


def prepare_check(spec: CheckSpec) -> PreparedCheck:
    """Validate ``spec`` against its kind's options (uncached; ``run_check`` caches this)."""
    label = spec.label
    entry = get_check_kind(spec.kind)
    if entry is None:
        known = ", ".join(k.kind for k in list_check_kinds())
        return PreparedCheck(
            label, spec.kind, None, {}, f"unknown check kind {spec.kind!r} (known: {known})"
        )
    raw = spec.model_extra or {}
    try:
        model = entry.options_model.model_validate(raw)
    except ValidationError as exc:
        return PreparedCheck(
            label, spec.kind, entry, {}, f"{spec.kind}: {_describe_validation(entry, exc)}"
        )
    opts = {opt: getattr(model, fld) for opt, fld in entry.option_fields.items()}
    if entry.pass_extra and model.model_extra:
        opts.update(model.model_extra)
    if entry.validate is not None:
        try:
            entry.validate(opts)
        except (CheckError, ValueError) as exc:
            return PreparedCheck(label, spec.kind, entry, {}, f"{spec.kind}: {exc}")
    return PreparedCheck(label, spec.kind, entry, opts, None)


_PREPARED: dict[int, tuple[CheckSpec, PreparedCheck]] = {}
_PREPARED_MAX = 4096
#: the same cache by what a spec says (kind, name, options): cases that each carry their own
#: copy of the same checks (an imported suite's per-case scorers, a case unpickled in an agent
#: process) validate them once, not once per case
_BY_VALUE: dict[tuple[str, str | None, bytes], PreparedCheck] = {}


def prepared(spec: CheckSpec) -> PreparedCheck:
    """``prepare_check(spec)``, cached by spec identity, then by its value (treat a used spec as
    immutable)."""
    hit = _PREPARED.get(id(spec))
    if hit is not None and hit[0] is spec:
        return hit[1]
    key = _value_key(spec)
    prep = _BY_VALUE.get(key) if key is not None else None
    if prep is None:
        prep = prepare_check(spec)
        if key is not None:
            if len(_BY_VALUE) >= _PREPARED_MAX:
                _BY_VALUE.clear()
            _BY_VALUE[key] = prep
    if len(_PREPARED) >= _PREPARED_MAX:
        _PREPARED.clear()
    _PREPARED[id(spec)] = (spec, prep)
    return prep


def clear_prepared() -> None:
    """Forget every prepared check (the registry changed)."""
    _PREPARED.clear()
    _BY_VALUE.clear()


on_change(clear_prepared)


def _value_key(spec: CheckSpec) -> tuple[str, str | None, bytes] | None:
    """What ``spec`` says, as a key (None for options JSON cannot write)."""
    try:
        options = orjson.dumps(spec.model_extra or {}, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        return None
    return spec.kind, spec.name, options


def run_check(spec: CheckSpec, subject: CheckSubject) -> ScoreResult:
    """Run one configured check on one subject. Never raises: problems are ERROR results."""
    return prepared(spec).run(subject)


def validate_check_specs(specs: Iterable[CheckSpec | dict[str, Any]]) -> list[str]:
    """Problems in a list of check definitions (unknown kinds, bad options, duplicate names)."""
    problems: list[str] = []
    seen: dict[str, int] = {}
    for i, raw in enumerate(specs):
        try:
            spec = raw if isinstance(raw, CheckSpec) else CheckSpec.model_validate(raw)
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            loc = ".".join(str(x) for x in first.get("loc", ())) or "check"
            problems.append(f"checks[{i}]: {loc}: {first.get('msg', 'invalid')}")
            continue
        prep = prepare_check(spec)
        if prep.problem is not None:
            problems.append(f"checks[{i}] ({spec.label}): {prep.problem}")
        if spec.label in seen:
            problems.append(
                f"checks[{i}]: name {spec.label!r} is used by checks[{seen[spec.label]}] too; "
                "give one a distinct 'name'"
            )
        else:
            seen[spec.label] = i
    return problems


# --- results ---------------------------------------------------------------------------------


def error_score(label: str, reason: str) -> ScoreResult:
    """An ERROR result: the check could not run (score None, not passed)."""
    return build(
        ScoreResult,
        {
            "check": label,
            "score": None,
            "passed": False,
            "status": Status.ERROR,
            "explanation": reason,
            "details": {},
        },
    )


def _make(label: str, passed: bool, score: Any, explanation: Any, details: Any) -> ScoreResult:
    if score is None:
        score = 1.0 if passed else 0.0
    elif score.__class__ is not float:
        if isinstance(score, bool) or not isinstance(score, (int, float)):
            return error_score(label, f"check returned a non-numeric score {score!r}")
        score = float(score)
    if not 0.0 <= score <= 1.0:  # also rejects NaN
        return error_score(label, f"check returned score {score!r}, outside 0..1")
    return build(
        ScoreResult,
        {
            "check": label,
            "score": score,
            "passed": passed,
            "status": Status.PASSED if passed else Status.FAILED,
            "explanation": explanation if explanation.__class__ is str else str(explanation),
            "details": details if isinstance(details, dict) else {"value": details},
        },
    )


def _to_score(label: str, out: Any) -> ScoreResult:
    if out.__class__ is Verdict:
        return _make(
            label, out.passed is True or bool(out.passed), out.score, out.explanation, out.details
        )
    if isinstance(out, bool):
        return _make(label, out, None, "passed" if out else "failed", {})
    if isinstance(out, tuple) and len(out) == 2 and isinstance(out[0], bool):
        return _make(label, out[0], None, str(out[1]), {})
    if isinstance(out, ScoreResult):
        if out.status == Status.ERROR:
            return error_score(label, out.explanation or "check reported an error")
        return _make(label, out.passed, out.score, out.explanation, out.details)
    return error_score(
        label,
        f"check returned {type(out).__name__}; return a Verdict, a bool, "
        "a (bool, explanation) pair or a ScoreResult",
    )
