"""A run's page (trajectory, span waterfall, links) and promoting it from the page."""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from tracereplay.errors import BadParameterError, TraceReplayError
from tracereplay.models.failure import failure_text
from tracereplay.promote import format_documents
from tracereplay.promote.promote import labelled_kind
from tracereplay.store import suites as suite_store
from tracereplay.store.labels import default_author
from tracereplay.ui import access, edits
from tracereplay.ui.pages import render
from tracereplay.ui.queries import run as queries
from tracereplay.ui.routes.common import config_of, redirect, refuse_if_read_only, text


def _label_values(form: Any = None) -> dict[str, str]:
    """The label form: empty, who labels filled in (``$TRACEREPLAY_USER`` of the server, else
    its OS user), or as it was posted."""
    if form is None:
        return {"verdict": "", "note": "", "expected": "", "author": default_author()}
    return {k: text(form, k) for k in ("verdict", "note", "expected", "author")}


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
        notice=request.query_params.get("notice"),
        label_error=None,
        label_values=_label_values(),
    )


async def label(request: Request) -> Response:
    """The run page's label form: a verdict (bad or good), a note, the corrected answer."""
    refuse_if_read_only(request)
    config = config_of(request)
    run_id = request.path_params["run_id"]
    form = await request.form()
    values = _label_values(form)

    def work():
        with access.store_for_request(config) as store:
            try:
                if values["verdict"] not in ("bad", "good"):
                    raise BadParameterError("choose bad or good")
                made = store.add_label(
                    run_id,
                    values["verdict"],
                    note=values["note"].replace("\r\n", "\n"),
                    expected=values["expected"].replace("\r\n", "\n"),
                    author=values["author"],
                )
                return made, None
            except TraceReplayError as exc:
                with store.transaction(read_only=True):
                    return queries.run_view(store, run_id), str(exc)

    outcome, error = await run_in_threadpool(work)
    if error is not None:
        return render(
            request,
            "run.html",
            status_code=400,
            active="runs",
            view=outcome,
            run=outcome.run,
            failure_text=failure_text(outcome.run),
            notice=None,
            label_error=error,
            label_values=values,
        )
    note = f"labelled {outcome.verdict} by {outcome.author}"
    return redirect(f"/runs/{outcome.run_id}", notice=note)


def _promote_form_values(store, run_id: str) -> dict[str, Any]:
    """The form as it first shows: what ``tracereplay promote`` would make of the run."""
    run = store.get_run(run_id)
    latest = store.latest_labels([run.run_id]).get(run.run_id)
    kind = labelled_kind(run, latest)
    reference = kind == "reference_run"
    expected = latest.expected if latest is not None else None
    if expected is None and reference:
        expected = run.result.response
    suites = suite_store.list_suites(store)
    return {
        "run": run,
        "inferred_kind": kind,
        "label": latest,
        "suites": [(s.name, n, edits.checks_text(s.checks)) for s, n in suites],
        "values": {
            "suite": run.agent_name if any(s.name == run.agent_name for s, _ in suites) else "",
            "suite_new": "" if any(s.name == run.agent_name for s, _ in suites) else run.agent_name,
            "kind": "",
            "expected_output": expected or "",
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
    Route("/runs/{run_id}/label", label, methods=["POST"]),
]
