"""Recorded mode, columnar: score a whole suite's cases per check, not per case.

The cases and their source runs' results come from one SQL join as columns (rows of our own
tables, trusted: no per-row validation); each check runs once over the column of cases
(``run_check_batch``: its batch form, or its scalar function row by row); the case verdicts are
folded from the check columns, and ``case_results`` / ``check_results`` are written as Arrow
tables, one INSERT each. Result models (``EvaluationResult``, ``CaseReport`` ...) are built only
for the cases someone asks about (``CaseReports``), e.g. the CLI's failed cases or ``--json``.

Same results as scoring case by case (``score_recorded``), except the timing fields: a case's
``duration_ms`` is its share of the batch's scoring time, and all cases of a batch share
``started_at`` / ``finished_at``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, overload

import orjson
import pyarrow as pa

from tracereplay.checks.batch import CheckColumn, SubjectBatch, run_check_batch
from tracereplay.checks.common import clip
from tracereplay.checks.subject import CheckSubject
from tracereplay.evaluate.recorded.scoring import source_not_found_reason, subject_for_run
from tracereplay.models import CheckSpec, EvalCase, EvaluationResult, Status, ToolCallRecord
from tracereplay.models.fast import build
from tracereplay.scoring.outcomes import CaseReport, CaseRun
from tracereplay.scoring.verdicts import error_result, result_from_scores
from tracereplay.store.db import Store
from tracereplay.store.runs import load_runs
from tracereplay.store.suites import case_check_lists, cases_with_sources, get_cases

_TS = pa.timestamp("us", tz="UTC")
_PASSED, _ERROR = Status.PASSED, Status.ERROR
_REASON_LIMIT = 500


@dataclass
class RecordedCases:
    """A suite's cases (in ``seq`` order) with their source runs' results, as columns."""

    case_id: list[str]
    seq: list[int]
    expected_output: list[str | None]
    expected_tool_calls: list[str]
    checks: list[str | None]
    source_run_id: list[str | None]
    run_id: list[str | None]  # None: the source run is not in the store (or there is none)
    result: list[str | None]  # the run's AgentResult as JSON
    query: list[str]

    def __len__(self) -> int:
        return len(self.case_id)


def load_recorded_cases(store: Store, suite_id: str) -> RecordedCases:
    """The suite's cases joined with their source runs, in one query, in ``seq`` order."""
    table = cases_with_sources(store, suite_id)
    columns = [col.to_pylist() for col in table.columns]
    seq = columns[1]
    order = sorted(range(len(seq)), key=seq.__getitem__)  # cheaper here than ORDER BY's sort
    if any(i != j for i, j in enumerate(order)):
        columns = [[col[i] for i in order] for col in columns]
    return RecordedCases(*columns)


def case_check_overrides(store: Store, suite_id: str) -> list[list[CheckSpec]]:
    """The distinct per-case check lists of a suite (cases that override the suite's checks)."""
    return [
        [CheckSpec.model_validate(c) for c in orjson.loads(text)]
        for text in case_check_lists(store, suite_id)
    ]


def _json(value: Any) -> str:
    return orjson.dumps(value, default=str).decode() if value else "{}"


@dataclass
class _Group:
    """Cases scored by the same check list: their rows in the chunk and the check columns."""

    rows: list[int]
    specs: Sequence[CheckSpec]
    columns: list[CheckColumn]
    kinds: dict[str, str]


class ScoredCases:
    """One chunk of cases scored columnar: the case verdicts, and each check's column."""

    def __init__(
        self,
        store: Store,
        cases: RecordedCases,
        start: int,
        stop: int,
        suite_checks: Sequence[CheckSpec],
    ) -> None:
        self.started_at = datetime.now(UTC)
        n = stop - start
        self.case_id = cases.case_id[start:stop]
        self.seq = cases.seq[start:stop]
        self.query = cases.query[start:stop]
        self.source_run_id = cases.source_run_id[start:stop]
        self.run_id = cases.run_id[start:stop]
        results: list[dict[str, Any] | None] = [
            orjson.loads(r) if r else ({} if run is not None else None)
            for r, run in zip(cases.result[start:stop], self.run_id)
        ]
        self.response: list[str | None] = [
            None if r is None else r.get("response", "") for r in results
        ]
        self.calls: list[list[dict[str, Any]]] = [
            [] if r is None else r.get("tool_calls", []) for r in results
        ]
        self.status: list[Status] = [_ERROR] * n
        self.score: list[float | None] = [0.0] * n  # an ERROR case scores 0
        self.reason: list[str] = [""] * n
        self.duration_ms: list[float] = [0.0] * n
        self.result_run_id = list(self.run_id)  # what the case result names (None: no checks)
        self.groups: list[_Group] = []
        self._where: list[tuple[int, int] | None] = [None] * n  # row -> (group, row in group)

        by_checks: dict[str | None, list[int]] = {}
        overrides = cases.checks[start:stop]
        for i in range(n):
            if self.run_id[i] is None:
                why = source_not_found_reason(self.seq[i], self.source_run_id[i])
                self.reason[i] = clip(why, _REASON_LIMIT)
            else:
                by_checks.setdefault(overrides[i], []).append(i)
        exp_calls = cases.expected_tool_calls[start:stop]
        expected = cases.expected_output[start:stop]
        for key, rows in by_checks.items():
            specs = (
                suite_checks
                if key is None
                else [CheckSpec.model_validate(c) for c in orjson.loads(key)]
            )
            self._score_group(store, rows, specs, results, exp_calls, expected, cases, start)
        self.finished_at = datetime.now(UTC)

    def _score_group(
        self,
        store: Store,
        rows: list[int],
        specs: Sequence[CheckSpec],
        results: list[dict[str, Any] | None],
        exp_calls: list[str],
        expected: list[str | None],
        cases: RecordedCases,
        start: int,
    ) -> None:
        t0 = time.perf_counter()
        whole = len(rows) == len(self.case_id)
        pick: Callable[[list[Any]], list[Any]] = (
            (lambda col: col) if whole else (lambda col: [col[i] for i in rows])
        )
        res = pick(results)
        batch = SubjectBatch(
            expected_output=pick(expected),
            response=pick(self.response),
            result_status=[r.get("status", "success") for r in res],  # type: ignore[union-attr]
            expected_tool_calls_json=pick(exp_calls),
            tool_calls=pick(self.calls),
            loader=lambda sub: self._subjects(store, [rows[j] for j in sub], start),
        )
        columns = [run_check_batch(spec, batch) for spec in specs]
        group = _Group(rows, specs, columns, {s.label: s.kind for s in specs})
        gi = len(self.groups)
        self.groups.append(group)
        for j, i in enumerate(rows):
            self._where[i] = (gi, j)
        k = len(columns)
        # rows where every check passed: mean score, fixed reason; the others fold as
        # ``result_from_scores`` does, from their check results
        bad = {j for c in columns for j, st in enumerate(c.status) if st is not _PASSED}
        if not k:
            bad = set(range(len(rows)))
        totals = [0.0] * len(rows)
        for c in columns:
            # a passed check without a score counts 1, as ``check_score`` has it
            totals = [t + (1.0 if x is None else x) for t, x in zip(totals, c.score)]
        all_passed = f"all {k} checks passed" if k != 1 else "all 1 check passed"
        status, score, reason = self.status, self.score, self.reason
        for j, i in enumerate(rows):
            if j in bad:
                folded = result_from_scores(
                    self.case_id[i], [c.result(j) for c in columns], run_id=self.run_id[i]
                )
                status[i] = folded.status
                score[i] = folded.score
                reason[i] = folded.reason
                self.result_run_id[i] = folded.run_id
            else:
                status[i] = _PASSED
                score[i] = totals[j] / k
                reason[i] = all_passed
        share = (time.perf_counter() - t0) * 1000.0 / len(rows)
        for i in rows:
            self.duration_ms[i] = share

    def _subjects(self, store: Store, rows: list[int], start: int) -> list[CheckSubject]:
        """Full subjects for rows a check scores one by one (read from the store)."""
        found = {c.id: c for c in get_cases(store, [self.case_id[i] for i in rows])}
        runs = load_runs(store, [self.run_id[i] for i in rows if self.run_id[i]])
        return [
            subject_for_run(found[self.case_id[i]], runs[self.run_id[i]])  # type: ignore[index]
            for i in rows
        ]

    # ------------------------------------------------------------------ results
    def __len__(self) -> int:
        return len(self.case_id)

    def case_table(self, eval_run_id: str, suite_id: str) -> pa.Table:
        """The chunk's ``case_results`` rows."""
        n = len(self.case_id)
        return pa.table(
            {
                "eval_run_id": pa.repeat(eval_run_id, n),
                "case_id": self.case_id,
                "repetition": pa.repeat(pa.scalar(0, pa.int32()), n),
                "suite_id": pa.repeat(suite_id, n),
                "seq": pa.array(self.seq, pa.int32()),
                "status": pa.array(self.status, pa.string()),
                "score": pa.array(self.score, pa.float64()),
                "reason": self.reason,
                "attempts": pa.repeat(pa.scalar(1, pa.int32()), n),
                "duration_ms": pa.array(self.duration_ms, pa.float64()),
                "run_id": pa.array(self.result_run_id, pa.string()),
                "source_run_id": pa.array(self.source_run_id, pa.string()),
                "response": pa.array(self.response, pa.string()),
                "tool_calls": [orjson.dumps(c).decode() if c else "[]" for c in self.calls],
                "drift": pa.nulls(n, pa.string()),
                "started_at": pa.repeat(pa.scalar(self.started_at, _TS), n),
                "finished_at": pa.repeat(pa.scalar(self.finished_at, _TS), n),
            }
        )

    def check_table(self, eval_run_id: str) -> pa.Table:
        """The chunk's ``check_results`` rows."""
        case_id: list[str] = []
        position: list[int] = []
        name: list[str] = []
        kind: list[str] = []
        status: list[Status] = []
        passed: list[bool] = []
        score: list[float | None] = []
        explanation: list[str] = []
        details: list[str] = []
        for group in self.groups:
            ids = [self.case_id[i] for i in group.rows]
            m = len(ids)
            for p, col in enumerate(group.columns):
                case_id += ids
                position += [p] * m
                name += [col.label] * m
                kind += [group.kinds.get(col.label, col.label)] * m
                status += col.status
                passed += col.passed
                score += col.score
                explanation += col.explanation
                details += [_json(d) for d in col.details]
        m = len(case_id)
        return pa.table(
            {
                "eval_run_id": pa.repeat(eval_run_id, m),
                "case_id": case_id,
                "repetition": pa.repeat(pa.scalar(0, pa.int32()), m),
                "position": pa.array(position, pa.int32()),
                "check_name": name,
                "check_kind": kind,
                "status": pa.array(status, pa.string()),
                "passed": pa.array(passed, pa.bool_()),
                "score": pa.array(score, pa.float64()),
                "explanation": explanation,
                "details": details,
            }
        )

    def result(self, i: int) -> EvaluationResult:
        """Row ``i``'s case result, with its check results."""
        where = self._where[i]
        if where is None:
            return error_result(self.case_id[i], self.reason[i])
        gi, j = where
        return build(
            EvaluationResult,
            {
                "case_id": self.case_id[i],
                "status": self.status[i],
                "score": self.score[i],
                "reason": self.reason[i],
                "checks": [c.result(j) for c in self.groups[gi].columns],
                "duration_ms": self.duration_ms[i],
                "run_id": self.result_run_id[i],
            },
        )

    def case_run(self, i: int) -> CaseRun:
        """Row ``i`` as the ``CaseRun`` scoring it case by case would have made."""
        return build(
            CaseRun,
            {
                "case_id": self.case_id[i],
                "seq": self.seq[i],
                "repetition": 0,
                "attempts": 1,
                "result": self.result(i),
                "source_run_id": self.source_run_id[i],
                "response": self.response[i],
                "tool_calls": [ToolCallRecord.model_validate(c) for c in self.calls[i]],
                "replay": None,
                "started_at": self.started_at,
                "finished_at": self.finished_at,
                "turn": None,
                "turns": [],
            },
        )


class CaseReports(Sequence[CaseReport]):
    """The ``CaseReport`` of every scored case (in ``seq`` order), each built on first access;
    ``load_cases(ids)`` supplies the ``EvalCase`` objects."""

    def __init__(
        self, chunks: Sequence[ScoredCases], load_cases: Callable[[list[str]], list[EvalCase]]
    ) -> None:
        self._index = [(c, i) for c in chunks for i in range(len(c))]
        self._load_cases = load_cases
        self._built: dict[int, CaseReport] = {}

    def __len__(self) -> int:
        return len(self._index)

    def status(self, k: int) -> Status:
        chunk, i = self._index[k]
        return chunk.status[i]

    def brief(self, k: int) -> tuple[int, str, Status, float]:
        """``(seq, query, status, duration_ms)`` of case ``k``, without building its report
        (what a JUnit ``testcase`` of a passed case needs)."""
        chunk, i = self._index[k]
        return chunk.seq[i], chunk.query[i], chunk.status[i], chunk.duration_ms[i]

    def _build(self, ks: list[int]) -> list[CaseReport]:
        todo = [k for k in ks if k not in self._built]
        if todo:
            ids = [self._index[k][0].case_id[self._index[k][1]] for k in todo]
            cases = {c.id: c for c in self._load_cases(ids)}
            for k, case_id in zip(todo, ids):
                chunk, i = self._index[k]
                run = chunk.case_run(i)
                self._built[k] = build(
                    CaseReport, {"case": cases[case_id], "result": run.result, "runs": [run]}
                )
        return [self._built[k] for k in ks]

    @overload
    def __getitem__(self, k: int) -> CaseReport: ...

    @overload
    def __getitem__(self, k: slice) -> list[CaseReport]: ...

    def __getitem__(self, k: int | slice) -> CaseReport | list[CaseReport]:
        if isinstance(k, slice):
            return self._build(list(range(len(self)))[k])
        if k < 0:
            k += len(self)
        if not 0 <= k < len(self):
            raise IndexError(k)
        return self._build([k])[0]

    def __iter__(self) -> Iterator[CaseReport]:
        return iter(self._build(list(range(len(self)))))

    def not_passed(self) -> list[CaseReport]:
        """The reports of the cases that did not pass (only those are built)."""
        return self._build([k for k in range(len(self)) if self.status(k) is not _PASSED])
