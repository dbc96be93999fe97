"""`tracereplay ingest`, `runs` and `show`, driven as a user would."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tracereplay.cli.app import app
from tracereplay.store import Store

FIXTURES = Path(__file__).parent.parent / "fixtures" / "otlp"
GENAI_PB = FIXTURES / "generated-otel-genai-latest__agent_tool_calls.pb"
GENAI_JSON = FIXTURES / "generated-otel-genai-latest__agent_tool_calls.json"
OPENINFERENCE = FIXTURES / "generated-openinference__agent_tool_calls.json"
TRACELOOP_LEGACY = FIXTURES / "generated-openllmetry-0.54-legacy__agent_tool_calls.pb"
COLLECTOR_LINES = FIXTURES / "generated-collector-fileexporter-style.jsonl"
CHAT_SPANS = FIXTURES / "generated-otel-genai-v1.36-default__chat_spans.json"
CHAT_LOGS = FIXTURES / "generated-otel-genai-v1.36-default__events.logs.json"

runner = CliRunner()


def cli(db: Path, *args: str):
    return runner.invoke(app, ["--db", str(db), *args])


def runs_json(db: Path, *args: str) -> list[dict]:
    result = cli(db, "runs", "--format", "json", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_ingest_prints_what_it_read_and_runs_lists_the_run(tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    result = cli(db, "ingest", str(GENAI_PB))
    assert result.exit_code == 0, result.output
    assert (
        "1 file(s)" in result.stdout and "1 traces" in result.stdout and "1 runs" in result.stdout
    )
    [run] = runs_json(db)
    assert run["status"] == "success"
    assert run["agent_name"] == "weather_agent"
    assert run["query"] == "What's the weather and population in San Francisco?"
    assert run["tool_calls_count"] == 2 and run["total_llm_calls"] == 2
    assert set(run) >= {"run_id", "trace_id", "result", "started_at", "input_tokens"}
    table = cli(db, "runs")
    assert table.exit_code == 0 and run["run_id"][:8] in table.stdout  # a unique prefix
    wide = cli(db, "runs", "--wide")
    assert run["run_id"] in wide.stdout  # ids printed whole


def test_ingesting_the_same_file_twice_changes_nothing(tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    assert cli(db, "ingest", str(GENAI_PB)).exit_code == 0
    with Store.open(db) as store:
        before = {t: store.count(t) for t in ("spans", "runs", "tool_calls", "llm_calls")}
    again = cli(db, "ingest", str(GENAI_PB), str(GENAI_JSON))  # pb and json: the same spans
    assert again.exit_code == 0, again.output
    assert "(0 new)" in again.stdout
    with Store.open(db) as store:
        assert {t: store.count(t) for t in before} == before


def test_directories_gzip_and_every_format(tmp_path: Path) -> None:
    src = tmp_path / "in" / "nested"
    src.mkdir(parents=True)
    shutil.copy(OPENINFERENCE, src / "a.json")
    (src / "b.pb.gz").write_bytes(gzip.compress(TRACELOOP_LEGACY.read_bytes()))
    shutil.copy(COLLECTOR_LINES, tmp_path / "in" / "c.jsonl")
    db = tmp_path / "t.duckdb"
    result = cli(db, "ingest", str(tmp_path / "in"))
    assert result.exit_code == 0, result.output
    conventions = sorted(r["convention"] for r in runs_json(db))
    # the jsonl repeats the genai, openinference and openllmetry-0.62 traces
    assert conventions.count("openinference") == 1  # same trace in a.json and c.jsonl: stored once
    assert {"genai", "openinference", "openllmetry"} <= set(conventions)


def test_logs_files_join_their_spans(tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    assert cli(db, "ingest", str(CHAT_SPANS)).exit_code == 0
    result = cli(db, "ingest", str(CHAT_LOGS))  # content arrives later, in a logs file
    assert result.exit_code == 0, result.output
    # two chat calls with no agent span around them: two traces, so two runs
    runs = runs_json(db)
    assert len(runs) == 2
    assert {r["query"] for r in runs} == {"What's the weather and population in San Francisco?"}
    assert sorted(r["tool_calls_count"] for r in runs) == [0, 2]  # rebuilt from the messages
    assert any(r["response"].startswith("In San Francisco it is foggy") for r in runs)


def test_a_bad_file_is_one_line_and_good_files_still_ingest(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"resourceSpans": [')
    db = tmp_path / "t.duckdb"
    result = cli(db, "ingest", str(bad), str(GENAI_PB))
    assert result.exit_code == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert any("bad.json" in line for line in errors)
    assert "Traceback" not in result.output
    assert len(runs_json(db)) == 1


def test_an_empty_file_is_refused_in_one_line(tmp_path: Path) -> None:
    """A 0-byte file is no payload: refused like a bad file (not "0 spans" and exit 0)."""
    empty = tmp_path / "empty.json"
    empty.write_bytes(b"")
    db = tmp_path / "t.duckdb"
    result = cli(db, "ingest", str(empty))
    assert result.exit_code == 1, result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert errors[0] == f"error: {empty}: the file is empty (0 bytes): nothing to ingest"
    assert "1 of 1 file(s) could not be read" in result.stderr
    assert "Traceback" not in result.output
    both = cli(db, "ingest", str(empty), str(GENAI_PB))  # the good file is still stored
    assert both.exit_code == 1 and len(runs_json(db)) == 1


def test_missing_path_is_a_clear_error(tmp_path: Path) -> None:
    result = cli(tmp_path / "t.duckdb", "ingest", str(tmp_path / "nope.pb"))
    assert result.exit_code == 2
    assert "nope.pb" in result.stderr


def test_runs_filters(tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    assert cli(db, "ingest", str(GENAI_PB), str(OPENINFERENCE)).exit_code == 0
    assert len(runs_json(db)) == 2
    assert len(runs_json(db, "--limit", "1")) == 1
    assert runs_json(db, "--status", "failed") == []
    assert runs_json(db, "--since", "2000-01-01")
    assert runs_json(db, "--since", "1h") == []  # the fixtures were recorded long before
    bad = cli(db, "runs", "--status", "weird")
    assert bad.exit_code == 2 and "weird" in bad.stderr
    bad_since = cli(db, "runs", "--since", "yesterday-ish")
    assert bad_since.exit_code == 2 and "--since" in bad_since.stderr


def test_show_accepts_prefixes_and_trace_ids(tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    assert cli(db, "ingest", str(GENAI_PB)).exit_code == 0
    [run] = runs_json(db)
    for ident in (run["run_id"], run["run_id"][:8], run["trace_id"]):
        result = cli(db, "show", ident)
        assert result.exit_code == 0, result.output
        out = result.stdout
        assert "get_weather" in out and "get_population" in out
        assert "San Francisco" in out and "timed out" in out
        assert "round 1" in out and "round 2" in out
    unknown = cli(db, "show", "zzzz")
    assert unknown.exit_code == 2 and "zzzz" in unknown.stderr


def test_installed_command_runs_end_to_end(tmp_path: Path) -> None:
    exe = Path(sys.executable).with_name("tracereplay")
    if not exe.exists():
        pytest.skip("console script not installed in this environment")
    db = tmp_path / "t.duckdb"
    done = subprocess.run([exe, "--db", db, "ingest", GENAI_PB], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    shown = subprocess.run(
        [exe, "runs", "--format", "json"],
        capture_output=True,
        text=True,
        env={"TRACEREPLAY_DB": str(db), "PATH": "/usr/bin:/bin"},
    )
    assert shown.returncode == 0, shown.stderr
    assert len(json.loads(shown.stdout)) == 1


METRICS = {
    "resourceMetrics": [{"scopeMetrics": [{"metrics": [{
        "name": "gen_ai.client.token.usage",
        "sum": {"dataPoints": [{"asInt": "5", "timeUnixNano": "1700000000000000000"}]},
    }]}]}]
}  # fmt: skip
UNTRACED_LOGS = {
    "resourceLogs": [{"scopeLogs": [{"logRecords": [
        {"timeUnixNano": "1700000000000000000", "body": {"stringValue": "hello"},
         "eventName": "gen_ai.user.message"},
        {"timeUnixNano": "1700000000000000001", "body": {"stringValue": "again"}},
    ]}]}]
}  # fmt: skip


def test_ingest_says_what_it_did_not_store(tmp_path: Path) -> None:
    """A metrics file, or log records without a trace id, are not stored: ingest says so
    instead of a bare "0 new"."""
    db = tmp_path / "s.duckdb"
    (tmp_path / "metrics.json").write_text(json.dumps(METRICS))
    (tmp_path / "logs.json").write_text(json.dumps(UNTRACED_LOGS))
    result = cli(db, "ingest", str(tmp_path / "metrics.json"))
    assert result.exit_code == 0, result.output
    assert "metrics.json: holds metrics, which tracereplay does not store" in result.stderr
    result = cli(db, "ingest", str(tmp_path / "logs.json"))
    assert result.exit_code == 0, result.output
    warning = " ".join(result.stderr.split())
    assert "logs.json: 2 log records have no trace id: not stored" in warning
    assert "0 log records" in result.stdout
    with Store.open(db) as store:
        assert store.count("logs") == 0
    # with spans in the same batch, too: a log record joins a run only through its trace
    mixed = {**json.loads(GENAI_JSON.read_text()), **UNTRACED_LOGS}
    (tmp_path / "mixed.json").write_text(json.dumps(mixed))
    result = cli(db, "ingest", str(tmp_path / "mixed.json"))
    assert result.exit_code == 0, result.output
    assert "mixed.json: 2 log records have no trace id" in " ".join(result.stderr.split())
    with Store.open(db) as store:
        assert store.query_dicts("SELECT count(*) AS n FROM logs WHERE trace_id = ''") == [{"n": 0}]
