"""Helpers for the promotion tests: runs written straight into a real store, and CLI results.

A module of its own (not conftest) so test files can import it unambiguously."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tracereplay.models import AgentResult, Document, EvalCase, EvalSuite, Run, ToolCallRecord
from tracereplay.store import Store
from tracereplay.store import suites as suite_store

T0 = datetime(2026, 11, 1, 8, 0, tzinfo=UTC)


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


def suite_and_cases(db: Path, name: str) -> tuple[EvalSuite, list[EvalCase]]:
    """The stored suite ``name`` and its cases, in ``seq`` order."""
    with Store.open(db) as store:
        suite = suite_store.get_suite(store, name)
        return suite, suite_store.list_cases(store, suite.id)
