"""``promote --session ID``: a whole conversation becomes one multi-turn case.

The session's turns (``store/sessions.py``: its top-level runs in start order) become the
case's ``turns``, each made as ``promote RUN`` makes a one-question case of that run
(``case_from_run``: its expected output and tool calls by its kind and label) plus the answer
it recorded, which later turns are given as history under ``--history recorded``. The case is
turn 1's question, its source run turn 1's run; its kind the worst of the turns' (a failed turn
makes the conversation a ``failed_run``). Promoting a session already in the suite returns its
case unchanged, as promoting a run does.
"""

from __future__ import annotations

from tracereplay.models import EvalCase, EvalTurn
from tracereplay.models.evals import SourceKind
from tracereplay.promote.history import history_of
from tracereplay.promote.promote import (
    PromoteError,
    PromoteOptions,
    PromoteResult,
    case_from_run,
    suite_for,
)
from tracereplay.promote.suites import build
from tracereplay.store import suites as suite_store
from tracereplay.store.db import Store
from tracereplay.store.runs import runs_to_promote
from tracereplay.store.sessions import session_turns

#: a conversation's kind: the first of these any of its turns has
_KIND_ORDER: tuple[SourceKind, ...] = ("failed_run", "negative_score", "reference_run")


def promote_session(
    store: Store,
    session_id: str,
    *,
    suite_name: str | None = None,
    options: PromoteOptions = PromoteOptions(),
) -> PromoteResult:
    """Promote every turn of ``session_id`` into one multi-turn case of ``suite_name``
    (default: the first turn's agent name)."""
    turns = session_turns(store, session_id)
    if not turns:
        raise PromoteError(
            f"no session '{session_id}' among the recorded runs (tracereplay runs --session ID"
            " lists a session's turns)"
        )
    if len(turns) == 1:
        raise PromoteError(
            f"session '{session_id}' has one turn: promote its run instead"
            f" (tracereplay promote {turns[0]['run_id'][:8]})"
        )
    runs = runs_to_promote(store, [t["run_id"] for t in turns])
    for number, run in enumerate(runs, 1):
        if not run.query.strip():
            raise PromoteError(
                f"turn {number} of session '{session_id}' (run {run.run_id}) has no query,"
                " so there is nothing to replay"
            )
    first = runs[0]
    name = suite_name if suite_name is not None else first.agent_name
    if not name.strip():
        raise PromoteError(
            f"run {first.run_id} has no agent name to name a suite after: give --suite NAME"
        )
    with store.transaction():
        suite, suite_created = suite_for(store, name, first.agent_name)
        existing = suite_store.cases_by_source(store, suite.id, [first.run_id]).get(first.run_id)
        if existing is not None:
            if existing.turns:
                return PromoteResult(existing, False, suite, suite_created)
            # a suite keys its cases by source run, and a conversation's is its first turn's
            raise PromoteError(
                f"turn 1 of session '{session_id}' (run {first.run_id}) is already case"
                f" #{existing.seq} of suite '{suite.name}', a one-question case: promote the"
                " session into another suite (--suite NAME)"
            )
        when = suite_store.now()
        labels = store.latest_labels([r.run_id for r in runs])
        seq = suite_store.next_seq(store, suite.id)
        made = [
            case_from_run(run, suite.id, seq, options, when, labels.get(run.run_id)) for run in runs
        ]
        case = session_case(made, [r.result.response for r in runs], session_id)
        case = case.model_copy(update={"history": history_of(store, first.run_id)})
        suite_store.insert_cases(store, [case])
        suite_store.touch_suite(store, suite.id, when)
    return PromoteResult(case, True, suite, suite_created)


def session_case(made: list[EvalCase], responses: list[str], session_id: str) -> EvalCase:
    """The multi-turn case of a conversation whose turns ``case_from_run`` made into
    ``made`` (pure): turn 1's case holding every turn."""
    first = made[0]
    turns = [
        EvalTurn(
            query=c.query,
            response=response,
            expected_output=c.expected_output,
            expected_tool_calls=list(c.expected_tool_calls),
            source_run_id=c.source_run_id,
        )
        for c, response in zip(made, responses)
    ]
    kinds = {c.source_kind for c in made}
    kind = next((k for k in _KIND_ORDER if k in kinds), first.source_kind)
    metadata = {**first.metadata, "session_id": session_id}
    return build(
        EvalCase,
        f"case from session {session_id}",
        **{
            **first.model_dump(exclude={"metadata", "source_kind", "turns"}),
            "turns": turns,
            "expected_output": None,
            "expected_tool_calls": [],
            "source_kind": kind,
            "metadata": metadata,
        },
    )
