"""``tracereplay eval SUITE`` in recorded mode, and what every eval prints and writes:
the results table, JSON, JUnit XML, stored rows, exit codes, git commit."""

from __future__ import annotations

import json
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import orjson
import pytest
from replay_fixtures import CITIES, cli, eval_json, query, rows

CHECK_MODULE = """
from tracereplay.evaluate import check


@check("mentionsOslo")
def mentions_oslo(subject, word: str = "Oslo"):
    return word in subject.output, f"looked for {word!r}"
"""


def test_recorded_mode_scores_the_source_runs_and_stores_every_result(
    db: Path, tmp_path: Path
) -> None:
    doc = eval_json(db, tmp_path, "weather", "--label", "nightly", exit_code=0)
    run = doc["eval_run"]
    assert run["mode"] == "recorded" and run["agent"] is None and run["label"] == "nightly"
    assert (run["total_cases"], run["passed"], run["pass_rate"]) == (3, 3, 1.0)
    assert run["aggregate_score"] == 1.0 and run["finished_at"] >= run["started_at"]
    case = doc["cases"][0]
    assert {c["check"] for c in case["checks"]} == {
        "status",
        "containsExpected",
        "toolCallArgsMatch",
    }
    rep = case["repetitions"][0]
    assert rep["run_id"] == rep["source_run_id"]  # recorded mode scores the source run itself
    assert [t["tool_name"] for t in rep["tool_calls"]] == ["get_weather", "get_population"]
    [stored] = rows(db, "SELECT * FROM eval_runs")
    assert stored["status"] == "completed" and stored["suite_name"] == "weather"
    assert json.loads(stored["options"])["concurrency"] == 4
    checks = rows(
        db,
        "SELECT case_id, position, check_name, check_kind, status, passed, score"
        " FROM check_results ORDER BY case_id, position",
    )
    assert len(checks) == 9
    assert [c["check_kind"] for c in checks[:3]] == [
        "status",
        "containsExpected",
        "toolCallArgsMatch",
    ]
    assert all(c["passed"] and c["status"] == "PASSED" and c["score"] == 1.0 for c in checks)
    cases = rows(db, "SELECT status, score, response, tool_calls, drift FROM case_results")
    assert len(cases) == 3 and all(c["drift"] is None for c in cases)
    assert all("degrees" in c["response"] for c in cases)


def test_failures_and_errors_exit_1_and_land_in_junit_xml(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "oslo_checks.py").write_text(CHECK_MODULE)
    (tmp_path / "checks.yaml").write_text("- kind: mentionsOslo\n- kind: nonEmpty\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    created = cli(
        db, "suite", "create", "oslo", "--checks", str(tmp_path / "checks.yaml"),
        "--checks-module", "oslo_checks",
    )  # fmt: skip
    assert created.exit_code == 0, created.output
    assert cli(db, "promote", "--where", "kind = 'live'", "--suite", "oslo").exit_code == 0
    weird = "Is it <hot> & [bold]sunny[/bold] in Lima?"
    assert cli(db, "case", "add", "--suite", "oslo", "--query", weird).exit_code == 0
    junit = tmp_path / "report" / "junit.xml"
    out = tmp_path / "oslo.json"
    result = cli(
        db, "eval", "oslo", "--checks", "oslo_checks", "--junit", str(junit), "--json", str(out)
    )
    assert result.exit_code == 1, result.output
    assert "[bold]sunny[/bold]" in result.stdout  # user text is never rich markup
    # the pass rate leads the summary; the ERROR case scores 0 in the eval run's score
    [summary] = [line for line in result.stdout.splitlines() if "of 4 cases" in line]
    assert summary.startswith("pass rate 25.0%: 1 of 4 cases passed, 2 failed, 1 errored")
    doc = orjson.loads(out.read_bytes())
    scores = [c["score"] for c in doc["cases"]]
    assert [c["score"] for c in doc["cases"] if c["status"] == "ERROR"] == [0.0]
    assert doc["eval_run"]["aggregate_score"] == pytest.approx(sum(scores) / 4)
    assert f"score {sum(scores) / 4:.3f}" in summary
    root = ET.parse(junit).getroot()
    suite = root.find("testsuite")
    assert suite is not None and suite.get("name") == "oslo"
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("4", "2", "1")
    cases = suite.findall("testcase")
    assert len(cases) == 4
    failures = [c.find("failure") for c in cases if c.find("failure") is not None]
    assert len(failures) == 2 and all("mentionsOslo" in (f.get("message") or "") for f in failures)
    assert all("looked for 'Oslo'" in (f.text or "") for f in failures)
    [error] = [c for c in cases if c.find("error") is not None]
    assert weird in (error.get("name") or "")
    assert "no source run" in (error.find("error").get("message") or "")  # type: ignore[union-attr]
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props["mode"] == "recorded" and props["eval_run_id"]
    doc = json.loads(out.read_text())
    assert doc["eval_run"]["eval_run_id"] == props["eval_run_id"]


def test_a_check_that_cannot_run_is_an_error_and_is_retried(db: Path, tmp_path: Path) -> None:
    (tmp_path / "judge.yaml").write_text(
        "- kind: nonEmpty\n"
        "- kind: llmJudge\n  model: judge\n  endpoint: http://127.0.0.1:9/v1\n  timeout: 2\n"
    )
    created = cli(db, "suite", "create", "judged", "--checks", str(tmp_path / "judge.yaml"))
    assert created.exit_code == 0, created.output
    assert cli(db, "promote", "--where", "kind = 'live'", "--suite", "judged").exit_code == 0
    doc = eval_json(db, tmp_path, "judged", "--retries", "1", exit_code=1)
    for case in doc["cases"]:
        assert case["status"] == "ERROR" and case["score"] == 0.0  # an ERROR case scores 0
        judge = [c for c in case["checks"] if c["check"] == "llmJudge"][0]
        assert judge["status"] == "ERROR" and judge["score"] is None
        assert case["repetitions"][0]["attempts"] == 2  # an ERROR is retried


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nope"], "no suite named 'nope'"),
        (["weather", "--checks", "no_such_checks"], "no_such_checks"),
        (["weather", "--timeout", "-1"], "timeout"),
    ],
)
def test_usage_errors_exit_2_without_a_traceback(db: Path, args: list[str], message: str) -> None:
    result = cli(db, "eval", *args)
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output


def test_an_empty_suite_is_a_usage_error(db: Path) -> None:
    assert cli(db, "suite", "create", "empty").exit_code == 0
    result = cli(db, "eval", "empty")
    assert result.exit_code == 2 and "it has no cases" in result.output


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_the_git_commit_is_stored_when_run_inside_a_checkout(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], cwd=repo, check=True)
    (repo / "agent.py").write_text("x = 1\n")
    subprocess.run([*git, "add", "agent.py"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "agent"], cwd=repo, check=True)
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()
    monkeypatch.chdir(repo)
    clean = eval_json(db, tmp_path, "weather")["eval_run"]
    assert clean["git_commit"] == head and clean["git_dirty"] is False
    (repo / "agent.py").write_text("x = 2\n")
    dirty = eval_json(db, tmp_path, "weather")["eval_run"]
    assert dirty["git_commit"] == head and dirty["git_dirty"] is True
    monkeypatch.chdir(tmp_path)  # not a checkout
    assert eval_json(db, tmp_path, "weather")["eval_run"]["git_commit"] is None


def test_the_results_table_lists_each_case(db: Path) -> None:
    result = cli(db, "eval", "weather")
    assert result.exit_code == 0, result.output
    for city in CITIES[:3]:
        assert query(city)[:20] in result.stdout
    assert result.stdout.count("PASSED") == 3
    assert "pass rate 100.0%: 3 of 3 cases passed, 0 failed, 0 errored" in result.stdout


HANGING_CHECK = """
import time

from tracereplay.evaluate import check


@check("waitsForever")
def waits_forever(subject):
    time.sleep(30)
    return True
"""


def test_a_hanging_custom_check_times_out_in_recorded_mode(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "hang_checks.py").write_text(HANGING_CHECK)
    (tmp_path / "hang.yaml").write_text("- kind: waitsForever\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    created = cli(
        db, "suite", "create", "hangs", "--checks", str(tmp_path / "hang.yaml"),
        "--checks-module", "hang_checks",
    )  # fmt: skip
    assert created.exit_code == 0, created.output
    assert cli(db, "promote", "--where", "kind = 'live'", "--suite", "hangs").exit_code == 0
    doc = eval_json(
        db, tmp_path, "hangs", "--checks", "hang_checks", "--timeout", "0.3", exit_code=1
    )
    assert [c["reason"] for c in doc["cases"]] == ["timed out after 0.3s"] * 3
