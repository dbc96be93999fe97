"""Scoring one case: run its checks, fold them into an ``EvaluationResult``; aggregate runs.

Case status (Supervised AI's PASSED / FAILED / ERROR):

- FAILED when any check failed (even if another errored: the case is known not to pass, and a
  retry could not change that);
- else ERROR when any check could not run (bad option, judge unreachable) — a runner's
  ``--retries`` retries exactly these;
- else PASSED (every check passed). A case with no checks at all is an ERROR.

Scores count every check and every case: the case score is the mean of its checks' scores, an
ERROR check counting 0; an ERROR case scores 0 (its evaluation could not be carried out, so
nothing it did counts). A run's ``aggregate_score`` is the mean over every case, so a regression
to ERROR lowers it as it lowers the pass rate (the headline figure).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pydantic import BaseModel

from tracereplay.checks.common import clip
from tracereplay.checks.registry import run_check
from tracereplay.checks.subject import CheckSubject
from tracereplay.models.evals import CheckSpec, EvalCase, EvaluationResult, ScoreResult, Status
from tracereplay.models.fast import build

_REASON_LIMIT = 4000  # a safety cap for the stored line, not a display limit
_PASSED, _FAILED = Status.PASSED, Status.FAILED


def resolve_checks(case: EvalCase, suite_checks: Sequence[CheckSpec]) -> Sequence[CheckSpec]:
    """The checks a case is scored by: its own ``checks`` when set, else the suite's."""
    return case.checks if case.checks is not None else suite_checks


def worst_status(statuses: Iterable[Status]) -> Status:
    """FAILED if any is FAILED, else ERROR if any is ERROR, else PASSED."""
    errored = False
    for status in statuses:
        if status == Status.FAILED:
            return Status.FAILED
        if status == Status.ERROR:
            errored = True
    return Status.ERROR if errored else Status.PASSED


def case_status(scores: Iterable[ScoreResult]) -> Status:
    """FAILED if any check failed, else ERROR if any errored, else PASSED."""
    return worst_status(s.status for s in scores)


def result_from_scores(
    case_id: str,
    scores: list[ScoreResult],
    *,
    duration_ms: float = 0.0,
    run_id: str | None = None,
) -> EvaluationResult:
    """Fold check results into a case result (status, mean score, one-line reason)."""
    if not scores:
        return error_result(
            case_id, "no checks configured for this case or its suite", duration_ms=duration_ms
        )
    failed = errored = 0
    total = 0.0
    for s in scores:
        st = s.status
        if st == _FAILED:
            failed += 1
        elif st != _PASSED:
            errored += 1
            continue
        total += check_score(s)
    n = len(scores)
    score = total / n
    if errored and not failed:
        score = 0.0
    if not failed and not errored:
        status = Status.PASSED
        reason = f"all {n} checks passed" if n != 1 else "all 1 check passed"
    else:
        status = Status.FAILED if failed else Status.ERROR
        parts = [f"{s.check}: {s.explanation}" for s in scores if s.status == Status.FAILED]
        parts += [f"{s.check} (error): {s.explanation}" for s in scores if s.status == Status.ERROR]
        reason = clip("; ".join(parts), _REASON_LIMIT)
    return build(
        EvaluationResult,
        {
            "case_id": case_id,
            "status": status,
            "score": score,
            "reason": reason,
            "checks": scores,
            "duration_ms": duration_ms,
            "run_id": run_id,
        },
    )


def check_reasons(result: EvaluationResult) -> list[str]:
    """Why a case did not pass, one whole line per check that failed or errored
    (``check: explanation``), in the case's check order; the case's reason when no check ran
    (an ERROR before scoring). Printed one per line, never joined and cut as ``reason`` is."""
    lines = [
        f"{s.check}{'' if s.status == _FAILED else ' (error)'}: {s.explanation}"
        for s in result.checks
        if s.status != _PASSED
    ]
    return lines or ([result.reason] if result.reason else [])


def check_score(s: ScoreResult) -> float:
    """What one check adds to its case's mean: its score; an ERROR check 0 (a check that
    reported no score: 1 when it passed, else 0)."""
    if s.status != _PASSED and s.status != _FAILED:
        return 0.0
    if s.score is None:
        return 1.0 if s.status == _PASSED else 0.0
    return s.score


def error_result(
    case_id: str,
    reason: str,
    *,
    duration_ms: float = 0.0,
    run_id: str | None = None,
    checks: list[ScoreResult] | None = None,
) -> EvaluationResult:
    """An ERROR case result (agent raised, timed out, no source run ...): it scores 0."""
    return build(
        EvaluationResult,
        {
            "case_id": case_id,
            "status": Status.ERROR,
            "score": 0.0,
            "reason": clip(reason, _REASON_LIMIT),
            "checks": checks or [],
            "duration_ms": duration_ms,
            "run_id": run_id,
        },
    )


def score_case(
    case: EvalCase,
    suite_checks: Sequence[CheckSpec],
    subject: CheckSubject,
    *,
    duration_ms: float = 0.0,
    run_id: str | None = None,
) -> EvaluationResult:
    """Run the case's checks (its own, else the suite's) on ``subject``. Never raises."""
    specs = resolve_checks(case, suite_checks)
    scores = [run_check(spec, subject) for spec in specs]
    return result_from_scores(case.id, scores, duration_ms=duration_ms, run_id=run_id)


def merge_repeats(results: Sequence[EvaluationResult]) -> EvaluationResult:
    """One result for a case run ``--repeat N`` times: it passes only if every repetition passed.

    The worst repetition (FAILED, then ERROR) supplies status, reason and check results; the
    score is the mean over every repetition (one without a score counts 0).
    """
    if not results:
        raise ValueError("merge_repeats needs at least one result")
    if len(results) == 1:
        return results[0]
    rank = {Status.FAILED: 0, Status.ERROR: 1, Status.PASSED: 2}
    worst_i = min(range(len(results)), key=lambda i: rank[results[i].status])
    worst = results[worst_i]
    n = len(results)
    bad = sum(1 for r in results if r.status != Status.PASSED)
    if worst.status == Status.PASSED:
        reason = f"all {n} repetitions passed"
    else:
        reason = f"{bad} of {n} repetitions did not pass; repetition {worst_i + 1}: {worst.reason}"
    return build(
        EvaluationResult,
        {
            "case_id": worst.case_id,
            "status": worst.status,
            "score": sum(r.score or 0.0 for r in results) / n,
            "reason": clip(reason, _REASON_LIMIT),
            "checks": worst.checks,
            "duration_ms": sum(r.duration_ms for r in results),
            "run_id": worst.run_id,
        },
    )


class EvalSummary(BaseModel):
    """Counts over the case results of one eval run."""

    total: int = 0
    passed: int = 0
    failed: int = 0
    errored: int = 0
    pass_rate: float = 0.0
    aggregate_score: float | None = None


def summarize(results: Iterable[EvaluationResult]) -> EvalSummary:
    """Counts, ``pass_rate`` = passed / total, ``aggregate_score`` = mean over every case (a
    case without a score counts 0; None only when there is no case)."""
    return summarize_outcomes((r.status, r.score) for r in results)


def summarize_outcomes(outcomes: Iterable[tuple[Status, float | None]]) -> EvalSummary:
    """``summarize`` over ``(status, score)`` pairs: what the columnar recorded path has
    instead of ``EvaluationResult`` objects."""
    total = passed = failed = errored = 0
    score_sum = 0.0
    for status, score in outcomes:
        total += 1
        if status == Status.PASSED:
            passed += 1
        elif status == Status.FAILED:
            failed += 1
        else:
            errored += 1
        if score is not None and status != Status.ERROR:
            score_sum += score
    return EvalSummary(
        total=total,
        passed=passed,
        failed=failed,
        errored=errored,
        pass_rate=passed / total if total else 0.0,
        aggregate_score=score_sum / total if total else None,
    )
