"""Suites (list, one suite with its cases, trend charts and eval runs, the case x eval-run
grid) and cases (view, edit, remove)."""

from __future__ import annotations

from typing import Any

import orjson
from markupsafe import Markup
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from tracereplay.charts import Series, chart
from tracereplay.errors import TraceReplayError
from tracereplay.evaluate.diff import settings_text
from tracereplay.promote import format_documents
from tracereplay.store import suites as suite_store
from tracereplay.ui import access, edits
from tracereplay.ui.pages import ms, pct, render, tokens
from tracereplay.ui.queries import evals as queries
from tracereplay.ui.routes.common import config_of, redirect, refuse_if_read_only, text


def suites_page(request: Request) -> Response:
    with access.reading(config_of(request)) as store:
        rows = queries.suites(store)
    return render(request, "suites.html", active="suites", suites=rows)


def _suite_by_id(store, suite_id: str) -> dict[str, Any]:
    suite = suite_store.find_suite_by_id(store, suite_id)
    if suite is None:
        suite = suite_store.get_suite(store, suite_id)  # a name or id prefix
    return queries.suite_row(store, suite.name)


def trend_charts(trend: list[dict[str, Any]], current: str | None = None) -> list[Any]:
    """Pass rate and score, agent latency, tokens: one chart each, one point per eval run;
    ``current`` (an eval run id) is drawn larger, its label always shown."""
    labels = [r["label"] or (r["git_commit"] or "")[:7] or f"#{r['run_number']}" for r in trend]
    tips = [
        f"run {r['run_number']} · {r['eval_run_id'][:8]} · {settings_text(r)}"
        + (f" · {r['label']}" if r["label"] else "")
        + f" · {r['passed']}/{r['cases']} passed"
        for r in trend
    ]
    at = next((i for i, r in enumerate(trend) if r["eval_run_id"] == current), None)
    charts = [
        chart("pass rate and score of each eval run", labels,
              [Series("pass rate", [r["pass_rate"] for r in trend], 0),
               Series("score", [r["aggregate_score"] for r in trend], 1, dashed=True)],
              fmt=lambda v: pct(v, 0), y_max=1.0, tooltips=tips, current=at),
        chart("mean latency of the runs scored", labels,
              [Series("latency", [r["latency_ms"] for r in trend], 2)],
              fmt=ms, tooltips=tips, current=at),
        chart("mean tokens of the runs scored", labels,
              [Series("tokens per run", [r["tokens"] for r in trend], 3)],
              fmt=tokens, tooltips=tips, current=at),
    ]  # fmt: skip
    return [Markup(c) for c in charts]


def suite_page(request: Request) -> Response:
    with access.reading(config_of(request)) as store:
        suite = _suite_by_id(store, request.path_params["suite_id"])
        cases = queries.suite_cases(store, suite["suite_id"])
        trend = queries.suite_trend(store, suite["suite_id"])
    for case in cases:
        case["tags"] = orjson.loads(case["tags"]) if case["tags"] else []
    return render(
        request,
        "suite.html",
        active="suites",
        suite=suite,
        cases=cases,
        trend=trend,
        charts=trend_charts(trend) if trend else [],
        checks_yaml=edits.checks_text(suite["checks"]),
        notice=request.query_params.get("notice"),
    )


def grid_page(request: Request) -> Response:
    with access.reading(config_of(request)) as store:
        suite = _suite_by_id(store, request.path_params["suite_id"])
        data = queries.grid(store, suite["suite_id"])
    return render(request, "grid.html", active="suites", suite=suite, **data)


def _case_context(store, case_id: str) -> dict[str, Any]:
    row = queries.case_row(store, case_id)
    case = suite_store.get_cases(store, [row["case_id"]])[0]
    history = queries.case_history(store, case.id)
    return {
        "case": case,
        "row": row,
        "history": history,
        "latest": queries.latest_result(store, case.id, history),
        "values": {
            "query": case.query,
            "expected_output": case.expected_output or "",
            "expected_tool_calls": orjson.dumps(
                [t.to_dict() for t in case.expected_tool_calls], option=orjson.OPT_INDENT_2
            ).decode()
            if case.expected_tool_calls
            else "",
            "checks": edits.checks_text(case.checks),
            "parameters": edits.parameters_text(case.parameters),
            "context": format_documents(case.context),
            "tags": ", ".join(case.tags),
        },
        "suite_checks": edits.checks_text(
            orjson.loads(suite_store.suite_checks_text(store, case.suite_id) or "[]")
        ),
    }  # fmt: skip


def case_page(request: Request) -> Response:
    with access.reading(config_of(request)) as store:
        data = _case_context(store, request.path_params["case_id"])
    return render(
        request,
        "case.html",
        active="suites",
        error=None,
        notice=request.query_params.get("notice"),
        **data,
    )


async def case_edit(request: Request) -> Response:
    refuse_if_read_only(request)
    config = config_of(request)
    case_id = request.path_params["case_id"]
    form = await request.form()

    def work():
        with access.store_for_request(config) as store:
            try:
                case_edits = edits.CaseEdits(
                    query=text(form, "query").replace("\r\n", "\n"),
                    expected_output=text(form, "expected_output").replace("\r\n", "\n") or None,
                    expected_tool_calls=edits.parse_expected_tools(
                        text(form, "expected_tool_calls")
                    ),
                    checks=edits.parse_checks(text(form, "checks")),
                    parameters=edits.parse_parameters(text(form, "parameters")),
                    context=edits.parse_context(text(form, "context")),
                    tags=edits.parse_tags(text(form, "tags")),
                )
                return edits.update_case(store, case_id, case_edits), None
            except TraceReplayError as exc:
                data = _case_context(store, case_id)
                data["values"] = {k: text(form, k) for k in data["values"]}
                return data, str(exc)

    outcome, error = await run_in_threadpool(work)
    if error is not None:
        return render(
            request, "case.html", status_code=400, active="suites", error=error, notice=None,
            **outcome,
        )  # fmt: skip
    return redirect(f"/cases/{outcome.id}", notice=f"case #{outcome.seq} saved")


async def case_delete(request: Request) -> Response:
    refuse_if_read_only(request)
    config = config_of(request)
    case_id = request.path_params["case_id"]

    def work():
        with access.store_for_request(config) as store:
            return edits.delete_case(store, case_id)

    case, _suite_name = await run_in_threadpool(work)
    return redirect(f"/suites/{case.suite_id}", notice=f"case #{case.seq} removed")


routes = [
    Route("/suites", suites_page, methods=["GET"]),
    Route("/suites/{suite_id}", suite_page, methods=["GET"]),
    Route("/suites/{suite_id}/grid", grid_page, methods=["GET"]),
    Route("/cases/{case_id}", case_page, methods=["GET"]),
    Route("/cases/{case_id}", case_edit, methods=["POST"]),
    Route("/cases/{case_id}/delete", case_delete, methods=["POST"]),
]
