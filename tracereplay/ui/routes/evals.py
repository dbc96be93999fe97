"""Eval runs: the list, one eval run (what the HTML report shows), the diff of two."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from tracereplay.errors import BadParameterError
from tracereplay.store import eval_runs
from tracereplay.ui import access
from tracereplay.ui.pages import render
from tracereplay.ui.queries import evals as queries
from tracereplay.ui.routes.common import config_of
from tracereplay.ui.routes.suites import trend_charts


def evals_page(request: Request) -> Response:
    with access.reading(config_of(request)) as store:
        rows = queries.eval_runs(store)
    return render(request, "evals.html", active="evals", rows=rows)


def eval_run_page(request: Request) -> Response:
    with access.reading(config_of(request)) as store:
        er = queries.eval_run(store, request.path_params["eval_run_id"])
        cases = queries.eval_run_cases(store, er["eval_run_id"], er["mode"])
        previous = eval_runs.previous_completed_eval_run_id(
            store, er["suite_id"], er["started_at"], er["eval_run_id"]
        )
        trend = queries.suite_trend(store, er["suite_id"])
    return render(
        request,
        "eval_run.html",
        active="evals",
        er=er,
        cases=cases,
        previous=previous,
        charts=trend_charts(trend, er["eval_run_id"])[:1],
    )


def diff_page(request: Request) -> Response:
    a = request.query_params.get("a", "").strip()
    b = request.query_params.get("b", "").strip()
    if not a or not b:
        raise BadParameterError("the diff needs two eval runs: /diff?a=EVAL_RUN_ID&b=EVAL_RUN_ID")
    with access.reading(config_of(request)) as store:
        data = queries.diff(store, a, b)
    return render(request, "diff.html", active="evals", **data)


routes = [
    Route("/evals", evals_page, methods=["GET"]),
    Route("/evals/{eval_run_id}", eval_run_page, methods=["GET"]),
    Route("/diff", diff_page, methods=["GET"]),
]
