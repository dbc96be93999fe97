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
from tracereplay.evaluate.recorded.columnar import ScoredCases
from tracereplay.models import EvaluationResult, ScoreResult, Status, ToolCallRecord
from tracereplay.scoring.outcomes import CaseRun, EvalRunRecord, ReplayReport
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
    rows = CaseResultRows(eval_run_id, suite_id)
    for run in runs:
        rows.add(run, check_kinds.get(run.case_id, {}))
    rows.write(store)


#: ``case_results``' columns, each with its Arrow type (None: inferred, text)
_CASE_TYPES: dict[str, pa.DataType | None] = {
    "case_id": None, "repetition": pa.int32(), "seq": pa.int32(), "status": None,
    "score": pa.float64(), "reason": None, "attempts": pa.int32(), "duration_ms": pa.float64(),
    "run_id": pa.string(), "source_run_id": pa.string(), "response": pa.string(),
    "tool_calls": None, "drift": pa.string(), "started_at": _TS, "finished_at": _TS,
    "turn": pa.int32(),
}  # fmt: skip
_CHECK_TYPES: dict[str, pa.DataType | None] = {
    "case_id": None, "repetition": pa.int32(), "position": pa.int32(), "check_name": None,
    "check_kind": None, "status": None, "passed": pa.bool_(), "score": pa.float64(),
    "explanation": None, "details": None, "turn": pa.int32(),
}  # fmt: skip


class CaseResultRows:
    """The ``case_results`` and ``check_results`` rows of an eval run's results, gathered one
    result at a time (``add``) and written as two columnar batches (``write``).

    One pass over each result, not one per column over the whole batch: each result is read
    once while it is in cache (``benchmarks/RESULTS.md``, "eval"). An eval adds each result
    as it arrives, so the gathering happens while cases run, not after the last one."""

    def __init__(self, eval_run_id: str, suite_id: str) -> None:
        self.eval_run_id = eval_run_id
        self.suite_id = suite_id
        self._cases: dict[str, list[Any]] = {c: [] for c in _CASE_TYPES}
        self._checks: dict[str, list[Any]] = {c: [] for c in _CHECK_TYPES}

    def __len__(self) -> int:
        return len(self._cases["case_id"])

    def add(self, run: CaseRun, kinds: Mapping[str, str]) -> None:
        """Gather ``run``'s row and its checks' rows, then its turns' (a multi-turn case: one
        row each, with its turn number); ``kinds[label]`` is the kind of its check named
        ``label`` (the label itself when unknown)."""
        self._add(run, kinds)
        for turn in run.turns:
            self._add(turn, kinds)

    def _add(self, run: CaseRun, kinds: Mapping[str, str]) -> None:
        c, result = self._cases, run.result
        c["case_id"].append(run.case_id)
        c["repetition"].append(run.repetition)
        c["seq"].append(run.seq)
        c["status"].append(result.status.value)
        c["score"].append(result.score)
        c["reason"].append(result.reason)
        c["attempts"].append(run.attempts)
        c["duration_ms"].append(result.duration_ms)
        c["run_id"].append(result.run_id)
        c["source_run_id"].append(run.source_run_id)
        c["response"].append(run.response)
        c["tool_calls"].append(_json([t.__dict__ for t in run.tool_calls]))
        c["drift"].append(None if run.replay is None else _json(run.replay.to_dict()))
        c["started_at"].append(_utc(run.started_at))
        c["finished_at"].append(_utc(run.finished_at))
        c["turn"].append(run.turn)
        k = self._checks
        for position, s in enumerate(result.checks):
            k["case_id"].append(run.case_id)
            k["repetition"].append(run.repetition)
            k["position"].append(position)
            k["check_name"].append(s.check)
            k["check_kind"].append(kinds.get(s.check, s.check))
            k["status"].append(s.status.value)
            k["passed"].append(s.passed)
            k["score"].append(s.score)
            k["explanation"].append(s.explanation)
            k["details"].append(_json(s.details))
            k["turn"].append(run.turn)

    def write(self, store: Store) -> None:
        """Append the rows gathered so far (in the caller's transaction), then forget them."""
        run = {"eval_run_id": self.eval_run_id}
        for table, columns, types, same in (
            ("case_results", self._cases, _CASE_TYPES, {**run, "suite_id": self.suite_id}),
            ("check_results", self._checks, _CHECK_TYPES, run),
        ):
            n = len(columns["case_id"])
            if not n:
                continue
            arrays: dict[str, Any] = {name: [value] * n for name, value in same.items()}
            for name, values in columns.items():
                arrays[name] = values if types[name] is None else pa.array(values, types[name])
                columns[name] = []
            store.append_table(table, pa.table(arrays))


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
    "turn",
)  # fmt: skip


def load_case_runs(store: Store, eval_run_id: str, *, with_checks: bool = True) -> list[CaseRun]:
    """The stored results of an eval run, by ``seq`` then repetition; a multi-turn case's
    turns in its ``turns``."""
    rows = store.con.execute(
        f"SELECT {', '.join(_CASE_COLUMNS)} FROM case_results WHERE eval_run_id = ?"
        " ORDER BY seq, case_id, repetition, turn NULLS FIRST",
        [eval_run_id],
    ).fetchall()
    checks: dict[tuple[str, int, int | None], list[ScoreResult]] = {}
    if with_checks:
        for (
            case_id,
            rep,
            turn,
            name,
            status,
            passed,
            score,
            explanation,
            details,
        ) in store.con.execute(
            "SELECT case_id, repetition, turn, check_name, status, passed, score,"
            " explanation, details FROM check_results WHERE eval_run_id = ?"
            " ORDER BY case_id, repetition, turn NULLS FIRST, position",
            [eval_run_id],
        ).fetchall():
            checks.setdefault((case_id, rep, turn), []).append(
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
        run = CaseRun(
            case_id=d["case_id"],
            seq=d["seq"] or 0,
            repetition=d["repetition"],
            attempts=d["attempts"] or 1,
            result=EvaluationResult(
                case_id=d["case_id"],
                status=Status(d["status"]),
                score=d["score"],
                reason=d["reason"] or "",
                checks=checks.get((d["case_id"], d["repetition"], d["turn"]), []),
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
            turn=d["turn"],
        )
        if run.turn is None:
            out.append(run)
        elif out and out[-1].case_id == run.case_id and out[-1].repetition == run.repetition:
            out[-1].turns.append(run)
    return out
