"""The SQL page: a read-only query (the guard of ``tracereplay sql``) and its rows."""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from tracereplay.errors import TraceReplayError
from tracereplay.ui import access
from tracereplay.ui.pages import render
from tracereplay.ui.routes.common import config_of, text

EXAMPLE = "SELECT status, count(*) AS runs FROM runs GROUP BY status ORDER BY runs DESC"
TABLES = (
    "runs", "tool_calls", "llm_calls", "spans", "logs", "eval_suites", "eval_cases",
    "eval_runs", "case_results", "check_results", "score_history", "case_history",
    "suite_trend", "tool_usage", "run_summary",
)  # fmt: skip


def run_query(config, sql: str) -> dict[str, Any]:
    """Columns and at most ``sql_max_rows`` rows of a read-only query; ``error`` when refused."""
    from tracereplay.query import run_sql

    try:
        with access.store_for_request(config) as store, run_sql(store, sql) as rel:
            if rel is None:
                return {"columns": [], "rows": [], "more": False, "error": None}
            columns = list(rel.columns)
            rows = rel.limit(config.sql_max_rows + 1).fetchall()
    except TraceReplayError as exc:
        return {"columns": [], "rows": [], "more": False, "error": str(exc)}
    more = len(rows) > config.sql_max_rows
    return {"columns": columns, "rows": rows[: config.sql_max_rows], "more": more, "error": None}


def _page(request: Request, sql: str, result: dict[str, Any] | None) -> Response:
    status = 400 if result and result["error"] else 200
    return render(
        request, "sql.html", status_code=status, active="sql", sql=sql, result=result,
        tables=TABLES,
    )  # fmt: skip


async def sql_page(request: Request) -> Response:
    config = config_of(request)
    if request.method == "POST":
        sql = text(await request.form(), "sql")
    else:
        sql = request.query_params.get("q", "")
    if not sql.strip():
        return _page(request, sql or EXAMPLE, None)
    result = await run_in_threadpool(run_query, config, sql)
    return _page(request, sql, result)


routes = [Route("/sql", sql_page, methods=["GET", "POST"])]
