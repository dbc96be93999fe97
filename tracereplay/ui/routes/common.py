"""What every page module shares: the config, the store for a request, redirects, form text."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import RedirectResponse

from tracereplay.errors import TraceReplayError
from tracereplay.ui.config import UiConfig


class ReadOnlyUiError(TraceReplayError):
    """An edit asked of a server started with --read-only."""

    exit_code = 2


def config_of(request: Request) -> UiConfig:
    return request.app.state.config


def refuse_if_read_only(request: Request) -> None:
    if config_of(request).read_only:
        raise ReadOnlyUiError("this server was started with --read-only: nothing can be changed")


def redirect(path: str, **params: Any) -> RedirectResponse:
    query = urlencode({k: v for k, v in params.items() if v is not None})
    return RedirectResponse(path + ("?" + query if query else ""), status_code=303)


def text(form: Any, name: str) -> str:
    value = form.get(name)
    return value if isinstance(value, str) else ""
