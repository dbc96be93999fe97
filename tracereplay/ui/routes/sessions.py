"""The conversation page: every turn of a session, its tools and its answer."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from tracereplay.ui import access
from tracereplay.ui.pages import render
from tracereplay.ui.queries import sessions as queries
from tracereplay.ui.routes.common import config_of


def session_page(request: Request) -> Response:
    config = config_of(request)
    kind = "replay" if request.query_params.get("kind") == "replay" else "live"
    with access.reading(config) as store:
        view = queries.session_view(store, request.path_params["session_id"], kind)
    return render(request, "session.html", active="runs", view=view)


routes = [Route("/sessions/{session_id:path}", session_page, methods=["GET"])]
