"""Fixtures for the promotion tests: a fresh store and the CLI bound to it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from promote_helpers import CliResult
from typer.testing import CliRunner

from tracereplay.cli.app import app


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "t.duckdb"


@pytest.fixture
def cli(db: Path) -> Callable[..., CliResult]:
    """``cli("promote", run_id)``: ``tracereplay --db DB ...`` through typer's CliRunner on the
    app (errors become one ``error:`` line and their exit code, as for the installed command)."""
    runner = CliRunner()

    def run(*args: str, input: str | None = None, db_path: Path | None = None) -> CliResult:
        result = runner.invoke(app, ["--db", str(db_path or db), *args], input=input)
        assert "Traceback" not in result.output, result.output
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise result.exception  # a bug, not a user error: show it
        return CliResult(result.exit_code, result.stdout, result.stderr)

    return run
