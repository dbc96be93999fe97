"""Production at a glance: live runs per day, failure rate, latency, tokens, tool errors."""

from __future__ import annotations

from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from tracereplay.charts import Series, chart
from tracereplay.errors import BadParameterError
from tracereplay.store.monitors import pass_rates
from tracereplay.ui import access
from tracereplay.ui.pages import ms, num, pct, render
from tracereplay.ui.queries import dashboard as queries
from tracereplay.ui.routes.common import config_of

DAY_CHOICES = (7, 14, 30, 90, 365)


def dashboard_page(request: Request) -> Response:
    agent = request.query_params.get("agent") or None
    try:
        days = int(request.query_params.get("days", "30"))
    except ValueError:
        raise BadParameterError("days must be a whole number") from None
    if not 1 <= days <= 3660:
        raise BadParameterError("days must be between 1 and 3660")
    with access.reading(config_of(request)) as store:
        since, until = queries.window(store, days, agent)
        rows, agents_rows = (
            queries.daily_and_per_agent(store, since, until, agent) if since else ([], [])
        )
        agent_names = queries.agents(store)
        monitor_rates = pass_rates(store, since) if since else []
    labels = [f"{r['day']:%m-%d}" for r in rows]
    tips = [f"{r['day']:%Y-%m-%d} · {r['runs']} runs" for r in rows]
    charts = []
    if rows:
        charts = [
            chart("live runs per day", labels,
                  [Series("failed", [r["failures"] for r in rows], 4, bars=True),
                   Series("succeeded", [r["runs"] - r["failures"] for r in rows], 6, bars=True)],
                  fmt=num, tooltips=tips, cls="runs-per-day"),
            chart("failure and tool error rates", labels,
                  [Series("failed runs", [r["failure_rate"] for r in rows], 4),
                   Series("tool errors", [r["tool_error_rate"] for r in rows], 2, dashed=True)],
                  fmt=lambda v: pct(v, 0), tooltips=tips),
            chart("run latency", labels,
                  [Series("p50", [r["p50_ms"] for r in rows], 0),
                   Series("p95", [r["p95_ms"] for r in rows], 5, dashed=True)],
                  fmt=ms, tooltips=tips),
            chart("tokens per day", labels,
                  [Series("tokens", [r["tokens"] for r in rows], 3, bars=True)],
                  fmt=num, tooltips=tips),
        ]  # fmt: skip
        charts = [Markup(c) for c in charts]
    return render(
        request,
        "dashboard.html",
        active="dashboard",
        rows=rows,
        charts=charts,
        agents=agents_rows,
        agent=agent,
        agent_names=agent_names,
        days=days,
        day_choices=DAY_CHOICES,
        monitors=monitor_rates,
        since=since,
        until=until,
    )


routes = [Route("/dashboard", dashboard_page, methods=["GET"])]
