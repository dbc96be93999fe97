"""The installed command end to end: ingest a real OTLP file, promote its run, export the suite."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

FIXTURE = (
    Path(__file__).parent.parent
    / "fixtures"
    / "otlp"
    / "generated-otel-genai-latest__agent_tool_calls.json"
)
EXE = Path(sys.executable).with_name("tracereplay")


def run(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(EXE), "--db", str(db), *args], capture_output=True, text=True, timeout=120, check=False
    )


@pytest.mark.slow
def test_ingest_then_promote_then_export(tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    ingested = run(db, "ingest", str(FIXTURE))
    assert ingested.returncode == 0, ingested.stderr
    trace_id = "4a19a2c838cc9943175f12da1bae1a77"
    promoted = run(db, "promote", trace_id, "--tag", "e2e")  # a trace id holding one run
    assert promoted.returncode == 0, promoted.stderr
    case_id = promoted.stdout.strip()
    assert (
        "into suite 'weather_agent' (new suite, default checks) as case #0 (reference_run)"
        in promoted.stderr
    )
    exported = run(db, "suite", "export", "weather_agent")
    assert exported.returncode == 0, exported.stderr
    data = yaml.safe_load(exported.stdout)
    [case] = data["cases"]
    assert case["id"] == case_id and case["seq"] == 0 and case["tags"] == ["e2e"]
    assert case["query"] == "What's the weather and population in San Francisco?"
    assert [t["name"] for t in case["expected_tool_calls"]] == ["get_weather", "get_population"]
    assert case["expected_tool_calls"][0]["arguments"] == {"city": "San Francisco"}
    assert "foggy" in case["expected_output"]
    assert [c["kind"] for c in data["checks"]] == [
        "status",
        "containsExpected",
        "toolCallArgsMatch",
    ]
    again = run(db, "promote", trace_id)
    assert again.returncode == 0 and again.stdout.strip() == case_id
    missing = run(db, "promote", "ffffffff")
    assert missing.returncode == 2
    assert missing.stderr.splitlines() == [
        "error: no run matches 'ffffffff' (neither a run id prefix nor a trace id)"
    ]
