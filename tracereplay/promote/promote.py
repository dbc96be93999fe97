"""Promotion: a recorded run becomes an ``EvalCase`` of a suite (created on first use)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import orjson

from tracereplay.errors import TraceReplayError
from tracereplay.models import (
    SOURCE_KINDS,
    EvalCase,
    EvalExpectedToolCall,
    EvalSuite,
    Run,
)
from tracereplay.models.evals import SourceKind
from tracereplay.promote.checks import default_checks
from tracereplay.promote.history import history_of
from tracereplay.promote.suites import build
from tracereplay.promote.where import matching_run_ids
from tracereplay.store import suites as suite_store
from tracereplay.store.db import Store
from tracereplay.store.labels import Label
from tracereplay.store.runs import runs_to_promote


class PromoteError(TraceReplayError):
    """A run that cannot be promoted as asked."""


@dataclass(frozen=True)
class PromoteOptions:
    """How to turn runs into cases; ``None`` means "decide from the run"."""

    kind: SourceKind | None = None
    expected_output: str | None = None
    expected_tools: bool | None = None
    #: the tool calls the case expects, given explicitly (instead of copying the run's)
    expected_tool_calls: tuple[EvalExpectedToolCall, ...] | None = None
    tags: tuple[str, ...] = ()


@dataclass
class PromoteResult:
    """One promotion: the case (new, or the one the run already had in the suite)."""

    case: EvalCase
    created: bool
    suite: EvalSuite
    suite_created: bool


@dataclass
class BulkPromoteResult:
    """A ``--where`` promotion: what was new, what was already there, what was skipped."""

    suite: EvalSuite | None
    suite_created: bool
    matched: int
    created: list[EvalCase] = field(default_factory=list)
    existing: list[EvalCase] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (run id, reason)


def parse_kind(text: str) -> SourceKind:
    """A source kind from user text (``failed_run``, ``failed-run`` ...); one-line error otherwise."""
    value = text.strip().lower().replace("-", "_")
    if value not in SOURCE_KINDS:
        raise PromoteError(f"unknown kind '{text}' (choose one of {', '.join(SOURCE_KINDS)})")
    return value  # type: ignore[return-value]


def infer_kind(run: Run) -> SourceKind:
    """``reference_run`` for a successful run, ``failed_run`` for any other status.
    (``negative_score`` is never inferred: it is given explicitly.)"""
    return "reference_run" if run.result.status == "success" else "failed_run"


def labelled_kind(run: Run, label: Label | None) -> SourceKind:
    """The kind a run's latest label (``tracereplay label``) makes it: ``reference_run`` for a
    run labelled good; for one labelled bad, ``failed_run`` when it failed and
    ``negative_score`` when it succeeded (a thumbs-down); ``infer_kind`` for a run without."""
    if label is None:
        return infer_kind(run)
    if label.verdict == "good":
        return "reference_run"
    return "negative_score" if run.result.status == "success" else "failed_run"


def case_from_run(
    run: Run,
    suite_id: str,
    seq: int,
    options: PromoteOptions,
    promoted_at: datetime,
    label: Label | None = None,
    history: list[dict[str, str]] | None = None,
) -> EvalCase:
    """The case a run becomes (pure: nothing is read or written). ``label``: the run's latest
    label, whose corrected answer is the expected output (unless ``options`` give one) and
    whose note is the case's description (``metadata.description``); ``history``: the
    conversation before the run's question (``promote/history.py``)."""
    if not run.query.strip():
        raise PromoteError(f"run {run.run_id} has no query, so there is nothing to replay")
    kind = options.kind or labelled_kind(run, label)
    reference = kind == "reference_run"
    expected_output = options.expected_output
    if expected_output is None and label is not None:
        expected_output = label.expected
    if expected_output is None and reference:
        expected_output = run.result.response
    copy_tools = reference if options.expected_tools is None else options.expected_tools
    expected_tools: list[Any] = (
        [{"name": tc.tool_name, "arguments": tc.arguments} for tc in run.result.tool_calls]
        if copy_tools
        else []
    )
    if options.expected_tool_calls is not None:
        expected_tools = [t.to_dict() for t in options.expected_tool_calls]
    metadata: dict[str, Any] = {"source_trace_id": run.trace_id}
    if run.error:
        metadata["source_error"] = run.error
    if label is not None:
        if label.note:
            metadata["description"] = label.note
        metadata["label"] = {
            "verdict": label.verdict,
            "author": label.author,
            "labelled_at": label.created_at.isoformat(),
        }
    return build(
        EvalCase,
        f"case from run {run.run_id}",
        suite_id=suite_id,
        seq=seq,
        query=run.query,
        history=list(history or ()),
        context=list(run.context),
        expected_output=expected_output,
        expected_tool_calls=expected_tools,
        parameters=_parameters(run.parameters),
        promoted_at=promoted_at,
        source_kind=kind,
        source_run_id=run.run_id,
        tags=list(dict.fromkeys(options.tags)),
        metadata=metadata,
    )


def promote_run(
    store: Store,
    run_ident: str,
    *,
    suite_name: str | None = None,
    options: PromoteOptions = PromoteOptions(),
) -> PromoteResult:
    """Promote one run (id, unique id prefix, or a one-run trace id) into ``suite_name`` (default:
    the run's agent name). Promoting a run already in the suite returns its case unchanged."""
    run_id = store.resolve_run_id(run_ident)
    run = runs_to_promote(store, [run_id])[0]
    name = suite_name if suite_name is not None else run.agent_name
    if suite_name is None and not name.strip():
        raise PromoteError(
            f"run {run.run_id} has no agent name to name a suite after: give --suite NAME"
        )
    with store.transaction():
        suite, suite_created = suite_for(store, name, run.agent_name)
        existing = suite_store.cases_by_source(store, suite.id, [run.run_id]).get(run.run_id)
        if existing is not None:
            return PromoteResult(existing, False, suite, suite_created)
        when = suite_store.now()
        label = store.latest_labels([run.run_id]).get(run.run_id)
        seq = suite_store.next_seq(store, suite.id)
        history = history_of(store, run.run_id)
        case = case_from_run(run, suite.id, seq, options, when, label, history)
        suite_store.insert_cases(store, [case])
        suite_store.touch_suite(store, suite.id, when)
    return PromoteResult(case, True, suite, suite_created)


def promote_where(
    store: Store,
    predicate: str,
    *,
    suite_name: str,
    limit: int | None = None,
    options: PromoteOptions = PromoteOptions(),
) -> BulkPromoteResult:
    """Promote every recorded run matching ``predicate`` (oldest first, at most ``limit``) into
    ``suite_name``. Idempotent: runs already in the suite are counted, not added again; runs
    without a query are skipped and reported."""
    run_ids = matching_run_ids(store, predicate, limit)
    if not run_ids:
        return BulkPromoteResult(
            suite=suite_store.find_suite(store, suite_name), suite_created=False, matched=0
        )
    runs = runs_to_promote(store, run_ids)
    agents = {r.agent_name for r in runs}
    with store.transaction():
        suite, suite_created = suite_for(
            store, suite_name, agents.pop() if len(agents) == 1 else ""
        )
        result = BulkPromoteResult(suite=suite, suite_created=suite_created, matched=len(runs))
        existing = suite_store.cases_by_source(store, suite.id, run_ids)
        seq = suite_store.next_seq(store, suite.id)
        when = suite_store.now()
        labels = store.latest_labels(run_ids)
        for run in runs:
            if run.run_id in existing:
                result.existing.append(existing[run.run_id])
            elif not run.query.strip():
                result.skipped.append((run.run_id, "no query"))
            else:
                label = labels.get(run.run_id)
                history = history_of(store, run.run_id)
                result.created.append(
                    case_from_run(run, suite.id, seq, options, when, label, history)
                )
                seq += 1
        if result.created:
            suite_store.insert_cases(store, result.created)
            suite_store.touch_suite(store, suite.id, when)
    return result


def new_suite(name: str, agent_name: str = "") -> EvalSuite:
    """A suite as promotion creates it: the default checks, created and updated now."""
    when = suite_store.now()
    return build(
        EvalSuite,
        "suite",
        name=name,
        agent_name=agent_name,
        checks=default_checks(),
        created_at=when,
        updated_at=when,
    )


def suite_for(store: Store, name: str, agent_name: str) -> tuple[EvalSuite, bool]:
    store.lock([f"suite-name:{name}"])  # two promotions creating one new suite: one creates it
    suite = suite_store.find_suite(store, name)
    if suite is not None:
        return suite, False
    suite = new_suite(name, agent_name)
    suite_store.insert_suite(store, suite)
    return suite, True


def _parameters(values: dict[str, Any]) -> dict[str, str] | None:
    """A run's parameter values as case parameters (text); None for a run that had none."""
    if not values:
        return None
    return {k: v if isinstance(v, str) else orjson.dumps(v).decode() for k, v in values.items()}
