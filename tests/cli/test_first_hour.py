"""What a newcomer meets first (issue 14): live runs by default, a mistyped --db, one-line
usage errors, 80-column tables with short ids, help that teaches, the failure point in `show`,
and `diff` by label, `--last` and `suite@N`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from demo_store import demo_copy
from sql_pipeline import tracereplay_here
from typer.testing import CliRunner

from tracereplay.cli.app import app

pytestmark = pytest.mark.slow

BIN = Path(sys.executable).parent
runner = CliRunner()


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo's store: five live runs, a suite, eval runs labelled recorded, v1, v2, v2-fifo
    (a copy of the one examples/demo_eval.sh makes once per session)."""
    return demo_copy(tmp_path_factory)


def tr(db: Path | str, *args: str, width: int = 80) -> subprocess.CompletedProcess[str]:
    """``tracereplay --db DB ARGS`` in a terminal ``width`` columns wide (a process of its own:
    the width is its terminal's)."""
    env = {**os.environ, "COLUMNS": str(width)}
    env.pop("TRACEREPLAY_DB", None)
    return subprocess.run([str(BIN / "tracereplay"), "--db", str(db), *args], capture_output=True,
                          text=True, env=env)  # fmt: skip


def tr_here(db: Path | str, *args: str) -> subprocess.CompletedProcess[str]:
    """``tracereplay --db DB ARGS`` in this process, for what does not depend on the width
    (errors, exit codes, files made): no interpreter to start for each."""
    return tracereplay_here(Path(db), *args, env={"TRACEREPLAY_DB": None}, check=False)


def test_runs_lists_live_runs_unless_kind_says_otherwise(demo_db: Path) -> None:
    live = tr(demo_db, "runs", "--format", "json")
    assert '"kind": "replay"' not in live.stdout and '"kind": "live"' in live.stdout
    every = tr(demo_db, "runs", "--kind", "all", "--limit", "500", "--format", "json")
    assert '"kind": "replay"' in every.stdout
    table = tr(demo_db, "runs", "--kind", "all")
    assert " kind " in table.stdout.splitlines()[0] and "replay" in table.stdout


def test_runs_fits_80_columns_with_short_ids_that_show_accepts(demo_db: Path) -> None:
    out = tr(demo_db, "runs", "--kind", "all", "--limit", "200").stdout
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 80
    short = lines[1].split()[0]
    assert 8 <= len(short) < 36
    shown = tr(demo_db, "show", short)
    assert shown.returncode == 0, shown.stderr
    assert max(len(line) for line in shown.stdout.splitlines()) <= 80
    assert "kind live" in shown.stdout or "kind replay" in shown.stdout  # never cut in two
    wide = tr(demo_db, "runs", "--wide").stdout
    assert len(wide.splitlines()[1].split()[0]) == 36


def test_show_marks_where_a_run_failed(demo_db: Path) -> None:
    out = tr(demo_db, "runs", "--status", "failed", "--format", "json").stdout
    run_id = out.split('"run_id": "')[1].split('"')[0]
    shown = tr(demo_db, "show", run_id[:10]).stdout
    lines = shown.splitlines()
    marked = [i for i, line in enumerate(lines) if "✗ the run failed here" in line]
    assert len(marked) == 1 and "round 2 llm" in lines[marked[0] - 1]
    assert "ProviderError" in lines[marked[0] + 1]
    limited = tr(demo_db, "runs", "--status", "max_rounds_exceeded", "--format", "json").stdout
    run_id = limited.split('"run_id": "')[1].split('"')[0]
    assert "✗ round limit reached here" in tr(demo_db, "show", run_id).stdout


@pytest.mark.parametrize(
    "command", [["runs"], ["show", "abc"], ["suite", "list"], ["diff", "--last"]]
)
def test_a_store_that_does_not_exist_is_an_error_and_nothing_is_created(
    tmp_path: Path, command: list[str]
) -> None:
    for db in (tmp_path / "no" / "such" / "dir" / "x.duckdb", tmp_path / "typo.duckdb"):
        done = tr_here(db, *command)
        assert done.returncode == 2
        assert (
            done.stderr.startswith("error: no tracereplay store at ")
            and done.stderr.count("\n") == 1
        )
        assert not db.exists() and not db.parent.exists() or list(db.parent.iterdir()) == []


def test_commands_that_write_create_the_store(tmp_path: Path) -> None:
    db = tmp_path / "new" / "s.duckdb"
    db.parent.mkdir()
    done = tr_here(db, "suite", "create", "weather")
    assert done.returncode == 0, done.stderr
    assert db.exists()
    assert tr_here(db, "runs").returncode == 0


@pytest.mark.parametrize(
    "args,expected",
    [
        (["evl"], "error: No such command 'evl'. Did you mean 'eval'? (see `tracereplay --help`)"),
        (
            ["runs", "--format", "x"],
            "error: Invalid value for '--format' / '-f': 'x' is not one of",
        ),
        (["runs", "--bogus"], "error: No such option: --bogus (see `tracereplay runs --help`)"),
        (["show"], "error: Missing argument 'RUN_ID'. (see `tracereplay show --help`)"),
    ],
)
def test_usage_errors_are_one_line(tmp_path: Path, args: list[str], expected: str) -> None:
    result = runner.invoke(app, ["--db", str(tmp_path / "x.duckdb"), *args])
    assert result.exit_code == 2
    assert result.stderr.startswith(expected) and result.stderr.count("\n") == 1, result.stderr
    assert "╭" not in result.output


def test_help_names_values_the_same_way(tmp_path: Path) -> None:
    result = runner.invoke(app, ["runs", "--help"], env={"COLUMNS": "80"})
    out = result.output
    assert "<bool>" not in out and "<str>" not in out
    words = " ".join(out.replace("│", " ").split())
    assert "success, failed or max_rounds_exceeded" in words and "live|replay|all" in out
    assert "Exit codes" in out and "Examples" in out
    show = runner.invoke(app, ["show", "--help"], env={"COLUMNS": "80"}).output
    assert "tracereplay show [OPTIONS] RUN_ID" in show and "{run_id}" not in show


def test_diff_by_label_last_and_suite_at_n(demo_db: Path) -> None:
    by_label = tr(demo_db, "diff", "v1", "v2")
    assert by_label.returncode == 1  # v2 regressed
    assert "Regressed 1" in by_label.stdout
    assert max(len(line) for line in by_label.stdout.splitlines()) <= 80
    assert "┃" not in by_label.stdout and "│" not in by_label.stdout  # no border to lose
    by_number = tr(demo_db, "diff", "weather-regressions@2", "weather-regressions@3")
    assert by_number.stdout.splitlines()[1:3] == by_label.stdout.splitlines()[1:3]
    last = tr(demo_db, "diff", "--last")
    assert last.returncode == 0 and "label v2-fifo" in last.stdout and "label v2 " in last.stdout
    bad = tr(demo_db, "diff", "weather-regressions@9", "v1")
    assert bad.returncode == 2
    assert "has eval runs 1 to 4" in bad.stderr
    assert tr(demo_db, "diff", "v1").stderr.startswith("error: give two eval runs")
