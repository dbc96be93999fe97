"""Suite and case operations the commands share: create, remove, add by hand."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from tracereplay.errors import BadParameterError, TraceReplayError
from tracereplay.models import CheckSpec, Document, EvalCase, EvalExpectedToolCall, EvalSuite
from tracereplay.promote.checks import default_checks, validate_checks
from tracereplay.promote.suite_file import format_path, validation_message
from tracereplay.store import suites as suite_store
from tracereplay.store.db import Store

M = TypeVar("M", bound=BaseModel)


class SuiteExistsError(TraceReplayError):
    """A suite name that is already taken."""


def build(cls: type[M], what: str, **data: Any) -> M:
    """``cls(**data)``, with a validation failure turned into a one-line ``BadParameterError``."""
    try:
        return cls.model_validate(data)
    except ValidationError as exc:
        parts = [
            f"{format_path(tuple(e['loc'])) or what}: {validation_message(e)}" for e in exc.errors()
        ]
        raise BadParameterError(f"invalid {what}: {'; '.join(parts)}") from None


def create_suite(
    store: Store,
    name: str,
    *,
    agent_name: str = "",
    description: str = "",
    checks: Sequence[CheckSpec] | None = None,
    required_parameters: Sequence[str] = (),
) -> EvalSuite:
    """Create an empty suite (default checks unless ``checks`` are given)."""
    when = suite_store.now()
    suite = build(
        EvalSuite,
        "suite",
        name=name,
        agent_name=agent_name,
        description=description,
        checks=validate_checks(list(checks) if checks is not None else default_checks()),
        required_parameters=list(dict.fromkeys(required_parameters)),
        created_at=when,
        updated_at=when,
    )
    with store.transaction():
        if suite_store.find_suite(store, name) is not None:
            raise SuiteExistsError(f"a suite named '{name}' already exists")
        suite_store.insert_suite(store, suite)
    return suite


def remove_suite(store: Store, ident: str) -> tuple[EvalSuite, int]:
    """Remove a suite and its cases; returns the suite and how many cases went."""
    suite = suite_store.get_suite(store, ident)
    with store.transaction():
        removed = suite_store.delete_suite(store, suite.id)
    return suite, removed


def add_case(
    store: Store,
    suite_ident: str,
    *,
    query: str,
    context: Sequence[Document] = (),
    expected_output: str | None = None,
    expected_tool_calls: Sequence[EvalExpectedToolCall] = (),
    parameters: dict[str, str] | None = None,
    tags: Sequence[str] = (),
    metadata: dict[str, Any] | None = None,
) -> EvalCase:
    """Add a hand-written case (no source run, no promotion time) at the end of a suite."""
    suite = suite_store.get_suite(store, suite_ident)
    with store.transaction():
        case = build(
            EvalCase,
            "case",
            suite_id=suite.id,
            seq=suite_store.next_seq(store, suite.id),
            query=query,
            context=[d.to_dict() for d in context],
            expected_output=expected_output,
            expected_tool_calls=[t.to_dict() for t in expected_tool_calls],
            parameters=parameters,
            tags=list(dict.fromkeys(tags)),
            metadata=metadata or {},
        )
        suite_store.insert_cases(store, [case])
        suite_store.touch_suite(store, suite.id)
    return case


def remove_cases(store: Store, idents: Sequence[str]) -> list[tuple[EvalCase, str]]:
    """Remove cases by id (or unique prefix); every id is resolved before anything is removed.
    Returns each removed case with its suite's name. The other cases keep their ``seq``."""
    cases = {c.id: c for c in (suite_store.get_case(store, ident) for ident in idents)}
    names = {s.id: s.name for s, _ in suite_store.list_suites(store)}
    with store.transaction():
        suite_store.delete_cases(store, list(cases))
        for suite_id in {c.suite_id for c in cases.values()}:
            suite_store.touch_suite(store, suite_id)
    return [(c, names.get(c.suite_id, "")) for c in cases.values()]
