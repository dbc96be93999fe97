"""The runs page: filters, search, facets, sorting, paging; bulk promotion of what it shows."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urlsplit

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from tracereplay.ui import access, edits
from tracereplay.ui.pages import render
from tracereplay.ui.queries import evals as eval_queries
from tracereplay.ui.queries import runs as queries
from tracereplay.ui.routes.common import config_of, refuse_if_read_only, text

#: the form fields of a bulk promotion that carry the runs page's filter
FILTER_FIELDS = (*queries.FACETS, "q", "since", "until")
SORT_LABELS = {
    "started": "Started",
    "status": "Status",
    "agent": "Agent",
    "duration": "Duration",
    "tokens": "Tokens",
    "tools": "Tools",
    "llm": "LLM calls",
}


def runs_list(request: Request) -> Response:
    config = config_of(request)
    flt = queries.RunFilter.from_query(request.query_params, config.page_size, config.max_page_size)
    with access.reading(config) as store:
        page = queries.runs_page(store, flt)
        suites = eval_queries.suite_names(store)

    def url(f: queries.RunFilter = flt, **changes) -> str:
        items = f.query_items(**changes)
        return "/runs" + ("?" + urlencode(items) if items else "")

    last_page = max(1, -(-page.counts.total // flt.size))
    return render(
        request,
        "runs.html",
        active="runs",
        flt=flt,
        page=page,
        url=url,
        last_page=last_page,
        facet_names=queries.FACETS,
        sort_labels=SORT_LABELS,
        suites=suites,
        notice=request.query_params.get("notice"),
        filter_items=flt.query_items(page=1),
    )


async def bulk_promote(request: Request) -> Response:
    refuse_if_read_only(request)
    config = config_of(request)
    form = await request.form()
    selected = [v for v in form.getlist("run") if isinstance(v, str)]
    scope = text(form, "scope") or "selected"
    suite = text(form, "suite_new").strip() or text(form, "suite").strip()
    kind = text(form, "kind") or None
    tags = edits.parse_tags(text(form, "tags"))
    flt = queries.RunFilter.from_query(
        {k: [v for v in form.getlist(k) if isinstance(v, str)] for k in FILTER_FIELDS},
        config.page_size,
        config.max_page_size,
    )

    def work():
        with access.store_for_request(config) as store:
            ids = (
                selected
                if scope == "selected"
                else queries.matching_ids(store, flt, config.bulk_limit)
            )
            return edits.bulk_promote(store, ids, suite_name=suite, kind=kind, tags=tags)

    result = await run_in_threadpool(work)
    note = (
        f"{len(result.created)} new cases in suite '{suite}'"
        + (" (new suite)" if result.suite_created else "")
        + f": {result.matched} runs, {len(result.existing)} already in the suite, "
        f"{len(result.skipped)} skipped (no query)"
    )
    back = urlsplit(text(form, "back") or "/runs")
    path = back.path if back.path == "/runs" and not back.netloc else "/runs"
    items = [(k, v) for k, v in parse_qsl(back.query) if k != "notice"] + [("notice", note)]
    return Response(status_code=303, headers={"location": f"{path}?{urlencode(items)}"})


routes = [
    Route("/runs", runs_list, methods=["GET"]),
    Route("/runs/promote", bulk_promote, methods=["POST"]),
]
