"""A run's page (trajectory, span waterfall, links) and promoting it from the page."""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from tracereplay.errors import TraceReplayError
from tracereplay.models.failure import failure_text
from tracereplay.promote import format_documents
from tracereplay.store import suites as suite_store
from tracereplay.ui import access, edits
from tracereplay.ui.pages import render
from tracereplay.ui.queries import run as queries
from tracereplay.ui.routes.common import config_of, redirect, refuse_if_read_only, text


def run_page(request: Request) -> Response:
    config = config_of(request)
    with access.reading(config) as store:
        view = queries.run_view(store, request.path_params["run_id"])
    return render(
        request,
        "run.html",
        active="runs",
        view=view,
        run=view.run,
        failure_text=failure_text(view.run),
    )


def _promote_form_values(store, run_id: str) -> dict[str, Any]:
    """The form as it first shows: what ``tracereplay promote`` would make of the run."""
    run = store.get_run(run_id)
    reference = run.result.status == "success"
    suites = suite_store.list_suites(store)
    return {
        "run": run,
        "suites": [(s.name, n, edits.checks_text(s.checks)) for s, n in suites],
        "values": {
            "suite": run.agent_name if any(s.name == run.agent_name for s, _ in suites) else "",
            "suite_new": "" if any(s.name == run.agent_name for s, _ in suites) else run.agent_name,
            "kind": "",
            "expected_output": run.result.response if reference else "",
            "expected_tools": reference,
            "checks": "",
            "parameters": edits.parameters_text(run.parameters),
            "context": format_documents(run.context),
            "tags": "",
        },
    }


def promote_form(request: Request) -> Response:
    refuse_if_read_only(request)
    config = config_of(request)
    with access.reading(config) as store:
        data = _promote_form_values(store, request.path_params["run_id"])
    return render(request, "promote.html", active="runs", error=None, **data)


def _edits_from(form: Any) -> edits.CaseEdits:
    return edits.CaseEdits(
        expected_output=text(form, "expected_output").replace("\r\n", "\n") or None,
        checks=edits.parse_checks(text(form, "checks")),
        parameters=edits.parse_parameters(text(form, "parameters")),
        context=edits.parse_context(text(form, "context")),
        tags=edits.parse_tags(text(form, "tags")),
    )


async def promote(request: Request) -> Response:
    refuse_if_read_only(request)
    config = config_of(request)
    run_id = request.path_params["run_id"]
    form = await request.form()
    suite = text(form, "suite_new").strip() or text(form, "suite").strip()

    def work():
        with access.store_for_request(config) as store:
            try:
                case_edits = _edits_from(form)
                result = edits.promote_with_edits(
                    store,
                    run_id,
                    suite_name=suite,
                    kind=text(form, "kind") or None,
                    expected_tools=text(form, "expected_tools") == "on",
                    edits=case_edits,
                )
                return result, None
            except TraceReplayError as exc:
                data = _promote_form_values(store, run_id)
                data["values"] = {
                    **data["values"],
                    **{k: text(form, k) for k in data["values"] if k != "expected_tools"},
                    "expected_tools": text(form, "expected_tools") == "on",
                }
                return data, str(exc)

    outcome, error = await run_in_threadpool(work)
    if error is not None:
        return render(
            request, "promote.html", status_code=400, active="runs", error=error, **outcome
        )
    case = outcome.case
    if outcome.created:
        note = f"promoted into suite '{outcome.suite.name}' as case #{case.seq}" + (
            " (new suite, default checks)" if outcome.suite_created else ""
        )
    else:
        note = (
            f"this run is already case #{case.seq} of suite '{outcome.suite.name}'; nothing changed"
        )
    return redirect(f"/cases/{case.id}", notice=note)


routes = [
    Route("/runs/{run_id}", run_page, methods=["GET"]),
    Route("/runs/{run_id}/promote", promote_form, methods=["GET"]),
    Route("/runs/{run_id}/promote", promote, methods=["POST"]),
]
