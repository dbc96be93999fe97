"""``tracereplay monitor``: definitions, backfill, re-scoring after a late span, status and
``runs --monitor``, driven as a user would (the real CLI on a real DuckDB file)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider
from typer.testing import CliRunner

import tracereplay
from tracereplay import sdk
from tracereplay.cli.app import app
from tracereplay.monitor.embedded import CHILD_ENV
from tracereplay.store import Store

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "otlp"
runner = CliRunner()


@pytest.fixture(autouse=True)
def _no_background_rounds(monkeypatch: pytest.MonkeyPatch) -> None:
    """This process judges in the foreground: no detached round (test_monitor_embedded has it)."""
    monkeypatch.setenv(CHILD_ENV, "1")


def cli(db: Path, *args: str):
    return runner.invoke(app, ["--db", str(db), *args])


def ok(db: Path, *args: str) -> str:
    result = cli(db, *args)
    assert result.exit_code == 0, result.output
    return result.stdout


def rows(db: Path, sql: str, params: list | None = None) -> list[dict]:
    with Store.open(db) as store:
        return store.query_dicts(sql, params or [])


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def record_runs(db: Path, queries: list[str], agent: str = "weather") -> list[str]:
    """Live runs recorded by the SDK into the spool (the embedded default)."""
    tracereplay.configure(db=db, tracer_provider=TracerProvider())
    ids = []
    for query in queries:
        with tracereplay.agent_run(agent, query) as run:
            run.set_response(f"answer to {query}")
            ids.append(run.run_id)
    assert tracereplay.flush()
    sdk.shutdown()
    return ids


def test_create_show_replace_list_remove(tmp_path: Path) -> None:
    db = tmp_path / "m.duckdb"
    checks = write(
        tmp_path / "answers.yaml",
        "where: \"status = 'success'\"\nsample: 0.5\nchecks:\n  - kind: status\n"
        "  - kind: maxLatencyMs\n    limit: 5000\n",
    )
    out = ok(db, "monitor", "create", "answers", "--checks", str(checks), "--agent", "weather")
    assert "created monitor answers: 2 check(s)" in out
    shown = ok(db, "monitor", "show", "answers")
    assert "agent: weather" in shown and "sample: 0.5" in shown and "limit: 5000" in shown
    again = cli(db, "monitor", "create", "answers", "--checks", str(checks))
    assert again.exit_code == 2 and "exists (give --replace" in again.output
    kept = write(tmp_path / "kept.yaml", shown)  # the printed file reads back to the same
    ok(db, "monitor", "create", "answers", "--checks", str(kept), "--replace", "--sample", "1")
    assert "sample" not in ok(db, "monitor", "show", "answers")
    assert ok(db, "monitor", "show", "answers").replace("sample: 0.5\n", "") == shown.replace(
        "sample: 0.5\n", ""
    )
    listed = ok(db, "monitor", "list")
    assert "answers" in listed and "status, maxLatencyMs" in listed
    assert "removed monitor answers" in ok(db, "monitor", "remove", "answers")
    assert "no monitors" in ok(db, "monitor", "list")


@pytest.mark.parametrize(
    "file_text,options,message",
    [
        ("checks:\n  - kind: nope\n", [], "unknown check kind"),
        ("checks:\n  - kind: maxTokens\n", [], "limit"),
        ("checks: []\n", [], "needs at least one check"),
        ("checks:\n  - kind: status\nowner: me\n", [], "unknown field 'owner'"),
        ("checks:\n  - kind: status\n", ["--sample", "0"], "--sample 0"),
        ("checks:\n  - kind: status\n", ["--where", "no_such_column = 1"], "bad --where"),
        ("checks:\n  - kind: status\n", ["--where", "1=1; DROP TABLE runs"], "bad --where"),
    ],
)
def test_bad_monitor_definitions_are_one_line_errors(
    tmp_path: Path, file_text: str, options: list[str], message: str
) -> None:
    db = tmp_path / "m.duckdb"
    checks = write(tmp_path / "m.yaml", file_text)
    result = cli(db, "monitor", "create", "bad", "--checks", str(checks), *options)
    assert result.exit_code == 2, result.output
    assert result.output.startswith("error: ") and message in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert "Traceback" not in result.output
    assert rows(db, "SELECT * FROM monitors") == []


def test_unknown_monitor_and_missing_file(tmp_path: Path) -> None:
    db = tmp_path / "m.duckdb"
    ok(db, "ingest", str(EXAMPLE / "weather-agent-openinference.json"))
    for args in (["monitor", "status", "x"], ["monitor", "run", "x"], ["runs", "--monitor", "x"]):
        result = cli(db, *args)
        assert result.exit_code == 2 and "no monitor named 'x'" in result.output
    result = cli(db, "monitor", "create", "x", "--checks", str(tmp_path / "none.yaml"))
    assert result.exit_code == 2 and "does not exist" in result.output


def _split_trace(tmp_path: Path) -> tuple[Path, Path]:
    """The example trace cut in two: every span but one tool span, then that span (late)."""
    data = json.loads((EXAMPLE / "weather-agent-openinference.json").read_text())
    spans = data["resourceSpans"][0]["scopeSpans"][0]["spans"]
    late = [s for s in spans if s["name"] == "get_population"]
    first = json.loads(json.dumps(data))
    first["resourceSpans"][0]["scopeSpans"][0]["spans"] = [s for s in spans if s not in late]
    second = json.loads(json.dumps(data))
    second["resourceSpans"][0]["scopeSpans"][0]["spans"] = late
    a, b = tmp_path / "first.json", tmp_path / "late.json"
    a.write_text(json.dumps(first))
    b.write_text(json.dumps(second))
    return a, b


def test_backfill_judges_each_run_once_and_again_after_a_late_span(tmp_path: Path) -> None:
    db = tmp_path / "m.duckdb"
    first, late = _split_trace(tmp_path)
    ok(db, "ingest", str(first))
    checks = write(tmp_path / "m.yaml", "checks:\n  - kind: status\n  - kind: noToolErrors\n")
    ok(db, "monitor", "create", "ok", "--checks", str(checks))
    assert "judged 1 run(s)" in ok(db, "monitor", "run")
    assert "judged 0 run(s)" in ok(db, "monitor", "run")  # nothing pending
    [before] = rows(
        db, "SELECT details, judged_at FROM monitor_results WHERE check_name = 'noToolErrors'"
    )
    ok(db, "ingest", str(late))  # the trace is converted again: its runs row replaced
    assert "judged 1 run(s)" in ok(db, "monitor", "run")
    judged = rows(
        db,
        "SELECT r.converted_at = m.run_converted_at AS current, m.judged_at, r.tool_calls_count "
        "FROM monitor_results m JOIN runs r USING (run_id)",
    )
    assert len(judged) == 2  # replaced, not added
    assert all(j["current"] and j["judged_at"] > before["judged_at"] for j in judged)
    assert judged[0]["tool_calls_count"] == 2
    assert "judged 0 run(s)" in ok(db, "monitor", "run")


def test_selector_sample_status_and_failing_runs(tmp_path: Path) -> None:
    db = tmp_path / "m.duckdb"
    queries = [f"question {i}" for i in range(40)]
    weather = record_runs(db, queries)
    record_runs(db, ["refund?"], agent="billing")
    checks = write(
        tmp_path / "m.yaml",
        "checks:\n  - kind: regex\n    pattern: 'question [0-9]*[05]$'\n    name: fives\n",
    )
    ok(db, "monitor", "create", "fives", "--checks", str(checks), "--agent", "weather",
       "--sample", "0.5")  # fmt: skip
    out = ok(db, "monitor", "run", "fives", "--since", "1d")
    judged = {r["run_id"] for r in rows(db, "SELECT run_id FROM monitor_results")}
    assert judged < set(weather) and 5 < len(judged) < 35  # half, by hash
    from tracereplay.monitor.selection import in_sample

    assert judged == {i for i in weather if in_sample(i, 0.5)}
    failing = {
        r["run_id"] for r in rows(db, "SELECT run_id FROM monitor_results WHERE status = 'FAILED'")
    }
    assert f"judged {len(judged)} run(s): {len(failing)} failing" in out
    listed = json.loads(ok(db, "runs", "--monitor", "fives", "--failing", "--format", "json"))
    assert {r["run_id"] for r in listed} == failing
    status = cli(db, "monitor", "status", "fives", "--since", "1h", "--max-failure-rate", "0.1")
    assert status.exit_code == 1, status.output
    assert f"{len(judged)} run(s) judged" in status.stdout and "fives" in status.stdout
    assert cli(db, "monitor", "status", "fives", "--max-failure-rate", "1").exit_code == 0
    as_json = cli(db, "monitor", "status", "fives", "-f", "json", "--max-failure-rate", "0.1")
    assert as_json.exit_code == 1
    data = json.loads(as_json.stdout)
    assert data["runs"] == len(judged) and data["failed"] == len(failing)
    assert data["over_max_failure_rate"] and data["checks"][0]["check_name"] == "fives"
    # a run id's place in the sample never changes: the same monitor again judges the same runs
    ok(db, "monitor", "remove", "fives")
    ok(db, "monitor", "create", "fives", "--checks", str(checks), "--agent", "weather",
       "--sample", "0.5")  # fmt: skip
    ok(db, "monitor", "run")
    assert {r["run_id"] for r in rows(db, "SELECT run_id FROM monitor_results")} == judged


def test_llm_judge_calls_are_recorded_and_never_made_outside_the_selector(
    tmp_path: Path, judge
) -> None:
    db = tmp_path / "m.duckdb"
    record_runs(db, ["in scope"], agent="weather")
    record_runs(db, ["out of scope"], agent="billing")
    checks = write(
        tmp_path / "m.yaml",
        f"checks:\n  - kind: llmJudge\n    model: judge-1\n    endpoint: {judge.url}\n",
    )
    ok(db, "monitor", "create", "j", "--checks", str(checks), "--where", "agent_name = 'weather'")
    ok(db, "monitor", "run", "--max-judge-calls-per-minute", "100")
    assert len(judge.requests) == 1 and "in scope" in judge.requests[0]["messages"][-1]["content"]
    [call] = rows(db, "SELECT * FROM monitor_judge_calls")
    assert call["model"] == "judge-1" and call["input_tokens"] == 120
    assert call["output_tokens"] == 7 and call["error"] is None
    assert call["endpoint"] == judge.url + "/chat/completions"


def test_a_judge_that_is_down_is_an_error_not_a_failing_run(tmp_path: Path) -> None:
    db = tmp_path / "m.duckdb"
    record_runs(db, ["q"])
    checks = write(
        tmp_path / "m.yaml",
        "checks:\n  - kind: llmJudge\n    model: m\n    endpoint: http://127.0.0.1:9/v1\n"
        "    timeout: 2\n",
    )
    ok(db, "monitor", "create", "down", "--checks", str(checks))
    ok(db, "monitor", "run")
    assert "0 failed, 1 error" in ok(db, "monitor", "status", "down", "--max-failure-rate", "0")
    [call] = rows(db, "SELECT error FROM monitor_judge_calls")
    assert "cannot reach judge endpoint" in call["error"]


def test_names_are_checked(tmp_path: Path) -> None:
    db = tmp_path / "m.duckdb"
    checks = write(tmp_path / "m.yaml", "checks:\n  - kind: status\n")
    result = cli(db, "monitor", "create", "no spaces", "--checks", str(checks))
    assert result.exit_code == 2 and "monitor name" in result.output
