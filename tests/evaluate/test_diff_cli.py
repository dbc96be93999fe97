"""``tracereplay diff A B``: buckets, score deltas, prefixes, refusing different suites."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from replay_fixtures import cli, eval_json

from tracereplay.evaluate.diff import BUCKETS, DifferentSuitesError, compare
from tracereplay.models import EvaluationResult, Status
from tracereplay.scoring.outcomes import CaseRun, EvalRunRecord

SUITE = "7b0c3f7e-0000-4000-8000-000000000001"


def record(run_id: str, suite_id: str = SUITE) -> EvalRunRecord:
    return EvalRunRecord(
        eval_run_id=run_id,
        suite_id=suite_id,
        suite_name="s",
        mode="recorded",
        started_at=datetime.now(UTC),
    )


def case_run(case_id: str, status: str, score: float | None, rep: int = 0) -> CaseRun:
    return CaseRun(
        case_id=case_id,
        seq=int(case_id[-1]),
        repetition=rep,
        result=EvaluationResult(case_id=case_id, status=Status(status), score=score),
    )


def test_every_bucket_with_score_deltas() -> None:
    a = [
        case_run("c1", "PASSED", 1.0),  # -> Regressed
        case_run("c2", "FAILED", 0.5),  # -> Fixed
        case_run("c3", "ERROR", None),  # -> StillFailing
        case_run("c4", "PASSED", 1.0),  # -> Unchanged
        case_run("c5", "PASSED", 1.0),  # -> Removed
    ]
    b = [
        case_run("c1", "FAILED", 0.25),
        case_run("c2", "PASSED", 1.0),
        case_run("c3", "FAILED", 0.0),
        case_run("c4", "PASSED", 1.0),
        case_run("c6", "PASSED", 1.0),  # -> Added
        case_run("c4", "PASSED", 1.0, rep=1),
    ]
    diff = compare(record("a"), record("b"), a, b)
    assert {c.case_id: c.bucket for c in diff.cases} == {
        "c1": "Regressed",
        "c2": "Fixed",
        "c3": "StillFailing",
        "c4": "Unchanged",
        "c5": "Removed",
        "c6": "Added",
    }
    assert [c.bucket for c in diff.cases] == list(BUCKETS)  # listed in bucket order
    by_id = {c.case_id: c for c in diff.cases}
    assert by_id["c1"].delta == pytest.approx(-0.75)
    assert by_id["c2"].delta == pytest.approx(0.5)
    assert by_id["c3"].delta is None and by_id["c6"].delta is None
    assert diff.counts() == dict.fromkeys(BUCKETS, 1)


def test_a_case_regresses_when_one_repetition_stops_passing() -> None:
    a = [case_run("c1", "PASSED", 1.0, 0), case_run("c1", "PASSED", 1.0, 1)]
    b = [case_run("c1", "PASSED", 1.0, 0), case_run("c1", "FAILED", 0.0, 1)]
    [case] = compare(record("a"), record("b"), a, b).cases
    assert case.bucket == "Regressed" and case.score_b == pytest.approx(0.5)


def test_runs_of_different_suites_are_refused() -> None:
    other = "7b0c3f7e-0000-4000-8000-000000000002"
    with pytest.raises(DifferentSuitesError, match="different suites"):
        compare(record("a"), record("b", other), [], [])


def test_diff_shows_the_regression_a_code_change_made(db: Path, tmp_path: Path) -> None:
    before = eval_json(db, tmp_path, "weather", "--agent", "replay_agents:weather", exit_code=0)
    after = eval_json(
        db, tmp_path, "weather", "--agent", "replay_agents:weather_no_population", exit_code=1
    )
    a, b = before["eval_run"]["eval_run_id"], after["eval_run"]["eval_run_id"]
    result = cli(db, "diff", a[:6], b[:6])  # prefixes work
    assert result.exit_code == 1, result.output  # something regressed
    assert "Regressed 3" in result.stdout and "Fixed 0" in result.stdout
    assert "PASSED 1.00" in result.stdout and "FAILED" in result.stdout
    back = cli(db, "diff", b, a, "--format", "json")
    assert back.exit_code == 0, back.output  # the other way round: fixed, nothing regressed
    data = json.loads(back.stdout)
    assert data["counts"]["Fixed"] == 3 and data["counts"]["Regressed"] == 0
    assert all(c["delta"] == pytest.approx(0.5) for c in data["cases"])
    same = cli(db, "diff", a, a, "--unchanged")
    assert same.exit_code == 0 and "Unchanged 3" in same.stdout


def test_diff_refuses_runs_of_two_suites_and_unknown_ids(db: Path, tmp_path: Path) -> None:
    made = cli(db, "promote", "--where", "kind = 'live'", "--suite", "other")
    assert made.exit_code == 0, made.output
    a = eval_json(db, tmp_path, "weather")["eval_run"]["eval_run_id"]
    b = eval_json(db, tmp_path, "other")["eval_run"]["eval_run_id"]
    result = cli(db, "diff", a, b)
    assert result.exit_code == 2
    assert "different suites" in result.output and "'weather'" in result.output
    assert "Traceback" not in result.output
    missing = cli(db, "diff", a, "ffffffff")
    assert missing.exit_code == 2 and "no eval run id starts with 'ffffffff'" in missing.output


def test_diff_at_80_columns_shows_each_reason_in_full_and_no_query_for_passed_cases(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    before = eval_json(db, tmp_path, "weather", "--agent", "replay_agents:weather", exit_code=0)
    after = eval_json(
        db, tmp_path, "weather", "--agent", "replay_agents:weather_no_population", exit_code=1
    )
    a, b = before["eval_run"]["eval_run_id"], after["eval_run"]["eval_run_id"]
    result = cli(db, "diff", a, b)
    assert result.exit_code == 1, result.output
    assert max(len(line) for line in result.stdout.splitlines()) <= 80
    flat = " ".join(result.stdout.split())
    for case in after["cases"]:
        assert " ".join(case["reason"].split()) in flat  # the whole reason, not ~10 characters
    fixed = cli(db, "diff", b, a)
    assert "Fixed 3" in fixed.stdout
    for case in after["cases"]:  # passed in B: no reason, and no query in its place
        assert case["query"][:20] not in fixed.stdout


def test_diff_last_takes_the_suite_as_its_argument(db: Path, tmp_path: Path) -> None:
    for _ in range(2):
        eval_json(db, tmp_path, "weather", "--agent", "replay_agents:weather", exit_code=0)
    positional = cli(db, "diff", "--last", "weather", "--format", "json")
    assert positional.exit_code == 0, positional.output
    option = cli(db, "diff", "--last", "--suite", "weather", "--format", "json")
    assert json.loads(positional.stdout) == json.loads(option.stdout)
    both = cli(db, "diff", "--last", "weather", "--suite", "weather")
    assert both.exit_code == 2 and "error: give the suite once" in both.stderr
    two = cli(db, "diff", "--last", "a", "b")
    assert two.exit_code == 2 and "--last takes one SUITE at most" in two.stderr
