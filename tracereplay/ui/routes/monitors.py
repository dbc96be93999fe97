"""Monitors: the list, and a page per monitor (pass rate over time, worst checks, the failing
runs with one click to promote each into a suite named after the monitor)."""

from __future__ import annotations

from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from tracereplay.charts import Series, chart
from tracereplay.monitor.records import get_monitor, list_monitors
from tracereplay.monitor.status import monitor_status
from tracereplay.store.monitors import judged_runs, pass_rate_over_time, pass_rates
from tracereplay.ui import access
from tracereplay.ui.pages import pct, render
from tracereplay.ui.queries.runs import parse_time
from tracereplay.ui.routes.common import config_of

SINCE_CHOICES = ("1h", "24h", "7d", "30d", "")


def _since(request: Request) -> tuple[str, object]:
    since = request.query_params.get("since", "7d").strip()
    return since, (parse_time(since, "since") if since else None)


def monitors_page(request: Request) -> Response:
    since, cutoff = _since(request)
    with access.reading(config_of(request)) as store:
        monitors = list_monitors(store)
        rates = {r["monitor"]: r for r in pass_rates(store, cutoff)}
    return render(
        request, "monitors.html", active="monitors", monitors=monitors, rates=rates,
        since=since, since_choices=SINCE_CHOICES,
    )  # fmt: skip


def monitor_page(request: Request) -> Response:
    name = request.path_params["name"]
    since, cutoff = _since(request)
    with access.reading(config_of(request)) as store:
        monitor = get_monitor(store, name)
        status = monitor_status(store, name, cutoff)
        buckets = pass_rate_over_time(store, name, cutoff)
        failing = judged_runs(store, name, since=cutoff, failing=True, limit=100)
    chart_html = None
    if buckets:
        drawn = chart(
            "pass rate over time",
            [f"{b['bucket']:%m-%d %H:%M}" for b in buckets],
            [Series("pass rate", [b["pass_rate"] for b in buckets], 0)],
            fmt=lambda v: pct(v, 0),
            y_max=1.0,
            tooltips=[f"{b['bucket']:%Y-%m-%d %H:%M} · {b['runs']} runs" for b in buckets],
        )
        chart_html = Markup(drawn)
    return render(
        request, "monitor.html", active="monitors", monitor=monitor, status=status,
        chart=chart_html, failing=failing, since=since, since_choices=SINCE_CHOICES,
        suite_name=f"monitor-{name}",
    )  # fmt: skip


routes = [
    Route("/monitors", monitors_page, methods=["GET"]),
    Route("/monitors/{name}", monitor_page, methods=["GET"]),
]
