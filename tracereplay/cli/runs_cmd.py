"""``tracereplay runs`` and ``tracereplay show``: list and inspect stored agent runs."""

from __future__ import annotations

import sys
from datetime import datetime
from enum import Enum
from typing import Annotated, Any, Optional

import orjson
import typer
from rich.table import Table
from rich.text import Text

from tracereplay.cli.common import console, db_path, parse_since
from tracereplay.cli.run_view import render_run
from tracereplay.errors import BadParameterError
from tracereplay.models import RUN_STATUSES

_JSON_COLUMNS = {"context", "parameters", "models", "result"}


class OutputFormat(str, Enum):
    table = "table"
    json = "json"


def runs(
    status: Annotated[
        Optional[str],
        typer.Option(help="Only runs with this status: success, failed or max_rounds_exceeded."),
    ] = None,
    agent: Annotated[
        Optional[str], typer.Option(help="Only runs of this agent (exact name).")
    ] = None,
    since: Annotated[
        Optional[str],
        typer.Option(
            help="Only runs started since: a duration back from now (30m, 12h, 7d) or an ISO date."
        ),
    ] = None,
    kind: Annotated[
        Optional[str], typer.Option(help="Only runs of this kind: live or replay.")
    ] = None,
    limit: Annotated[int, typer.Option(min=1, help="At most this many runs, newest first.")] = 50,
    fmt: Annotated[
        OutputFormat,
        typer.Option(
            "--format",
            "-f",
            help="table, or json: an array of objects keyed by the runs table's columns.",
        ),
    ] = OutputFormat.table,
) -> None:
    """List agent runs, newest first.

    [bold]Examples[/bold]

      tracereplay runs --status failed --since 1d
      tracereplay runs --agent weather_agent --format json | jq '.[0].run_id'
    """
    where: list[str] = []
    params: list[Any] = []
    if status is not None:
        if status not in RUN_STATUSES:
            raise BadParameterError(f"--status '{status}' is not one of {', '.join(RUN_STATUSES)}")
        where.append("status = ?")
        params.append(status)
    if agent is not None:
        where.append("agent_name = ?")
        params.append(agent)
    if kind is not None:
        where.append("kind = ?")
        params.append(kind)
    if since is not None:
        where.append("started_at >= ?")
        params.append(parse_since(since))
    sql = "SELECT * FROM runs"
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY started_at DESC NULLS LAST, run_id LIMIT ?"
    params.append(limit)
    from tracereplay.ingest import open_store  # the store (duckdb, pyarrow) only once needed

    with open_store(db_path()) as store:
        rows = store.query_dicts(sql, params)
    if fmt is OutputFormat.json:
        for row in rows:
            for col in _JSON_COLUMNS & row.keys():
                if row[col] is not None:
                    row[col] = orjson.loads(row[col])
        sys.stdout.write(
            orjson.dumps(rows, option=orjson.OPT_INDENT_2, default=_json_default).decode() + "\n"
        )
        return
    if not rows:
        console.print("no runs match", style="dim", markup=False)
        return
    console.print(_runs_table(rows, console.width))


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError


_STATUS_STYLE = {"success": "green", "failed": "red", "max_rounds_exceeded": "yellow"}


def _runs_table(rows: list[dict[str, Any]], width: int) -> Table:
    """The runs as a table that fits ``width``: run ids whole, optional columns dropped first."""
    optional = [  # (header, cell, width estimate), most useful first
        ("started (UTC)", lambda r: r["started_at"].strftime("%Y-%m-%d %H:%M:%S") if r["started_at"] else "", 19),
        ("agent", lambda r: Text(r["agent_name"] or ""), 16),
        ("tools", lambda r: str(r["tool_calls_count"] or 0), 5),
        ("llm", lambda r: str(r["total_llm_calls"] or 0), 3),
        ("ms", lambda r: f"{r['duration_ms'] or 0:.0f}", 6),
        ("tokens", lambda r: f"{r['input_tokens'] or 0}/{r['output_tokens'] or 0}", 9),
    ]  # fmt: skip
    budget = width - (36 + 19 + 20 + 9)  # run id, status, a readable query, borders
    chosen = []
    for column in optional:
        if budget >= column[2] + 3:
            chosen.append(column)
            budget -= column[2] + 3
    table = Table(header_style="bold", pad_edge=False, expand=True)
    table.add_column("run id", no_wrap=True, style="cyan", min_width=36)
    table.add_column("status", no_wrap=True, min_width=7)
    for header, _, est in chosen:
        justify = "left" if header in ("started (UTC)", "agent") else "right"
        table.add_column(
            header, no_wrap=True, overflow="ellipsis", max_width=max(est, 24), justify=justify
        )
    table.add_column("query", overflow="ellipsis", no_wrap=True, min_width=10, ratio=1)
    for r in rows:
        table.add_row(
            Text(r["run_id"]),
            Text(r["status"] or "", style=_STATUS_STYLE.get(r["status"] or "", "")),
            *(cell(r) for _, cell, _ in chosen),
            Text(" ".join((r["query"] or "").split())),
        )
    return table


def show(
    run_id: Annotated[
        str, typer.Argument(help="A run id, a unique prefix of one, or a trace id holding one run.")
    ],
) -> None:
    """Show one run as a tree: query, each LLM round with its tool calls, the response.

    [bold]Example[/bold]

      tracereplay show 3f2a        # any unique prefix works, as with git
    """
    from tracereplay.ingest import open_store

    with open_store(db_path()) as store:
        run = store.get_run(run_id)
    console.print(render_run(run))


def register(app: typer.Typer) -> None:
    app.command("runs")(runs)
    app.command("show")(show)
