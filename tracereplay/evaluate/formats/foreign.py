"""Eval results in other tools' shapes (``tracereplay eval --format ...``).

- ``agenticassure-json``: AgenticAssure 0.4.0's ``RunResult`` JSON (what ``agenticassure run
  --output json`` writes): one ``ScenarioRunResult`` per case, the scenario given back from
  the case (and what ``suite import`` kept of it under ``metadata.agenticassure``), one
  ``ScoreResult`` per check.
- ``testing-api-json``: a list of testing-api ``EvaluationResult`` objects (``caseId``,
  ``status``, ``score``, ``reason``); ``caseId`` is the TestCase's when the case came from a
  TestSet, else the case id.

The eval defaults ``suite import`` keeps of an AgenticAssure suite's ``config`` are read by
``evaluate.settings.suite_eval_defaults``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from tracereplay.errors import BadParameterError
from tracereplay.models import EvalCase, Status

if TYPE_CHECKING:
    from tracereplay.evaluate.evaluation import EvalOutcome
    from tracereplay.scoring.outcomes import CaseReport

FORMATS = ("agenticassure-json", "testing-api-json")
AA_META = "agenticassure"
TESTING_API_META = "testing_api"


# ---------------------------------------------------------------------- AgenticAssure
def scenario_of(case: EvalCase, check_labels: Sequence[str]) -> dict[str, Any]:
    """The AgenticAssure ``Scenario`` a case stands for."""
    kept = case.metadata.get(AA_META)
    kept = kept if isinstance(kept, dict) else {}
    if kept:  # a scenario imported from AgenticAssure: its own fields, as written
        tools = kept.get("expected_tools")
        tool_args = kept.get("expected_tool_args")
        scorers = kept.get("scorers", ["passfail"])
    else:
        tools = [c.name for c in case.expected_tool_calls] or None
        tool_args = {
            c.name: c.arguments for c in case.expected_tool_calls if c.arguments is not None
        } or None
        scorers = list(check_labels)
    return {
        "id": str(kept.get("id", case.id)),
        "name": kept.get("name", f"case-{case.seq}"),
        "description": kept.get("description"),
        "input": case.query,
        "expected_output": case.expected_output,
        "expected_tools": tools,
        "expected_tool_args": tool_args,
        "tags": list(case.tags),
        "metadata": {k: v for k, v in case.metadata.items() if k != AA_META},
        "scorers": list(scorers),
        "timeout_seconds": float(kept.get("timeout_seconds", 30.0)),
    }


def agenticassure_run_result(outcome: EvalOutcome) -> dict[str, Any]:
    """The eval run as AgenticAssure's ``RunResult`` (JSON-ready)."""
    results = [_scenario_result(r) for r in outcome.reports]
    n = len(results)
    total_score = sum(
        sum(s["score"] for s in sr["scores"]) / len(sr["scores"]) for sr in results if sr["scores"]
    )
    rec = outcome.record
    return {
        "run_id": rec.eval_run_id,
        "timestamp": rec.started_at.isoformat().replace("+00:00", "Z"),
        "suite_name": rec.suite_name,
        "scenario_results": results,
        "aggregate_score": total_score / n if n else 0.0,
        "pass_rate": sum(1 for sr in results if sr["passed"]) / n if n else 0.0,
        "total_duration_ms": sum(sr["duration_ms"] for sr in results),
        "model_info": None,
    }


def _scenario_result(report: CaseReport) -> dict[str, Any]:
    result = report.result
    first = report.runs[0] if report.runs else None
    scenario = scenario_of(report.case, [s.check for s in result.checks])
    scores = [
        {
            "scenario_id": scenario["id"],
            "scorer_name": s.check,
            "score": s.score if s.score is not None else 0.0,
            "passed": s.passed,
            "explanation": s.explanation,
            "details": s.details or None,
        }
        for s in result.checks
    ]
    tool_calls = first.tool_calls if first is not None else []
    return {
        "scenario": scenario,
        "agent_result": {
            "output": (first.response if first is not None else None) or "",
            "tool_calls": [
                {"name": t.tool_name, "arguments": t.arguments, "result": t.result or None}
                for t in tool_calls
            ],
            "reasoning_trace": None,
            "latency_ms": result.duration_ms,
            "token_usage": None,
            "raw_response": None,
        },
        "scores": scores,
        "passed": result.status is Status.PASSED,
        "duration_ms": result.duration_ms,
        "error": result.reason if result.status is Status.ERROR else None,
        "retry_count": max(0, first.attempts - 1) if first is not None else 0,
    }


# ---------------------------------------------------------------------- testing-api
def testing_api_results(reports: Iterable[CaseReport]) -> list[dict[str, Any]]:
    """Each case as a testing-api ``EvaluationResult``."""
    out = []
    for r in reports:
        kept = r.case.metadata.get(TESTING_API_META)
        case_id = kept.get("caseId") if isinstance(kept, dict) else None
        out.append(
            {
                "caseId": case_id if case_id is not None else r.case.id,
                "status": r.result.status.value,
                "score": r.result.score if r.result.score is not None else 0.0,
                "reason": r.result.reason,
            }
        )
    return out


def format_results(outcome: EvalOutcome, fmt: str) -> Any:
    """The document ``eval --format fmt`` writes."""
    if fmt == "agenticassure-json":
        return agenticassure_run_result(outcome)
    if fmt == "testing-api-json":
        return testing_api_results(outcome.reports)
    raise BadParameterError(f"unknown format {fmt!r} (choose one of {', '.join(FORMATS)})")
