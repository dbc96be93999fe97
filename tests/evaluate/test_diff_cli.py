"""``tracereplay diff A B``: buckets, score deltas, prefixes, refusing different suites."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from replay_fixtures import cli, eval_json, rows

from tracereplay.evaluate.diff import BUCKETS, DifferentSuitesError, compare, settings_difference
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


def _replay(agent: str = "m:f", **options: object) -> EvalRunRecord:
    return record("x").model_copy(update={"mode": "replay", "agent": agent, "options": options})


def test_settings_difference_names_mode_llm_source_matching_and_agent() -> None:
    recorded, live = record("a"), _replay(llm="live", llm_match="order")
    assert settings_difference(recorded, record("b")) is None
    assert settings_difference(live, _replay(llm="live", llm_match="strict")) is None  # unused
    strict = _replay(llm="recorded", llm_match="strict")
    assert settings_difference(strict, live) == (
        "the two eval runs differ in settings: llm recorded (strict) vs live;"
        " their verdicts are not comparable one for one"
    )
    order = _replay(llm="recorded", llm_match="order")
    assert "llm recorded (order) vs recorded (strict)" in str(settings_difference(order, strict))
    until = _replay(llm="recorded", llm_match="order", llm_until=3)
    assert "vs recorded (order) for the first 3 calls, then live" in str(
        settings_difference(order, until)
    )
    other = settings_difference(live, _replay("m:g", llm="live"))
    assert other is not None and "agent m:f vs m:g" in other and "llm" not in other
    mode = settings_difference(recorded, live)
    assert mode is not None and "mode recorded vs replay (agent m:f, llm live)" in mode
    row = {"mode": "replay", "agent": "m:f", "options": {"llm": "recorded", "llm_match": "strict"}}
    assert settings_difference(row, live) == settings_difference(strict, live)  # a UI row


def test_diff_says_first_when_the_eval_runs_differ_in_settings(db: Path, tmp_path: Path) -> None:
    eval_json(db, tmp_path, "weather", "--agent", "replay_agents:weather", exit_code=0)
    eval_json(
        db, tmp_path, "weather", "--agent", "replay_agents:weather",
        "--llm", "recorded", "--llm-match", "strict",
    )  # fmt: skip
    table = cli(db, "diff", "--last")
    assert table.exit_code == 0, table.output
    first = " ".join(table.stdout.split("suite weather")[0].split())  # wrapped at the width
    assert first == (
        "note: the two eval runs differ in settings: llm live vs recorded (strict);"
        " their verdicts are not comparable one for one"
    )
    data = json.loads(cli(db, "diff", "--last", "-f", "json").stdout)
    assert "llm live vs recorded (strict)" in data["settings_differ"]
    markdown = cli(db, "diff", "--last", "-f", "markdown").stdout
    lines = [line for line in markdown.splitlines() if line]
    assert lines[1].startswith("> **Note**: the two eval runs differ in settings: llm live vs")
    same = cli(db, "diff", "weather@1", "weather@1")
    assert "differ in settings" not in same.stdout


def _set_status(db: Path, eval_run_id: str, status: str) -> None:
    from tracereplay.store.open import open_store

    with open_store(db) as store:
        store.con.execute(
            "UPDATE eval_runs SET status = ? WHERE eval_run_id = ?", [status, eval_run_id]
        )


def test_diff_last_and_report_skip_eval_runs_that_did_not_complete(
    db: Path, tmp_path: Path
) -> None:
    ids = [
        eval_json(db, tmp_path, "weather", "--agent", "replay_agents:weather", exit_code=0)[
            "eval_run"
        ]["eval_run_id"]
        for _ in range(4)
    ]
    _set_status(db, ids[3], "interrupted")
    _set_status(db, ids[1], "stopped")
    assert [r["status"] for r in rows(db, "SELECT status FROM eval_runs ORDER BY started_at")] == [
        "completed", "stopped", "completed", "interrupted",
    ]  # fmt: skip
    result = cli(db, "diff", "--last", "-f", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert (data["a"]["eval_run_id"], data["b"]["eval_run_id"]) == (ids[0], ids[2])
    note = [line for line in result.stderr.splitlines() if line.startswith("note:")]
    assert note == [
        f"note: skipped eval runs {ids[3][:8]} (interrupted), {ids[1][:8]} (stopped):"
        " comparing the latest completed eval runs"
    ]
    named = cli(db, "diff", ids[1], ids[3], "-f", "json")  # named: used as given
    assert named.exit_code == 0 and "skipped" not in named.stderr
    assert json.loads(named.stdout)["b"]["eval_run_id"] == ids[3]

    report = cli(db, "report", "-f", "markdown")
    assert report.exit_code == 0, report.output
    assert f"eval run `{ids[2][:8]}" in report.stdout
    assert (
        f"note: skipped eval run {ids[3][:8]} (interrupted): reporting the latest completed"
        f" eval run {ids[2][:8]}"
    ) in report.stderr
    # what it is compared with is the completed eval run before it, not the stopped one
    assert ids[0][:8] in report.stdout and ids[1][:8] not in report.stdout, report.stdout
    given = cli(db, "report", ids[3], "-f", "markdown")
    assert given.exit_code == 0 and "skipped" not in given.stderr

    _set_status(db, ids[2], "running")
    _set_status(db, ids[0], "interrupted")
    few = cli(db, "diff", "--last")
    assert few.exit_code == 2
    assert "has no completed eval run (and 4 not completed); --last needs two" in few.output
    none = cli(db, "report", "-f", "markdown")
    assert none.exit_code == 2 and "no completed eval run" in none.output
