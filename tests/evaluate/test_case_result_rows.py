"""``CaseResultRows``: an eval's results gathered one at a time and written in batches land in
``case_results`` and ``check_results`` once each, with every value they carry."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tracereplay.evaluate.results_store import CaseResultRows, load_case_runs
from tracereplay.models import EvaluationResult, ScoreResult, Status, ToolCallRecord
from tracereplay.scoring.outcomes import CaseRun, ReplayReport
from tracereplay.store import Store

T0 = datetime(2026, 12, 4, 9, 0, tzinfo=UTC)
EVAL_RUN, SUITE = str(uuid.UUID(int=1)), str(uuid.UUID(int=2))


def _run(i: int, status: Status) -> CaseRun:
    checks = [
        ScoreResult(check="status", status=Status.PASSED, passed=True, score=1.0),
        ScoreResult(
            check="judge", status=status, passed=status is Status.PASSED, score=0.5,
            explanation=f"case {i}", details={"n": i},
        ),
    ]  # fmt: skip
    return CaseRun(
        case_id=str(uuid.UUID(int=100 + i)),
        seq=i,
        repetition=i % 2,
        attempts=1 + i % 3,
        result=EvaluationResult(
            case_id=str(uuid.UUID(int=100 + i)), status=status, score=0.5 + i / 10,
            reason="" if status is Status.PASSED else f"reason {i}", duration_ms=i * 1.5,
            run_id=f"run-{i}", checks=checks,
        ),
        source_run_id=f"source-{i}" if i % 2 else None,
        response=f"answer {i}",
        tool_calls=[ToolCallRecord(round=1, tool_name="get_weather", arguments={"city": f"c{i}"})],
        replay=ReplayReport(answered=i, tools_live=i) if i % 2 else None,
        started_at=T0 + timedelta(seconds=i),
        finished_at=T0 + timedelta(seconds=i, milliseconds=250),
    )  # fmt: skip


def test_rows_written_in_batches_read_back_as_the_results(tmp_path: Path) -> None:
    runs = [_run(i, Status.PASSED if i % 3 else Status.FAILED) for i in range(5)]
    rows = CaseResultRows(EVAL_RUN, SUITE)
    with Store.open(tmp_path / "r.duckdb") as store:
        for run in runs[:3]:
            rows.add(run, {"judge": "llm_judge"})
        assert len(rows) == 3
        with store.transaction():
            rows.write(store)
        assert len(rows) == 0  # written rows are forgotten: a second write adds only the new
        for run in runs[3:]:
            rows.add(run, {})
        with store.transaction():
            rows.write(store)
            rows.write(store)  # nothing gathered: nothing written
        back = load_case_runs(store, EVAL_RUN)
        counts = store.con.execute(
            "SELECT (SELECT count(*) FROM case_results), (SELECT count(*) FROM check_results)"
        ).fetchone()
        kinds = store.con.execute(
            "SELECT seq, check_kind FROM check_results JOIN case_results USING (case_id)"
            " WHERE position = 1 ORDER BY seq"
        ).fetchall()
    assert counts == (5, 10)
    assert sorted(back, key=lambda r: r.seq) == runs
    # a check's kind as the case resolved it, else its label
    assert kinds == [
        (0, "llm_judge"),
        (1, "llm_judge"),
        (2, "llm_judge"),
        (3, "judge"),
        (4, "judge"),
    ]
