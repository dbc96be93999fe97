"""``ingest`` and ``show`` say once when runs were recorded without content, and name what
records it (AutoGen's native spans, Agent Framework without sensitive data); a run with content
gets no note."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from tracereplay.cli.app import app

PAYLOADS = Path(__file__).resolve().parent.parent / "fixtures" / "frameworks"
runner = CliRunner()


def cli(db: Path | str, *args: str):
    return runner.invoke(app, ["--db", str(db), *args])


def test_autogen_native_runs_are_said_to_have_no_content(store_target: str) -> None:
    db = store_target
    ingested = cli(db, "ingest", str(PAYLOADS / "autogen" / "payloads" / "native" / "multi_round"))
    assert ingested.exit_code == 0, ingested.output
    notes = [line for line in ingested.stderr.splitlines() if line.startswith("note:")]
    assert len(notes) == 1, ingested.stderr
    assert "this run was recorded without content" in notes[0]
    assert "opentelemetry-instrumentation-openai" in notes[0]
    (run,) = json.loads(cli(db, "runs", "--format", "json").stdout)
    shown = cli(db, "show", run["run_id"][:8])
    assert shown.exit_code == 0, shown.output
    assert [line for line in shown.stderr.splitlines() if line.startswith("note:")] == notes


def test_agent_framework_without_sensitive_data(store_target: str) -> None:
    db = store_target
    folder = PAYLOADS / "agent_framework" / "payloads" / "default"
    ingested = cli(db, "ingest", str(folder / "multi_round"), str(folder / "parallel"))
    assert ingested.exit_code == 0, ingested.output
    (note,) = [line for line in ingested.stderr.splitlines() if line.startswith("note:")]
    assert note.startswith("note: 2 runs were recorded without content")
    assert "enable_sensitive_data=True" in note


def test_runs_with_content_get_no_note(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    folder = PAYLOADS / "autogen" / "payloads" / "openllmetry" / "multi_round"
    ingested = cli(db, "ingest", str(folder))
    assert ingested.exit_code == 0, ingested.output
    assert "note:" not in ingested.stderr
    (run,) = json.loads(cli(db, "runs", "--format", "json").stdout)
    assert "note:" not in cli(db, "show", run["run_id"][:8]).stderr


def test_content_in_attributes_not_read_is_a_conversion_gap(tmp_path: Path) -> None:
    """An LLM span of a form tracereplay does not read, its content under ``vendor.*`` keys:
    the run comes out empty, and the note says it is a conversion gap, naming the span, not
    a setting to turn on."""
    span = {
        "traceId": "5b8efff798038103d269b633813fc60c",
        "spanId": "eee19b7ec3c1b174",
        "name": "vendor.chat",
        "kind": 3,
        "startTimeUnixNano": "1700000000000000000",
        "endTimeUnixNano": "1700000001000000000",
        "attributes": [
            {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
            {"key": "gen_ai.request.model", "value": {"stringValue": "m"}},
            {"key": "vendor.request.prompt", "value": {"stringValue": "Weather in Paris?"}},
        ],
    }
    doc = {"resourceSpans": [{"scopeSpans": [{"scope": {"name": "vendor"}, "spans": [span]}]}]}
    path = tmp_path / "vendor.json"
    path.write_text(json.dumps(doc))
    db = tmp_path / "s.duckdb"
    ingested = cli(db, "ingest", str(path))
    assert ingested.exit_code == 0, ingested.output
    (note,) = [line for line in ingested.stderr.splitlines() if line.startswith("note:")]
    assert "conversion gap" in note and "vendor.chat" in note, note
    assert "recorded without content" not in note
    (run,) = json.loads(cli(db, "runs", "--format", "json").stdout)
    assert "conversion gap" in cli(db, "show", run["run_id"][:8]).stderr
