"""Sessions on the command line (issue 54): `runs --session ID` lists a conversation's turns in
order, `show` says where a run stands among them."""

from __future__ import annotations

import json
from pathlib import Path

from conversation import SESSION, TURNS, turn_run_ids, write_conversation
from typer.testing import CliRunner

from tracereplay.cli.app import app

runner = CliRunner()


def cli(db: Path, *args: str):
    return runner.invoke(app, ["--db", str(db), *args], terminal_width=120)


def _ingested(tmp_path: Path) -> Path:
    db = tmp_path / "t.duckdb"
    other = write_conversation(tmp_path / "other.json", session="conv-other", traces=3)
    for path in (write_conversation(tmp_path / "conv.json"), other):
        result = cli(db, "ingest", str(path))
        assert result.exit_code == 0, result.output
    return db


def test_runs_session_lists_the_turns_in_order(tmp_path: Path) -> None:
    db = _ingested(tmp_path)
    result = cli(db, "runs", "--session", SESSION, "--format", "json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert [r["run_id"] for r in rows] == turn_run_ids()
    assert [r["query"] for r in rows] == [q for q, _ in TURNS]
    assert [r["turn"] for r in rows] == [1, 2, 3]
    assert {r["session_id"] for r in rows} == {SESSION}
    table = cli(db, "runs", "--session", SESSION)
    assert table.exit_code == 0, table.output
    lines = table.stdout.splitlines()
    assert lines[0].split()[:2] == ["turn", "run"]
    assert [line.split()[:2] for line in lines[1:]] == [
        [str(n), run_id[:8]] for n, run_id in enumerate(turn_run_ids(), 1)
    ]
    assert "Should I take" in lines[3]
    none = cli(db, "runs", "--session", "no-such-session")
    assert none.exit_code == 0 and "no live runs match" in none.stdout


def test_runs_session_with_another_filter_keeps_the_turn_numbers(tmp_path: Path) -> None:
    db = _ingested(tmp_path)
    result = cli(db, "runs", "--session", SESSION, "--limit", "5", "--format", "json")
    first, *_ = json.loads(result.stdout)
    rows = json.loads(
        cli(db, "runs", "--session", SESSION, "--since", "2020-01-01", "--format", "json").stdout
    )
    assert [r["turn"] for r in rows] == [1, 2, 3] and rows[0]["run_id"] == first["run_id"]


def test_show_says_the_turns_around_a_run(tmp_path: Path) -> None:
    db = _ingested(tmp_path)
    first, second, third = turn_run_ids()
    result = cli(db, "show", second)
    assert result.exit_code == 0, result.output
    assert f"session {SESSION}" in result.stdout
    assert "turn 2 of 3" in result.stdout
    assert f"previous {first[:8]}" in result.stdout and f"next {third[:8]}" in result.stdout
    last = cli(db, "show", third).stdout
    assert "turn 3 of 3" in last and "next " not in last and f"previous {second[:8]}" in last


def test_show_of_a_run_of_no_session_says_nothing_of_turns(tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    path = write_conversation(tmp_path / "plain.json", session=None)
    assert cli(db, "ingest", str(path)).exit_code == 0
    result = cli(db, "show", turn_run_ids()[0])
    assert result.exit_code == 0, result.output
    assert "session" not in result.stdout and "turn " not in result.stdout
