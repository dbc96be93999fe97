"""Judging one live run with a monitor's checks: the rows it adds to ``monitor_results`` and,
for each judge call, ``monitor_judge_calls``.

A live run has no expected output: the checks see it as a case whose query and context are the
run's own (``CheckSubject`` as recorded-mode scoring builds it), so ``status``, budgets, JSON,
regex and ``llmJudge`` judge it; checks that compare with an expectation behave as they do on a
case promoted without one. ``llmJudge`` calls go through the limiter first.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from tracereplay.checks.registry import error_score, run_check
from tracereplay.checks.subject import CheckSubject
from tracereplay.models import EvalCase
from tracereplay.models.run import Run
from tracereplay.monitor.definition import Monitor
from tracereplay.monitor.limiter import JudgeLimiter

#: check kinds that call a model, paced by the limiter
JUDGE_KINDS = frozenset({"llmJudge"})


@dataclass
class Judged:
    """One run judged by one monitor: a row per check, a row per judge call."""

    monitor: str
    run_id: str
    results: list[dict[str, Any]] = field(default_factory=list)
    judge_calls: list[dict[str, Any]] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return any(r["status"] == "FAILED" for r in self.results)


def run_case(run: Run) -> EvalCase:
    """The run seen as a case that expects nothing (what the checks take)."""
    return EvalCase(
        id=run.run_id,
        suite_id=run.run_id,
        seq=0,
        query=run.query or "(no query recorded)",
        context=run.context,
        source_run_id=run.run_id,
    )


def judge_run(
    monitor: Monitor, run: Run, converted_at: datetime | None, limiter: JudgeLimiter
) -> Judged | None:
    """Every check of ``monitor`` on ``run``; None when the limiter was stopped mid-way (a
    shutdown: nothing of the run is kept, it stays pending)."""
    subject = CheckSubject(case=run_case(run), result=run.result, run=run)
    out = Judged(monitor.name, run.run_id)
    for spec in monitor.checks:
        if spec.kind in JUDGE_KINDS and not limiter.acquire():
            return None
        started = datetime.now(UTC)
        try:
            score = run_check(spec, subject)
        except Exception as exc:  # run_check never raises; a bug still judges nothing wrongly
            score = error_score(spec.label, f"{type(exc).__name__}: {exc}")
        details = dict(score.details)
        usage = details.get("usage") if spec.kind in JUDGE_KINDS else None
        if spec.kind in JUDGE_KINDS:
            out.judge_calls.append(
                {
                    "monitor": monitor.name,
                    "run_id": run.run_id,
                    "check_name": spec.label,
                    "model": details.get("model") or spec.options.get("model"),
                    "endpoint": details.get("endpoint"),
                    "input_tokens": (usage or {}).get("input_tokens"),
                    "output_tokens": (usage or {}).get("output_tokens"),
                    "duration_ms": (usage or {}).get("duration_ms"),
                    "error": None if usage else score.explanation,
                    "started_at": started,
                }
            )
        out.results.append(
            {
                "monitor": monitor.name,
                "run_id": run.run_id,
                "trace_id": run.trace_id,
                "agent_name": run.agent_name,
                "check_name": spec.label,
                "check_kind": spec.kind,
                "status": score.status.value,
                "passed": score.passed,
                "score": score.score,
                "reason": score.explanation,
                "details": details,
                "run_started_at": run.started_at,
                "run_converted_at": converted_at,
            }
        )
    return out
