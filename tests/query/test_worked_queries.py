"""Every worked query at the end of docs/sql.md, run through `tracereplay sql --format json`
against a store filled by the real pipeline (see sql_pipeline), with what each must answer."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tracereplay.cli.app import app
from tracereplay.store import Store

DOC = Path(__file__).parents[2] / "docs" / "sql.md"
REFERENCE_DIFF = "city: expected 'San Francisco', got 'san francisco'"

Rows = list[dict[str, Any]]


def worked_queries() -> list[tuple[int, str, str]]:
    """``(number, title, sql)`` of each ``### N. title`` + ```sql block after '## Worked queries'."""
    text = DOC.read_text(encoding="utf-8")
    section = text.split("\n## Worked queries\n", 1)[1]
    assert "\n## " not in section, "docs/sql.md must end with the worked queries"
    found = re.findall(r"^### (\d+)\. (.+?)\n.*?```sql\n(.*?)```", section, re.S | re.M)
    return [(int(n), title, sql) for n, title, sql in found]


def run_json(db: Path, sql: str) -> Rows:
    result = CliRunner().invoke(app, ["--db", str(db), "sql", sql, "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def base(db: Path, sql: str) -> Rows:
    with Store.open(db) as store:
        return store.query_dicts(sql)


def check_pass_rate_per_day(rows: Rows, db: Path) -> None:
    [day] = base(
        db, "SELECT DISTINCT CAST(timezone('UTC', started_at) AS DATE) AS d FROM eval_runs"
    )
    assert rows == [
        {"suite_name": "weather", "day": str(day["d"]), "eval_runs": 3, "passed": 12,
         "cases": 18, "pass_rate": 0.667}
    ]  # fmt: skip


def check_regressed(rows: Rows, db: Path) -> None:
    assert [r["seq"] for r in rows] == [0, 1, 2, 3, 4, 5]
    assert all(r["before"] == "PASSED" for r in rows)
    # #2's replay called tools its source run never called: FAILED (the agent drifted)
    assert {r["seq"]: r["now"] for r in rows} == {0: "FAILED", 1: "FAILED", 2: "FAILED",
                                                   3: "FAILED", 4: "FAILED",
                                                   5: "FAILED"}  # fmt: skip
    assert "no recording for tool call get_weather" in rows[2]["reason"]


def check_most_failing_tool(rows: Rows, db: Path) -> None:
    assert rows[0] == {"tool_name": "get_population", "calls": 5, "errors": 4, "error_rate": 0.8}
    assert rows[1]["tool_name"] == "get_weather" and rows[1]["errors"] == 0


def check_tokens(rows: Rows, db: Path) -> None:
    expected = base(
        db,
        "SELECT agent_name, count(*) AS runs, sum(input_tokens) AS i, sum(output_tokens) AS o"
        " FROM runs WHERE kind = 'live' GROUP BY agent_name",
    )
    got = {r["agent_name"]: (r["runs"], r["input_tokens"], r["output_tokens"]) for r in rows}
    assert got == {e["agent_name"]: (e["runs"], e["i"], e["o"]) for e in expected}
    assert sum(r["runs"] for r in rows) == 6
    assert all(r["total_tokens"] == r["input_tokens"] + r["output_tokens"] for r in rows)
    assert [r["total_tokens"] for r in rows] == sorted(
        (r["total_tokens"] for r in rows), reverse=True
    )


def check_slowest_tools(rows: Rows, db: Path) -> None:
    assert (rows[0]["agent_name"], rows[0]["tool_name"]) == ("weather_agent", "get_population")
    assert [r["p95_ms"] for r in rows] == sorted((r["p95_ms"] for r in rows), reverse=True)
    assert all(r["p50_ms"] <= r["p95_ms"] <= r["max_ms"] for r in rows)


def check_flaky(rows: Rows, db: Path) -> None:
    assert [(r["seq"], r["flaky_runs"], r["eval_runs"]) for r in rows] == [
        (0, 1, 3), (1, 1, 3), (3, 1, 3), (4, 1, 3), (5, 1, 3)
    ]  # fmt: skip


def check_deploys(rows: Rows, db: Path) -> None:
    assert [(r["version"], r["pass_rate"], r["change"]) for r in rows] == [
        ("v1", 1.0, None), ("v2", 1.0, 0.0), ("v3", 0.0, -1.0)
    ]  # fmt: skip


def check_failing_checks(rows: Rows, db: Path) -> None:
    assert [r["check_name"] for r in rows] == [
        "containsExpected", "toolCallArgsMatch", "replay", "status"
    ]  # fmt: skip
    assert [r["failures"] for r in rows] == [5, 5, 2, 0]
    assert rows[3]["mean_score"] == 1.0


def check_failing_sources(rows: Rows, db: Path) -> None:
    sources = {
        r["seq"]: r["source_run_id"] for r in base(db, "SELECT seq, source_run_id FROM eval_cases")
    }
    assert [r["seq"] for r in rows] == [0, 1, 2, 3, 4, 5]
    assert all(r["run_id"] == sources[r["seq"]] for r in rows)
    assert {r["status"] for r in rows} == {"FAILED"}
    assert {r["convention"] for r in rows} == {"genai", "openinference", "openllmetry"}


def check_one_check_over_time(rows: Rows, db: Path) -> None:
    assert [(r["label"], r["mean_score"], r["passed"], r["results"]) for r in rows] == [
        ("v1", 1.0, 6, 6), ("v2", 1.0, 12, 12), ("v3", 0.792, 7, 12)
    ]  # fmt: skip


def check_drift(rows: Rows, db: Path) -> None:
    assert rows == [
        {"label": "v3", "tool": "get_weather", "difference": REFERENCE_DIFF, "calls": 5}
    ]


def check_models(rows: Rows, db: Path) -> None:
    [expected] = base(
        db,
        "SELECT count(*) AS n FROM llm_calls JOIN runs USING (run_id) WHERE runs.kind = 'live'",
    )
    assert [(r["model"], r["calls"]) for r in rows] == [("gpt-4o-mini-2024-07-18", expected["n"])]
    assert rows[0]["tokens"] > 0


CHECKS: dict[int, Callable[[Rows, Path], None]] = {
    1: check_pass_rate_per_day,
    2: check_regressed,
    3: check_most_failing_tool,
    4: check_tokens,
    5: check_slowest_tools,
    6: check_flaky,
    7: check_deploys,
    8: check_failing_checks,
    9: check_failing_sources,
    10: check_one_check_over_time,
    11: check_drift,
    12: check_models,
}


def test_the_doc_ends_with_at_least_ten_worked_queries_each_checked() -> None:
    queries = worked_queries()
    assert len(queries) >= 10
    assert [n for n, _, _ in queries] == list(range(1, len(queries) + 1))
    assert set(CHECKS) == {n for n, _, _ in queries}, "every worked query needs its check here"


@pytest.mark.parametrize(("number", "title", "sql"), worked_queries(), ids=lambda v: str(v)[:40])
def test_worked_query(pipeline_db: Path, number: int, title: str, sql: str) -> None:
    rows = run_json(pipeline_db, sql)
    assert rows, f"query {number} ({title}) returned nothing"
    CHECKS[number](rows, pipeline_db)
