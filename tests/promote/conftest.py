"""Helpers for the promotion tests: runs written straight into a real store, and the CLI
driven through its console-script entry point (``main``) inside typer's CliRunner isolation."""

from __future__ import annotations

import sys
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tracereplay.cli.app import main
from tracereplay.models import AgentResult, Document, Run, ToolCallRecord
from tracereplay.store import Store

T0 = datetime(2026, 11, 1, 8, 0, tzinfo=timezone.utc)


@dataclass
class CliResult:
    exit_code: int
    stdout: str
    stderr: str

    @property
    def error_lines(self) -> list[str]:
        return [line for line in self.stderr.splitlines() if line.startswith("error:")]


def make_run(
    n: int,
    *,
    query: str = "What's the weather in Paris?",
    response: str = "It is sunny in Paris.",
    status: str = "success",
    agent: str = "weather_agent",
    tools: Sequence[tuple[str, dict[str, Any]]] = (("get_weather", {"city": "Paris"}),),
    context: Sequence[Document] = (),
    parameters: dict[str, Any] | None = None,
    error: str | None = None,
    run_id: str | None = None,
) -> Run:
    """A converted run as the store holds it (the n-th one, started n minutes after T0)."""
    return Run(
        run_id=run_id or str(uuid.UUID(int=n + 1)),
        trace_id=f"{n + 1:032x}",
        root_span_id=f"{n + 1:016x}",
        agent_name=agent,
        query=query,
        context=list(context),
        parameters=parameters or {},
        started_at=T0 + timedelta(minutes=n),
        error=error,
        result=AgentResult(
            response=response,
            status=status,  # type: ignore[arg-type]
            total_rounds=len(tools) + 1,
            total_llm_calls=len(tools) + 1,
            tool_calls=[
                ToolCallRecord(round=i + 1, tool_name=name, arguments=args, result="ok")
                for i, (name, args) in enumerate(tools)
            ],
        ),
    )


def add_runs(db: Path, runs: Sequence[Run]) -> None:
    with Store.open(db) as store:
        store.replace_runs([r.trace_id for r in runs], list(runs))


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "t.duckdb"


@pytest.fixture
def cli(db: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., CliResult]:
    """``cli("promote", run_id)``: run ``tracereplay --db DB ...`` as the installed command
    would (``main()``: one-line errors, exit codes), capturing stdout and stderr."""
    runner = CliRunner()

    def run(*args: str, input: str | None = None, db_path: Path | None = None) -> CliResult:
        argv = ["tracereplay", "--db", str(db_path or db), *args]
        monkeypatch.setattr(sys, "argv", argv)
        code: int | str | None = 0
        with runner.isolation(input=input) as (out, err, _):
            try:
                main()
            except SystemExit as exc:
                code = exc.code
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
            stdout, stderr = out.getvalue().decode(), err.getvalue().decode()
        assert "Traceback" not in stderr, stderr
        return CliResult(code if isinstance(code, int) else 1, stdout, stderr)

    return run
