"""Recorded mode's columnar path stores and reports exactly what scoring case by case does."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from tracereplay.evaluate import evaluation
from tracereplay.evaluate.evaluation import EvalSettings, run_evaluation
from tracereplay.evaluate.recorded.columnar import CaseReports
from tracereplay.models import (
    AgentResult,
    CheckSpec,
    EvalCase,
    EvalExpectedToolCall,
    EvalSuite,
    Run,
    ToolCallRecord,
)
from tracereplay.scoring.runner import RunnerOptions
from tracereplay.store import Store
from tracereplay.store.suites import insert_cases, insert_suite

SUITE_CHECKS = [
    CheckSpec(kind="status"),
    CheckSpec(kind="containsExpected"),
    CheckSpec(kind="regex", pattern=r"(?P<n>\d+) degrees"),
    CheckSpec(kind="toolCallArgsMatch"),
    CheckSpec(kind="exact", name="same"),  # no batch form: scored case by case
]


def _run(i: int, response: str, calls: list[ToolCallRecord], status: str = "success") -> Run:
    trace = uuid.uuid4().hex
    return Run(
        run_id=str(uuid.uuid4()),
        trace_id=trace,
        root_span_id=trace[:16],
        agent_name="w",
        query=f"q{i}",
        duration_ms=10.0 + i,
        error="it broke" if status != "success" else None,
        result=AgentResult(response=response, tool_calls=calls, status=status),  # type: ignore[arg-type]
    )


def build(db: Path) -> None:
    suite = EvalSuite(name="mixed", checks=SUITE_CHECKS)
    runs: list[Run] = []
    cases: list[EvalCase] = []

    def case(i: int, run: Run | None, **kw: Any) -> None:
        if run is not None:
            runs.append(run)
        cases.append(
            EvalCase(
                suite_id=suite.id,
                seq=i,
                query=f"weather {i}?",
                source_run_id=kw.pop("source", run.run_id if run else None),
                **kw,
            )
        )

    get = ToolCallRecord(round=1, tool_name="get", arguments={"city": "Oslo", "n": 1})
    for i in range(12):  # passing cases
        case(
            i,
            _run(i, f"It is {i} degrees in Oslo", [get]),
            expected_output=f" It is {i} degrees in Oslo ",
            expected_tool_calls=[EvalExpectedToolCall(name="get", arguments={"n": 1.0})],
        )
    case(12, _run(12, "no idea", [], status="failed"), expected_output="sunny")  # fails
    case(
        13,
        _run(13, "It is 3 degrees", [get, get]),
        expected_tool_calls=[
            EvalExpectedToolCall(name="get", arguments={"city": "Rome"}),
            EvalExpectedToolCall(name="put"),
        ],
    )
    case(14, None)  # hand-written: no source run
    case(15, None, source=str(uuid.uuid4()))  # source run not in the store
    case(
        16,
        _run(16, "  ", []),
        checks=[CheckSpec(kind="nonEmpty", minLength=2), CheckSpec(kind="noSuchCheck")],
    )
    case(17, _run(17, "fine", []), checks=[])  # no checks at all
    case(18, _run(18, "x", []), checks=[CheckSpec(kind="regex", pattern="(")])  # bad pattern
    with Store.open(db) as store, store.transaction():
        store.replace_runs([r.trace_id for r in runs], runs)
        insert_suite(store, suite)
        insert_cases(store, cases)


CASE_COLUMNS = (
    "case_id, repetition, suite_id, seq, status, score, reason, attempts, run_id,"
    " source_run_id, response, tool_calls::VARCHAR, drift"
)
CHECK_COLUMNS = (
    "case_id, repetition, position, check_name, check_kind, status, passed, score,"
    " explanation, details::VARCHAR"
)


def stored(db: Path, eval_run_id: str) -> tuple[list[tuple], list[tuple], tuple]:
    with Store.open(db) as store:
        con = store.con
        cases = con.execute(
            f"SELECT {CASE_COLUMNS} FROM case_results WHERE eval_run_id = ? ORDER BY seq",
            [eval_run_id],
        ).fetchall()
        checks = con.execute(
            f"SELECT {CHECK_COLUMNS} FROM check_results WHERE eval_run_id = ?"
            " ORDER BY case_id, position",
            [eval_run_id],
        ).fetchall()
        run = con.execute(
            "SELECT status, total_cases, passed, failed, errored, pass_rate, aggregate_score,"
            " options FROM eval_runs WHERE eval_run_id = ?",
            [eval_run_id],
        ).fetchall()[0]
    return cases, checks, run


def _comparable(outcome: evaluation.EvalOutcome) -> list[dict[str, Any]]:
    out = []
    for r in outcome.reports:
        result = r.result.model_dump(exclude={"duration_ms"})
        runs = [x.model_dump(exclude={"result", "started_at", "finished_at"}) for x in r.runs]
        out.append({"case": r.case.model_dump(), "result": result, "runs": runs})
    return out


def test_columnar_and_case_by_case_store_and_report_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "store.duckdb"
    build(db)
    settings = EvalSettings(suite="mixed", db=db)
    columnar = run_evaluation(settings)
    assert isinstance(columnar.reports, CaseReports)  # the columnar path ran
    monkeypatch.setattr(evaluation, "_columnar", lambda *a: False)
    scalar = run_evaluation(settings)
    assert not isinstance(scalar.reports, CaseReports)

    a, b = stored(db, columnar.record.eval_run_id), stored(db, scalar.record.eval_run_id)
    for x, y in zip(a, b):
        assert x == y
    cases, checks, run = a
    assert run[:5] == ("completed", 19, 12, 3, 4)
    assert [c[4] for c in cases[12:]] == [
        "FAILED",
        "FAILED",
        "ERROR",
        "ERROR",
        "FAILED",
        "ERROR",
        "ERROR",
    ]
    assert len(checks) == 14 * 5 + 2 + 1

    assert _comparable(columnar) == _comparable(scalar)
    assert [r.case.seq for r in columnar.not_passed()] == [12, 13, 14, 15, 16, 17, 18]
    assert columnar.exit_code == scalar.exit_code == 1
    assert columnar.reports[-1].case.seq == 18 and len(columnar.reports[2:5]) == 3


def test_runner_options_that_need_the_runner_take_the_case_by_case_path(tmp_path: Path) -> None:
    db = tmp_path / "store.duckdb"
    build(db)
    for options in (
        RunnerOptions(retries=1),
        RunnerOptions(repeat=2),
        RunnerOptions(fail_fast=True),
    ):
        outcome = run_evaluation(EvalSettings(suite="mixed", db=db, runner=options))
        assert not isinstance(outcome.reports, CaseReports)


def test_junit_of_the_columnar_path_builds_only_what_did_not_pass(tmp_path: Path) -> None:
    import xml.etree.ElementTree as ET

    from tracereplay.evaluate.formats.junit import junit_tree

    db = tmp_path / "store.duckdb"
    build(db)
    outcome = run_evaluation(EvalSettings(suite="mixed", db=db))
    reports = outcome.reports
    assert isinstance(reports, CaseReports)
    briefed = ET.tostring(junit_tree(outcome.record, reports).getroot())
    assert len(reports._built) == 7  # the 7 cases that did not pass, not the 12 that did
    built = ET.tostring(junit_tree(outcome.record, list(reports)).getroot())
    assert briefed == built  # the same document as from every report
