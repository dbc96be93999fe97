"""The Starlette application of ``tracereplay ui``."""

from __future__ import annotations

import logging
from pathlib import Path

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from tracereplay.charts import stylesheet
from tracereplay.errors import AmbiguousIdError, NotFoundError, StoreBusyError, TraceReplayError
from tracereplay.report.replay_modes import stylesheet as replay_modes_stylesheet
from tracereplay.ui.config import UiConfig
from tracereplay.ui.pages import render
from tracereplay.ui.routes import dashboard, evals, monitors, run, runs, sessions, sql, suites
from tracereplay.ui.routes.common import ReadOnlyUiError
from tracereplay.ui.security import Guard

STATIC = Path(__file__).parent / "static"
log = logging.getLogger("tracereplay.ui")


def _status(exc: TraceReplayError) -> int:
    if isinstance(exc, NotFoundError):
        return 404
    if isinstance(exc, ReadOnlyUiError):
        return 403
    if isinstance(exc, StoreBusyError):
        return 503
    if isinstance(exc, AmbiguousIdError):
        return 400
    return 400


async def _trace_replay_error(request: Request, exc: Exception) -> Response:
    status = _status(exc)  # type: ignore[arg-type]
    return render(request, "error.html", status_code=status, status=status, message=str(exc))


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    message = "no such page" if exc.status_code == 404 else str(exc.detail)
    return render(
        request, "error.html", status_code=exc.status_code, status=exc.status_code,
        message=message,
    )  # fmt: skip


async def _internal_error(request: Request, exc: Exception) -> Response:
    log.error("internal error on %s: %s: %s", request.url.path, type(exc).__name__, exc)
    return render(
        request, "error.html", status_code=500, status=500,
        message=f"internal error: {type(exc).__name__}: {exc}",
    )  # fmt: skip


def _home(request: Request) -> Response:
    return RedirectResponse("/runs", status_code=307)


def _chart_css(request: Request) -> Response:
    """The charts' stylesheet (``tracereplay.charts``, shared with the report)."""
    return Response(stylesheet(), media_type="text/css")


def _replay_modes_css(request: Request) -> Response:
    """How a fork and tools run for real are drawn (shared with the report)."""
    return Response(replay_modes_stylesheet(), media_type="text/css")


def create_app(config: UiConfig) -> Starlette:
    """The application for one store; ``config`` says which and how it may be used."""
    app = Starlette(
        routes=[
            Route("/", _home, methods=["GET"]),
            *runs.routes,
            *run.routes,
            *sessions.routes,
            *suites.routes,
            *evals.routes,
            *dashboard.routes,
            *monitors.routes,
            *sql.routes,
            Route("/static/charts.css", _chart_css, methods=["GET"]),
            Route("/static/replay-modes.css", _replay_modes_css, methods=["GET"]),
            Mount("/static", app=StaticFiles(directory=STATIC), name="static"),
        ],
        middleware=[Middleware(Guard, config=config)],
        exception_handlers={
            TraceReplayError: _trace_replay_error,
            HTTPException: _http_error,
            Exception: _internal_error,
        },
    )
    app.state.config = config
    return app
