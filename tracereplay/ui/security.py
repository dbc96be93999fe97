"""Who may use the server: the token, the Host header and the origin of form posts.

- With a token (required for a host other than loopback) every request must carry it: an
  ``Authorization: Bearer TOKEN`` header, or the cookie that opening any page with
  ``?token=TOKEN`` sets (the URL is then cleaned of it by a redirect).
- Bound to loopback, the ``Host`` header must name loopback too, so a web page cannot reach the
  server through a name it controls (DNS rebinding).
- A POST (promote, case edits, SQL) whose ``Origin`` (or ``Referer``) is another site is refused,
  so another page open in the same browser cannot submit forms here.
"""

from __future__ import annotations

import hmac
from urllib.parse import urlencode, urlsplit

from starlette.datastructures import URL, Headers
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from tracereplay.ui.config import UiConfig, is_loopback

COOKIE = "tracereplay_ui_token"
_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def _page(status: int, title: str, message: str) -> Response:
    from html import escape

    return HTMLResponse(
        f"<!doctype html><html><head><meta charset='utf-8'><title>{escape(title)}</title>"
        f"</head><body style='font-family:sans-serif;padding:32px'><h1>{escape(title)}</h1>"
        f"<p>{escape(message)}</p></body></html>",
        status_code=status,
    )


class Guard:
    """ASGI middleware applying the three rules above to every HTTP request."""

    def __init__(self, app: ASGIApp, config: UiConfig) -> None:
        self.app = app
        self.config = config

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        response = self.check(Request(scope))
        if response is not None:
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def check(self, request: Request) -> Response | None:
        headers = request.headers
        host = _hostname(headers.get("host", ""))
        if is_loopback(self.config.host) and not is_loopback(host):
            return _page(
                421,
                "Wrong host",
                f"this server answers on loopback only (127.0.0.1 or localhost), not '{host}'",
            )
        if self.config.token:
            given = request.query_params.get("token")
            if given is not None:
                if not _same(given, self.config.token):
                    return _page(401, "Wrong token", "the ?token= given is not this server's")
                return _login(request.url, given)
            if not (_same(_bearer(headers), self.config.token) or
                    _same(request.cookies.get(COOKIE), self.config.token)):  # fmt: skip
                return _page(
                    401,
                    "Token required",
                    "open the address tracereplay ui printed (it ends with ?token=...), or send "
                    "Authorization: Bearer TOKEN",
                )
        if request.method not in _SAFE_METHODS and not _same_origin(request):
            return _page(403, "Refused", "a form posted from another site is refused")
        return None


def _hostname(value: str) -> str:
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def _bearer(headers: Headers) -> str | None:
    value = headers.get("authorization", "")
    scheme, _, token = value.partition(" ")
    return token.strip() if scheme.lower() == "bearer" else None


def _same(given: str | None, expected: str) -> bool:
    return given is not None and hmac.compare_digest(given.encode(), expected.encode())


def _login(url: URL, token: str) -> Response:
    """Set the token cookie and redirect to the same URL without ``token``."""
    params = [(k, v) for k, v in _pairs(url) if k != "token"]
    target = url.path + ("?" + urlencode(params) if params else "")
    response = RedirectResponse(target, status_code=303)
    response.set_cookie(COOKIE, token, httponly=True, samesite="strict", path="/")
    return response


def _pairs(url: URL) -> list[tuple[str, str]]:
    from urllib.parse import parse_qsl

    return parse_qsl(url.query, keep_blank_values=True)


def _same_origin(request: Request) -> bool:
    origin = request.headers.get("origin") or request.headers.get("referer")
    if not origin:
        return True  # not a browser form (curl, scripts): the token rule applies to them
    if origin == "null":
        return False
    parts = urlsplit(origin)
    return parts.netloc.lower() == request.headers.get("host", "").lower()
