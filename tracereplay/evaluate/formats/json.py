"""The ``--json`` document of an eval (``eval --json``, ``replay --json``): the eval run and
each case with its checks and repetitions, replay reports included."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    from tracereplay.evaluate.evaluation import EvalOutcome
    from tracereplay.scoring.outcomes import CaseRun


def outcome_json(outcome: EvalOutcome) -> dict[str, Any]:
    """The ``--json`` document: the eval run and each case with its checks and repetitions."""
    cases = []
    p_values = outcome.gates.p_values() if outcome.gates is not None else {}
    for r in outcome.reports:
        cases.append(
            {
                "case_id": r.case.id,
                "seq": r.case.seq,
                "query": r.case.query,
                "tags": r.case.tags,
                **r.result.model_dump(mode="json"),
                **({"p_value": p_values[r.case.id]} if r.case.id in p_values else {}),
                "repetitions": [
                    {
                        **_run(x),
                        **({"turns": [_run(t) for t in x.turns]} if x.turns else {}),
                    }
                    for x in r.runs
                ],
            }
        )
    doc: dict[str, Any] = {"eval_run": outcome.record.to_dict(), "cases": cases}
    if outcome.gates is not None:
        doc["gates"] = outcome.gates.to_dict()
    return doc


def _run(x: CaseRun) -> dict[str, Any]:
    """One repetition of a case (or one turn of a multi-turn case: its ``turn`` number)."""
    return {
        **({"turn": x.turn} if x.turn is not None else {}),
        "repetition": x.repetition,
        "attempts": x.attempts,
        "status": x.status.value,
        "score": x.result.score,
        "reason": x.result.reason,
        "run_id": x.result.run_id,
        "source_run_id": x.source_run_id,
        "response": x.response,
        "tool_calls": [t.to_dict() for t in x.tool_calls],
        "replay": x.replay.to_dict() if x.replay is not None else None,
    }


def write_json(path: Path, outcome: EvalOutcome) -> None:
    """``outcome_json`` indented to ``path`` (its folder made when missing)."""
    data = orjson.dumps(outcome_json(outcome), option=orjson.OPT_INDENT_2) + b"\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
