"""End to end: a running ``serve``, an SDK agent sending runs over OTLP/HTTP, a monitor with a
deterministic check and an ``llmJudge`` served by a loopback fake model; the results queried
back with ``tracereplay sql``, ``monitor status`` and ``runs --monitor --failing``."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider

import tracereplay
from tracereplay import sdk

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "serve"))
from serve_helpers import ServeProcess, cli, get  # noqa: E402

pytestmark = pytest.mark.slow


def sql(db: Path, query: str) -> list[dict]:
    result = cli(db, "sql", "--format", "json", query)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def wait_for(db: Path, query: str, count: int, timeout: float = 90.0) -> list[dict]:
    deadline = time.monotonic() + timeout
    while True:
        rows = sql(db, query)
        if len(rows) >= count or time.monotonic() > deadline:
            return rows
        time.sleep(0.3)


def test_serve_judges_new_runs_of_a_monitor_as_they_arrive(tmp_path: Path, judge) -> None:
    db = tmp_path / "prod.duckdb"
    checks = tmp_path / "monitor.yaml"
    checks.write_text(
        "checks:\n"
        "  - kind: status\n"
        "  - kind: llmJudge\n"
        "    name: helpful\n"
        "    model: judge-1\n"
        f"    endpoint: {judge.url}\n"
    )
    judge.score_for = lambda prompt: "score: 0.2" if "Oslo" in prompt else "score: 0.9"
    made = cli(db, "monitor", "create", "answers", "--checks", str(checks), "--agent", "weather")
    assert made.returncode == 0, made.stderr
    server = ServeProcess(db, "--max-judge-calls-per-minute", "600").start()
    try:
        provider = TracerProvider(resource=Resource.create({"service.name": "prod"}))
        tracereplay.configure(
            endpoint=server.http_url, protocol="http/protobuf", tracer_provider=provider
        )
        ids = {}
        for city in ("Paris", "Oslo"):
            with tracereplay.agent_run("weather", f"Weather in {city}?") as run:
                run.set_response(f"Sunny in {city}")
                ids[city] = run.run_id
        with (
            pytest.raises(RuntimeError),
            tracereplay.agent_run("weather", "Weather in Rome?") as run,
        ):
            ids["Rome"] = run.run_id
            raise RuntimeError("weather API down")
        with tracereplay.agent_run("billing", "Refund order 7?") as run:  # not selected
            run.set_response("Refunded")
            other = run.run_id
        assert tracereplay.flush()
        sdk.shutdown()

        rows = wait_for(
            db, "SELECT run_id, check_name, status, score, reason FROM monitor_results", 6
        )
        assert len(rows) == 6, (rows, server.output())
        by = {(r["run_id"], r["check_name"]): r for r in rows}
        assert by[(ids["Paris"], "status")]["status"] == "PASSED"
        assert by[(ids["Paris"], "helpful")]["score"] == pytest.approx(0.9)
        assert by[(ids["Oslo"], "helpful")]["status"] == "FAILED"
        assert by[(ids["Rome"], "status")]["status"] == "FAILED"
        assert other not in {r["run_id"] for r in rows}
        health = get(server, "/healthz").json()
        assert health["monitor_runs_judged"] == 3 and health["monitor_judge_calls"] == 3
        assert health["monitor_error"] is None
        # the judge saw the three selected runs only, each once
        asked = [r["messages"][-1]["content"] for r in judge.requests]
        assert len(asked) == 3 and not any("Refund" in a for a in asked)
        calls = sql(
            db,
            "SELECT run_id, model, input_tokens, output_tokens, duration_ms "
            "FROM monitor_judge_calls",
        )
        assert {c["run_id"] for c in calls} == {ids["Paris"], ids["Oslo"], ids["Rome"]}
        assert all(c["model"] == "judge-1" and c["input_tokens"] == 120 for c in calls)
        assert all(c["output_tokens"] == 7 and c["duration_ms"] > 0 for c in calls)

        status = cli(
            db, "monitor", "status", "answers", "--since", "1h", "--max-failure-rate", "0.5"
        )
        assert status.returncode == 1, status.stdout + status.stderr
        assert "3 run(s) judged, 1 passed, 2 failed" in " ".join(status.stdout.split())
        assert cli(db, "monitor", "status", "answers", "--max-failure-rate", "0.7").returncode == 0
        failing = cli(db, "runs", "--monitor", "answers", "--failing", "--format", "json")
        assert failing.returncode == 0, failing.stderr
        assert {r["run_id"] for r in json.loads(failing.stdout)} == {ids["Oslo"], ids["Rome"]}
    finally:
        sdk.shutdown()
        assert server.stop() == 0, server.output()
