"""The stable views (migration 0004) on data written through the stores' own insert paths:
``Store.replace_runs`` for runs, the eval runner's results writer for eval results."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tracereplay.evaluate.results_store import insert_case_runs, insert_eval_run
from tracereplay.models import (
    AgentResult,
    EvaluationResult,
    Run,
    ScoreResult,
    Status,
    ToolCallRecord,
)
from tracereplay.scoring.outcomes import CaseRun, EvalRunRecord
from tracereplay.store import Store

T0 = datetime(2026, 11, 1, 23, 30, tzinfo=UTC)
SUITE = str(uuid.UUID(int=1))

P, F, E = Status.PASSED, Status.FAILED, Status.ERROR


def _check(name: str, status: Status, score: float | None) -> ScoreResult:
    return ScoreResult(check=name, status=status, passed=status is P, score=score)


def _case_run(case: str, seq: int, rep: int, status: Status, score: float | None) -> CaseRun:
    checks = [_check("status", P, 1.0), _check("containsExpected", status, score)]
    return CaseRun(
        case_id=case,
        seq=seq,
        repetition=rep,
        result=EvaluationResult(
            case_id=case, status=status, score=score, reason=f"{status.value} rep {rep}",
            checks=checks,
        ),
    )  # fmt: skip


def _eval_run(store: Store, label: str, started: datetime, runs: list[CaseRun]) -> str:
    record = EvalRunRecord(
        eval_run_id=str(uuid.uuid4()), suite_id=SUITE, suite_name="s", mode="recorded",
        label=label, started_at=started, finished_at=started + timedelta(seconds=5),
        status="completed",
    )  # fmt: skip
    with store.transaction():
        insert_eval_run(store, record)
        insert_case_runs(store, record.eval_run_id, SUITE, runs, {})
    return record.eval_run_id


CASES = {name: str(uuid.UUID(int=i + 10)) for i, name in enumerate("ABCD")}


@pytest.fixture
def store(tmp_path: Path):
    with Store.open(tmp_path / "v.duckdb") as s:
        yield s


def test_case_history_combines_repetitions_like_the_runner(store: Store) -> None:
    a, b, c, d = CASES.values()
    run_id = _eval_run(
        store,
        "one",
        T0,
        [
            _case_run(a, 0, 0, P, 1.0), _case_run(a, 0, 1, P, 1.0),
            _case_run(b, 1, 0, P, 1.0), _case_run(b, 1, 1, F, 0.0),
            _case_run(c, 2, 0, E, None), _case_run(c, 2, 1, P, 1.0),
            _case_run(d, 3, 0, F, 0.2), _case_run(d, 3, 1, E, None),
        ],
    )  # fmt: skip
    rows = {
        r["seq"]: r
        for r in store.query_dicts("SELECT * FROM case_history WHERE eval_run_id = ?", [run_id])
    }
    assert {s: r["status"] for s, r in rows.items()} == {
        0: "PASSED", 1: "FAILED", 2: "ERROR", 3: "FAILED"
    }  # fmt: skip
    assert {s: r["flaky"] for s, r in rows.items()} == {0: False, 1: True, 2: True, 3: False}
    assert rows[1]["score"] == pytest.approx(0.5)  # mean of the repetitions: 1.0 and 0.0
    assert rows[2]["score"] == 0.5  # the ERROR repetition scores 0 (stored without a score)
    assert rows[3]["reason"] == "FAILED rep 0" and rows[0]["reason"] is None
    assert (
        rows[1]["repetitions"],
        rows[1]["passed_repetitions"],
        rows[1]["failed_repetitions"],
    ) == (2, 1, 1)
    assert rows[0]["label"] == "one" and rows[0]["suite_name"] == "s"


def test_score_history_has_a_row_per_check_result(store: Store) -> None:
    a, b = CASES["A"], CASES["B"]
    run_id = _eval_run(store, "x", T0, [_case_run(a, 0, 0, P, 1.0), _case_run(b, 1, 0, F, 0.0)])
    rows = store.query_dicts("SELECT * FROM score_history ORDER BY seq, check_position", [])
    assert len(rows) == store.count("check_results") == 4
    assert [(r["seq"], r["check_name"], r["passed"], r["case_status"]) for r in rows] == [
        (0, "status", True, "PASSED"), (0, "containsExpected", True, "PASSED"),
        (1, "status", True, "FAILED"), (1, "containsExpected", False, "FAILED"),
    ]  # fmt: skip
    assert {r["eval_run_id"] for r in rows} == {run_id}


def test_suite_trend_counts_and_changes_between_eval_runs(store: Store) -> None:
    a, b, c = CASES["A"], CASES["B"], CASES["C"]
    _eval_run(store, "first", T0, [_case_run(a, 0, 0, P, 1.0), _case_run(b, 1, 0, P, 1.0)])
    _eval_run(
        store,
        "second",
        T0 + timedelta(hours=1),
        [_case_run(a, 0, 0, P, 1.0), _case_run(b, 1, 0, F, 0.0), _case_run(b, 1, 1, P, 1.0),
         _case_run(c, 2, 0, E, None)],
    )  # fmt: skip
    rows = store.query_dicts("SELECT * FROM suite_trend ORDER BY run_number")
    assert [r["label"] for r in rows] == ["first", "second"]
    first, second = rows
    assert (first["cases"], first["passed"], first["pass_rate"], first["pass_rate_change"]) == (
        2,
        2,
        1.0,
        None,
    )
    assert (
        second["cases"],
        second["passed"],
        second["failed"],
        second["errored"],
        second["flaky"],
    ) == (3, 1, 1, 1, 1)
    assert second["pass_rate"] == pytest.approx(1 / 3)
    assert second["pass_rate_change"] == pytest.approx(1 / 3 - 1)
    assert second["aggregate_score"] == pytest.approx((1.0 + 0.5 + 0.0) / 3)  # C is an ERROR: 0
    assert (second["checks"], second["checks_passed"]) == (8, 6)


def test_suite_trend_agrees_with_what_the_runner_stored(pipeline_db: Path) -> None:
    with Store.open(pipeline_db) as store:
        rows = store.query_dicts(
            "SELECT t.*, e.total_cases, e.passed AS e_passed, e.failed AS e_failed,"
            " e.errored AS e_errored, e.pass_rate AS e_rate, e.aggregate_score AS e_score"
            " FROM suite_trend AS t JOIN eval_runs AS e USING (eval_run_id)"
        )
    assert len(rows) == 3
    for r in rows:
        assert (r["cases"], r["passed"], r["failed"], r["errored"]) == (
            r["total_cases"], r["e_passed"], r["e_failed"], r["e_errored"]
        )  # fmt: skip
        assert r["pass_rate"] == pytest.approx(r["e_rate"])
        assert r["aggregate_score"] == pytest.approx(r["e_score"])


def _run(n: int, durations: list[float], errors: list[bool], kind: str = "live") -> Run:
    calls = [
        ToolCallRecord(round=1, tool_name="search", duration_ms=d, error="boom" if bad else None)
        for d, bad in zip(durations, errors)
    ]
    return Run(
        run_id=str(uuid.UUID(int=100 + n)), trace_id=f"{n:032x}", root_span_id=f"{n:016x}",
        agent_name="agent", kind=kind, started_at=T0 + timedelta(minutes=n),
        input_tokens=10, output_tokens=5, result=AgentResult(tool_calls=calls),
    )  # fmt: skip


def test_tool_usage_counts_errors_and_interpolated_percentiles(store: Store) -> None:
    runs = [
        _run(1, [10, 20], [False, True]),
        _run(2, [30, 40, 50], [False, False, True]),
        _run(3, [999], [True], kind="replay"),
    ]
    with store.transaction():
        store.replace_runs([r.trace_id for r in runs], runs)
    [live] = store.query_dicts("SELECT * FROM tool_usage WHERE run_kind = 'live'")
    assert (live["agent_name"], live["tool_name"], live["calls"], live["runs"], live["errors"]) == (
        "agent", "search", 5, 2, 2
    )  # fmt: skip
    assert live["error_rate"] == pytest.approx(0.4)
    assert live["p50_ms"] == pytest.approx(30.0)
    assert live["p95_ms"] == pytest.approx(48.0)  # 40 + 0.8 * (50 - 40)
    assert (live["max_ms"], live["first_seen"], live["last_seen"]) == (
        50.0, T0 + timedelta(minutes=1), T0 + timedelta(minutes=2)
    )  # fmt: skip
    [replay] = store.query_dicts("SELECT * FROM tool_usage WHERE run_kind = 'replay'")
    assert (replay["calls"], replay["errors"]) == (1, 1)


def test_run_summary_adds_tool_errors_tools_day_and_promotions(pipeline_db: Path) -> None:
    with Store.open(pipeline_db) as store:
        rows = store.query_dicts("SELECT * FROM run_summary WHERE kind = 'live'")
        errors = dict(
            store.con.execute(
                "SELECT run_id, count(error) FROM tool_calls GROUP BY run_id"
            ).fetchall()
        )
    assert len(rows) == 6
    for r in rows:
        assert r["tool_errors"] == errors.get(r["run_id"], 0)
        assert r["total_tokens"] == r["input_tokens"] + r["output_tokens"]
        assert r["day"] == r["started_at"].astimezone(UTC).date()
        assert r["promoted_cases"] == 1  # the pipeline promotes every top-level run once
    assert {tuple(r["tools"]) for r in rows} == {("get_population", "get_weather"), ()}


def test_day_is_the_utc_day_whatever_the_session_time_zone(store: Store) -> None:
    late = _run(7, [], [])  # 23:37 UTC on 2026-11-01
    with store.transaction():
        store.replace_runs([late.trace_id], [late])
    store.con.execute("SET TimeZone = 'Asia/Tokyo'")
    [row] = store.query_dicts("SELECT day FROM run_summary")
    assert str(row["day"]) == "2026-11-01"
