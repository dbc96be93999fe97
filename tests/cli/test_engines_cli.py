"""The everyday commands, end to end, on both engines: the same fixtures give the same runs,
cases and verdicts on a DuckDB file and on a PostgreSQL database; ``store copy`` moves a DuckDB
store into PostgreSQL whole."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from tracereplay.cli.app import app

FIXTURES = Path(__file__).parent.parent / "fixtures" / "otlp"
FILES = sorted(str(p) for p in FIXTURES.glob("generated-*.pb"))

runner = CliRunner()


def cli(target: str, *args: str) -> str:
    result = runner.invoke(app, ["--store", target, *args])
    assert result.exit_code == 0, result.output
    return result.stdout


def _flow(target: str, tmp_path: Path) -> dict:
    """ingest -> runs -> show -> promote (ids, --where) -> suite export/import -> eval twice ->
    diff -> report -> sql -> export: what each says, without the ids that differ per store."""
    cli(target, "ingest", *FILES)
    runs = json.loads(cli(target, "runs", "--format", "json"))
    weather = next(r for r in runs if r["agent_name"] == "weather_agent")
    assert "get_weather" in cli(target, "show", weather["run_id"][:8])
    cli(target, "promote", weather["run_id"], "--suite", "one")
    cli(target, "promote", "--where", "tool_calls_count > 0", "--suite", "many")
    exported = tmp_path / f"many-{len(target)}.yaml"
    cli(target, "suite", "export", "many", "-o", str(exported))
    assert "unchanged" in cli(target, "suite", "import", str(exported))
    first = cli(target, "eval", "many", "--label", "a")
    second = cli(target, "eval", "many", "--label", "b")
    diff = cli(target, "diff", "--last")
    report = tmp_path / f"r-{len(target)}.html"
    cli(target, "report", "-o", str(report))
    rows = json.loads(
        cli(
            target,
            "sql",
            "SELECT label, cases, passed FROM suite_trend ORDER BY label",
            "--format",
            "json",
        )
    )
    cli(target, "export", "-o", str(tmp_path / f"parquet-{len(target)}"))
    checks = tmp_path / "status.yaml"
    checks.write_text("checks:\n  - kind: status\n")
    cli(target, "monitor", "create", "ok", "--checks", str(checks))
    judged = cli(target, "monitor", "run")
    pruned = cli(target, "prune", "--older-than", "1d", "--dry-run")
    return {
        "judged": judged.strip(),
        "pruned": pruned.split(" before ")[1].split(": ", 1)[1].strip(),
        "runs": sorted((r["agent_name"], r["status"], r["tool_calls_count"]) for r in runs),
        "verdict": [line for line in first.splitlines() if line.startswith("pass rate")][0].split(
            "  "
        )[0],
        "again": [line for line in second.splitlines() if line.startswith("pass rate")][0].split(
            "  "
        )[0],
        "diff": diff.splitlines()[-1],
        "report": report.stat().st_size > 1000,
        "exported": sorted(p.name for p in (tmp_path / f"parquet-{len(target)}").iterdir()),
        "trend": rows,
        "suites": sorted(
            line.split()[0]
            for line in cli(target, "suite", "list").splitlines()[1:]
            if line.strip()
        ),
    }


def test_the_same_flow_says_the_same_on_both_engines(pg_url: str, tmp_path: Path) -> None:
    on_duckdb = _flow(str(tmp_path / "t.duckdb"), tmp_path)
    on_postgres = _flow(pg_url, tmp_path)
    assert on_postgres == on_duckdb
    assert on_duckdb["trend"] == [
        {
            "label": "a",
            "cases": on_duckdb["trend"][0]["cases"],
            "passed": on_duckdb["trend"][0]["passed"],
        },
        {
            "label": "b",
            "cases": on_duckdb["trend"][1]["cases"],
            "passed": on_duckdb["trend"][1]["passed"],
        },
    ]


def test_store_init_on_either_engine(store_target: str) -> None:
    assert "at schema version" in cli(store_target, "store", "init")


def test_store_copy_moves_a_duckdb_store_into_postgres(pg_url: str, tmp_path: Path) -> None:
    db = str(tmp_path / "t.duckdb")
    cli(db, "ingest", *FILES)
    cli(db, "promote", "--where", "true", "--suite", "s")
    cli(db, "eval", "s")
    before = cli(
        db,
        "sql",
        "SELECT count(*) AS n FROM spans UNION ALL SELECT count(*) FROM case_results",
        "--format",
        "json",
    )
    out = cli(db, "store", "copy", "--to", pg_url)
    assert "copied" in out
    after = cli(
        pg_url,
        "sql",
        "SELECT count(*) AS n FROM spans UNION ALL SELECT count(*) FROM case_results",
        "--format",
        "json",
    )
    assert json.loads(after) == json.loads(before)
    assert cli(pg_url, "runs", "--format", "json") == cli(db, "runs", "--format", "json")
    again = runner.invoke(app, ["--store", db, "store", "copy", "--to", pg_url])
    assert again.exit_code == 2 and "already holds rows" in again.output


def test_an_unreachable_server_store_is_one_line_without_its_password(tmp_path: Path) -> None:
    import socket
    import subprocess
    import sys

    with socket.socket() as probe:  # a loopback port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"postgresql://me:s3cret-pw@127.0.0.1:{port}/history"
    done = subprocess.run(
        [sys.executable, "-m", "tracereplay", "--store", url, "runs"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**__import__("os").environ, "TRACEREPLAY_LOCAL_DIR": str(tmp_path)},
    )
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "s3cret-pw" not in done.stderr + done.stdout
    assert "me:***@127.0.0.1" in done.stderr
