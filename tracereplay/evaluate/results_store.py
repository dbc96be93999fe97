"""Reads and writes of ``eval_runs``, ``case_results`` and ``check_results``.

The caller owns the store (and the transaction); writes are columnar batches (Arrow).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import orjson
import pyarrow as pa

from tracereplay.errors import AmbiguousIdError, NotFoundError
from tracereplay.evaluate.outcomes import CaseRun, EvalRunRecord, ReplayReport
from tracereplay.evaluate.recorded.columnar import ScoredCases
from tracereplay.models import EvaluationResult, ScoreResult, Status, ToolCallRecord
from tracereplay.store.db import Store

_TS = pa.timestamp("us", tz="UTC")

EVAL_RUN_COLUMNS = (
    "eval_run_id", "suite_id", "suite_name", "mode", "agent", "label", "started_at",
    "finished_at", "git_commit", "git_dirty", "status", "total_cases", "passed", "failed",
    "errored", "pass_rate", "aggregate_score", "options",
)  # fmt: skip


def _json(value: Any) -> str:
    return orjson.dumps(value, default=str).decode()


def _utc(dt: datetime | None) -> datetime | None:
    if dt is None:
        return None
    return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)


# ---------------------------------------------------------------------- eval_runs
def _run_values(record: EvalRunRecord) -> list[Any]:
    data = record.model_dump()
    data["started_at"] = _utc(record.started_at)
    data["finished_at"] = _utc(record.finished_at)
    data["options"] = _json(record.options)
    return [data[c] for c in EVAL_RUN_COLUMNS]


def insert_eval_run(store: Store, record: EvalRunRecord) -> None:
    """Add the eval run's row (status ``running`` while its cases run)."""
    store.insert_row("eval_runs", EVAL_RUN_COLUMNS, _run_values(record))


def update_eval_run(store: Store, record: EvalRunRecord) -> None:
    """Write every field of ``record`` over its stored row."""
    store.update_row("eval_runs", EVAL_RUN_COLUMNS, _run_values(record))


def resolve_eval_run_id(store: Store, ident: str) -> str:
    """The eval run id a unique prefix names; NotFound / Ambiguous errors otherwise."""
    text = ident.strip().lower()
    if not text:
        raise NotFoundError("an empty eval run id matches nothing")
    rows = store.con.execute(
        "SELECT eval_run_id FROM eval_runs WHERE starts_with(eval_run_id, ?)"
        " ORDER BY eval_run_id LIMIT 6",
        [text],
    ).fetchall()
    if len(rows) == 1:
        return str(rows[0][0])
    if len(rows) > 1:
        listed = ", ".join(r[0] for r in rows[:5])
        raise AmbiguousIdError(f"eval run id '{ident}' is ambiguous: it starts {listed}...")
    raise NotFoundError(f"no eval run id starts with '{ident}'")


def get_eval_run(store: Store, ident: str) -> EvalRunRecord:
    """The eval run a unique id prefix names."""
    run_id = resolve_eval_run_id(store, ident)
    rows = store.con.execute(
        f"SELECT {', '.join(EVAL_RUN_COLUMNS)} FROM eval_runs WHERE eval_run_id = ?", [run_id]
    ).fetchall()
    data = dict(zip(EVAL_RUN_COLUMNS, rows[0]))
    data["options"] = orjson.loads(data["options"]) if data["options"] else {}
    for col in ("total_cases", "passed", "failed", "errored"):
        data[col] = data[col] or 0
    return EvalRunRecord.model_validate(data)


# ---------------------------------------------------------------------- case and check results
def insert_case_runs(
    store: Store,
    eval_run_id: str,
    suite_id: str,
    runs: Sequence[CaseRun],
    check_kinds: Mapping[str, Mapping[str, str]],
) -> None:
    """Add ``runs`` and their check results. ``check_kinds[case_id][label]`` is the kind of the
    check named ``label`` in that case (the label itself when unknown)."""
    if not runs:
        return
    n = len(runs)
    cases = pa.table(
        {
            "eval_run_id": [eval_run_id] * n,
            "case_id": [r.case_id for r in runs],
            "repetition": pa.array([r.repetition for r in runs], pa.int32()),
            "suite_id": [suite_id] * n,
            "seq": pa.array([r.seq for r in runs], pa.int32()),
            "status": [r.result.status.value for r in runs],
            "score": pa.array([r.result.score for r in runs], pa.float64()),
            "reason": [r.result.reason for r in runs],
            "attempts": pa.array([r.attempts for r in runs], pa.int32()),
            "duration_ms": pa.array([r.result.duration_ms for r in runs], pa.float64()),
            "run_id": pa.array([r.result.run_id for r in runs], pa.string()),
            "source_run_id": pa.array([r.source_run_id for r in runs], pa.string()),
            "response": pa.array([r.response for r in runs], pa.string()),
            "tool_calls": [_json([t.__dict__ for t in r.tool_calls]) for r in runs],
            "drift": pa.array(
                [None if r.replay is None else _json(r.replay.to_dict()) for r in runs],
                pa.string(),
            ),
            "started_at": pa.array([_utc(r.started_at) for r in runs], _TS),
            "finished_at": pa.array([_utc(r.finished_at) for r in runs], _TS),
        }
    )
    store.append_table("case_results", cases)
    checks = [(r, i, s) for r in runs for i, s in enumerate(r.result.checks)]
    if not checks:
        return
    m = len(checks)
    table = pa.table(
        {
            "eval_run_id": [eval_run_id] * m,
            "case_id": [r.case_id for r, _, _ in checks],
            "repetition": pa.array([r.repetition for r, _, _ in checks], pa.int32()),
            "position": pa.array([i for _, i, _ in checks], pa.int32()),
            "check_name": [s.check for _, _, s in checks],
            "check_kind": [
                check_kinds.get(r.case_id, {}).get(s.check, s.check) for r, _, s in checks
            ],
            "status": [s.status.value for _, _, s in checks],
            "passed": pa.array([s.passed for _, _, s in checks], pa.bool_()),
            "score": pa.array([s.score for _, _, s in checks], pa.float64()),
            "explanation": [s.explanation for _, _, s in checks],
            "details": [_json(s.details) for _, _, s in checks],
        }
    )
    store.append_table("check_results", table)


def insert_scored(store: Store, eval_run_id: str, suite_id: str, scored: ScoredCases) -> None:
    """Add a columnar-scored chunk of cases (``recorded_batch``) and its check results."""
    if not len(scored):
        return
    store.append_table("case_results", scored.case_table(eval_run_id, suite_id))
    checks = scored.check_table(eval_run_id)
    if checks.num_rows:
        store.append_table("check_results", checks)


_CASE_COLUMNS = (
    "case_id", "repetition", "seq", "status", "score", "reason", "attempts", "duration_ms",
    "run_id", "source_run_id", "response", "tool_calls", "drift", "started_at", "finished_at",
)  # fmt: skip


def load_case_runs(store: Store, eval_run_id: str, *, with_checks: bool = True) -> list[CaseRun]:
    """The stored results of an eval run, by ``seq`` then repetition."""
    rows = store.con.execute(
        f"SELECT {', '.join(_CASE_COLUMNS)} FROM case_results WHERE eval_run_id = ?"
        " ORDER BY seq, case_id, repetition",
        [eval_run_id],
    ).fetchall()
    checks: dict[tuple[str, int], list[ScoreResult]] = {}
    if with_checks:
        for case_id, rep, name, status, passed, score, explanation, details in store.con.execute(
            "SELECT case_id, repetition, check_name, status, passed, score, explanation, details"
            " FROM check_results WHERE eval_run_id = ? ORDER BY case_id, repetition, position",
            [eval_run_id],
        ).fetchall():
            checks.setdefault((case_id, rep), []).append(
                ScoreResult(
                    check=name,
                    status=Status(status),
                    passed=passed,
                    score=score,
                    explanation=explanation or "",
                    details=orjson.loads(details) if details else {},
                )
            )
    out: list[CaseRun] = []
    for row in rows:
        d = dict(zip(_CASE_COLUMNS, row))
        out.append(
            CaseRun(
                case_id=d["case_id"],
                seq=d["seq"] or 0,
                repetition=d["repetition"],
                attempts=d["attempts"] or 1,
                result=EvaluationResult(
                    case_id=d["case_id"],
                    status=Status(d["status"]),
                    score=d["score"],
                    reason=d["reason"] or "",
                    checks=checks.get((d["case_id"], d["repetition"]), []),
                    duration_ms=d["duration_ms"] or 0.0,
                    run_id=d["run_id"],
                ),
                source_run_id=d["source_run_id"],
                response=d["response"],
                tool_calls=[
                    ToolCallRecord.model_validate(t) for t in orjson.loads(d["tool_calls"] or "[]")
                ],
                replay=ReplayReport.model_validate_json(d["drift"]) if d["drift"] else None,
                started_at=_utc(d["started_at"]),
                finished_at=_utc(d["finished_at"]),
            )
        )
    return out
