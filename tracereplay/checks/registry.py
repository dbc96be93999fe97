"""The check registry: ``@check`` registers a function, ``run_check`` runs a configured spec.

A check is a plain function ``fn(subject, **options)``. Its keyword parameters *are* its options:
their annotations and defaults become a strict pydantic model that validates a ``CheckSpec``'s
extra fields once per spec (then cached), so a typo'd, missing or mistyped option is an ERROR
result with a reason, never an exception and never a silent default.

A check returns a ``Verdict`` (or ``bool``, ``(bool, explanation)``, or a ``ScoreResult``) and
raises ``CheckError`` when it cannot run (nothing to judge, endpoint down, bad pattern).
"""

from __future__ import annotations

import importlib
import inspect
import threading
import typing
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Annotated, Any

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from tracereplay.errors import TraceReplayError
from tracereplay.models.evals import CheckSpec, ScoreResult, Status
from tracereplay.models.fast import build

if typing.TYPE_CHECKING:
    from tracereplay.checks.subject import CheckSubject

#: Modules that register the built-in checks (imported on first registry lookup).
BUILTIN_MODULES: tuple[str, ...] = (
    "tracereplay.checks.text",
    "tracereplay.checks.similarity",
    "tracereplay.checks.tools",
    "tracereplay.checks.tool_results",
    "tracereplay.checks.run",
    "tracereplay.checks.passfail",
    "tracereplay.checks.judge",
)


_PASSED, _FAILED = Status.PASSED, Status.FAILED


class CheckError(Exception):
    """Raised inside a check that cannot run: the result is ERROR with this message as reason."""


class CheckDefinitionError(TraceReplayError):
    """A check function cannot be registered (bad signature, kind already taken)."""


@dataclass(slots=True)
class Verdict:
    """What a check function returns: pass/fail, a 0..1 score (default 1.0/0.0), and why."""

    passed: bool
    score: float | None = None
    explanation: str = ""
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CheckKind:
    """A registered check: its kind name, function and options model."""

    kind: str
    func: Callable[..., Any]
    options_model: type[BaseModel]
    description: str
    builtin: bool
    option_fields: dict[str, str] = field(default_factory=dict)
    pass_extra: bool = False
    validate: Callable[[dict[str, Any]], None] | None = None
    #: optional batch form (see ``checks/batch.py``): same options, same results, many rows
    batch: Callable[..., Any] | None = None

    def options_schema(self) -> dict[str, Any]:
        """JSON schema of the options (what a suite may put next to ``kind``)."""
        return self.options_model.model_json_schema(by_alias=True)

    @property
    def option_names(self) -> list[str]:
        """The option names, in declaration order."""
        return list(self.option_fields)


_REGISTRY: dict[str, CheckKind] = {}
_BUILTINS_LOADED = False
_LOCK = threading.RLock()


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


def _options_model(
    kind: str, func: Callable[..., Any]
) -> tuple[type[BaseModel], dict[str, str], bool]:
    """A strict pydantic model from the keyword parameters after ``subject``; also returns
    option name -> model field name (an option named like a BaseModel attribute, e.g.
    ``schema``, is stored under another field name with the option name as alias)."""
    sig = inspect.signature(func)
    params = list(sig.parameters.values())
    if not params or params[0].kind not in (
        inspect.Parameter.POSITIONAL_ONLY,
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
    ):
        raise CheckDefinitionError(
            f"check {kind!r}: {func.__qualname__} must take the subject as its first parameter"
        )
    try:
        hints = typing.get_type_hints(func, include_extras=True)
    except Exception as exc:  # unresolvable forward reference in a user's annotations
        raise CheckDefinitionError(
            f"check {kind!r}: cannot resolve annotations of {func.__qualname__}: {exc}"
        ) from exc
    fields: dict[str, Any] = {}
    names: dict[str, str] = {}
    extra = False
    for p in params[1:]:
        if p.kind is inspect.Parameter.VAR_KEYWORD:
            extra = True
            continue
        if p.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.POSITIONAL_ONLY):
            raise CheckDefinitionError(
                f"check {kind!r}: option {p.name!r} of {func.__qualname__} must be a keyword parameter"
            )
        if p.name in ("kind", "name"):
            raise CheckDefinitionError(
                f"check {kind!r}: option name {p.name!r} is reserved (CheckSpec uses it)"
            )
        default = ... if p.default is inspect.Parameter.empty else p.default
        hint = hints.get(p.name, Any)
        field_name = p.name
        if hasattr(BaseModel, p.name) or p.name.startswith("_"):
            field_name = f"opt_{p.name.lstrip('_')}_"
            hint = Annotated[hint, Field(alias=p.name)]
        fields[field_name] = (hint, default)
        names[p.name] = field_name
    config = ConfigDict(extra="allow" if extra else "forbid", strict=True)
    model = create_model(f"{kind}Options", __config__=config, **fields)
    return model, names, extra


def register_check(
    kind: str,
    func: Callable[..., Any],
    *,
    description: str | None = None,
    builtin: bool = False,
    validate: Callable[[dict[str, Any]], None] | None = None,
) -> CheckKind:
    """Register ``func`` as check ``kind`` (what ``@check`` does).

    ``validate(options)``, when given, runs once per spec after type validation and raises
    ``CheckError`` / ``ValueError`` for options that are well typed but unusable (a bad regex).
    """
    if not isinstance(kind, str):
        raise CheckDefinitionError("a check kind must be a string")
    try:
        CheckSpec(kind=kind)
    except ValidationError as exc:
        msg = exc.errors(include_url=False)[0].get("msg", "invalid")
        raise CheckDefinitionError(
            f"cannot register check {kind!r}: {str(msg).removeprefix('Value error, ')}"
        ) from None
    if not builtin:
        load_builtins()
    model, option_fields, extra = _options_model(kind, func)
    doc = description if description is not None else inspect.getdoc(func) or ""
    summary = " ".join(doc.strip().split("\n\n")[0].split())
    entry = CheckKind(
        kind=kind,
        func=func,
        options_model=model,
        description=summary,
        builtin=builtin,
        option_fields=option_fields,
        pass_extra=extra,
        validate=validate,
    )
    with _LOCK:
        old = _REGISTRY.get(kind)
        if old is not None:
            if old.builtin and not builtin:
                raise CheckDefinitionError(
                    f"check kind {kind!r} is built in; register your check under another name"
                )
            same = (old.func.__module__, old.func.__qualname__) == (
                func.__module__,
                func.__qualname__,
            )
            if not same:
                raise CheckDefinitionError(
                    f"check kind {kind!r} is already registered by "
                    f"{old.func.__module__}.{old.func.__qualname__}"
                )
        _REGISTRY[kind] = entry
        clear_prepared()
    return entry


def check(kind: str | Callable[..., Any] | None = None, *, description: str | None = None):
    """Decorator registering a check function: ``@check("kind")`` or bare ``@check``.

    The function receives a ``CheckSubject`` and its options as keyword arguments, e.g.
    ``def polite(subject, min_words: int = 3) -> bool``; it returns a ``Verdict``, a bool, a
    ``(bool, explanation)`` pair or a ``ScoreResult``, and raises ``CheckError`` if it cannot run.
    """
    if callable(kind):
        func = kind
        register_check(func.__name__, func, description=description)
        return func

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        register_check(kind or func.__name__, func, description=description)
        return func

    return decorate


def builtin_check(
    kind: str, *, validate: Callable[[dict[str, Any]], None] | None = None
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator used by tracereplay's own check modules."""

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        register_check(kind, func, builtin=True, validate=validate)
        return func

    return decorate


def batch_form(kind: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator registering the batch form of built-in check ``kind`` (registered just before
    it): ``fn(batch, **options) -> BatchVerdicts``, giving row by row what the scalar check
    gives (see ``tracereplay.checks.batch``)."""

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        with _LOCK:
            entry = _REGISTRY.get(kind)
            if entry is None or not entry.builtin:
                raise CheckDefinitionError(f"batch form for {kind!r}: no built-in check {kind!r}")
            _REGISTRY[kind] = replace(entry, batch=func)
            clear_prepared()
        return func

    return decorate


def get_check_kind(kind: str) -> CheckKind | None:
    """The registered check of that kind, or None."""
    load_builtins()
    return _REGISTRY.get(kind)


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
