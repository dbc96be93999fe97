"""The check kinds themselves: what a check returns (``Verdict``, ``CheckError``), a kind's
entry (``CheckKind``: its function and options model) and registering one (``register_check``,
``builtin_check``, ``batch_form``).

Below ``registry`` (lookups, preparing and running specs): the built-in check modules register
through this module, and ``registry`` imports them by name on its first lookup, so neither
imports the other both ways. Whoever caches what the registry holds subscribes to its changes
(``on_change``).
"""

from __future__ import annotations

import inspect
import threading
import typing
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from tracereplay.errors import TraceReplayError
from tracereplay.models.evals import CheckSpec

_REGISTRY: dict[str, CheckKind] = {}
#: held while the registry changes and while the built-ins load (reentrant: they register)
_LOCK = threading.RLock()
_LISTENERS: list[Callable[[], None]] = []


def on_change(listener: Callable[[], None]) -> None:
    """Call ``listener`` (under the lock) whenever a kind is registered or given a batch form."""
    _LISTENERS.append(listener)


def _changed() -> None:
    for listener in _LISTENERS:
        listener()


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
    #: a conversation check: it judges a multi-turn case once, as a whole
    #: (``CheckSubject.conversation()``), not each of its turns
    conversation: bool = False

    def options_schema(self) -> dict[str, Any]:
        """JSON schema of the options (what a suite may put next to ``kind``)."""
        return self.options_model.model_json_schema(by_alias=True)

    @property
    def option_names(self) -> list[str]:
        """The option names, in declaration order."""
        return list(self.option_fields)


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
    conversation: bool = False,
) -> CheckKind:
    """Register ``func`` as check ``kind`` (what ``@check`` does). ``conversation``: the check
    judges a multi-turn case once as a whole (``CheckSubject.conversation()``), not per turn.

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
        conversation=conversation,
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
        _changed()
    return entry


def builtin_check(
    kind: str,
    *,
    validate: Callable[[dict[str, Any]], None] | None = None,
    conversation: bool = False,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator used by tracereplay's own check modules."""

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        register_check(kind, func, builtin=True, validate=validate, conversation=conversation)
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
            _changed()
        return func

    return decorate
