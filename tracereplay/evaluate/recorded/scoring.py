"""Recorded mode: score each case against its source run's recorded ``AgentResult``.

No agent, no network (unless a suite uses ``llmJudge``), no store: the caller supplies the runs,
so any storage (DuckDB, JSON files) can drive it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

from tracereplay.checks.registry import run_check
from tracereplay.checks.subject import CheckSubject
from tracereplay.models.evals import CheckSpec, EvalCase, EvaluationResult
from tracereplay.models.run import Run
from tracereplay.scoring.verdicts import error_result, resolve_checks, result_from_scores

RunLookup = Mapping[str, Run] | Callable[[str], "Run | None"]


def subject_for_run(case: EvalCase, run: Run) -> CheckSubject:
    """What checks see for a recorded run: its result, and the run for budgets."""
    return CheckSubject(case=case, result=run.result, run=run)


def source_not_found_reason(seq: int, source_run_id: str | None) -> str:
    """Why case ``#seq`` cannot be scored in recorded mode: it has no source run
    (``source_run_id`` None), or its source run is not in the store."""
    if source_run_id is None:
        return (
            f"case #{seq} has no source run (hand-written): recorded mode needs one; "
            "replay it with an agent instead"
        )
    return f"source run {source_run_id} of case #{seq} was not found"


def score_recorded(
    case: EvalCase, suite_checks: Sequence[CheckSpec], run: Run | None
) -> EvaluationResult:
    """Score ``case`` against ``run`` (its source run); ERROR when the run is missing."""
    if run is None:
        return error_result(case.id, source_not_found_reason(case.seq, case.source_run_id))
    started = time.perf_counter()
    subject = subject_for_run(case, run)
    scores = [run_check(spec, subject) for spec in resolve_checks(case, suite_checks)]
    elapsed = (time.perf_counter() - started) * 1000.0
    return result_from_scores(case.id, scores, duration_ms=elapsed, run_id=run.run_id)


def evaluate_recorded(
    cases: Iterable[EvalCase], suite_checks: Sequence[CheckSpec], runs: RunLookup
) -> Iterator[EvaluationResult]:
    """Score every case against its source run, looked up by id in ``runs`` (a mapping or a
    ``run_id -> Run | None`` function). Yields results in case order; never raises."""
    lookup: Callable[[str], Run | None] = runs.get if isinstance(runs, Mapping) else runs
    for case in cases:
        run = lookup(case.source_run_id) if case.source_run_id is not None else None
        yield score_recorded(case, suite_checks, run)
