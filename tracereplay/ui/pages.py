"""Rendering: the Jinja2 environment (templates shipped in the package, autoescaped) and the
filters the templates use."""

from __future__ import annotations

import functools
from datetime import UTC, datetime
from typing import Any

import orjson
from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import HTMLResponse

from tracereplay import __version__
from tracereplay.charts import sparkline
from tracereplay.evaluate.diff import settings_text

#: every page: scripts and styles from this server only (the waterfall's inline widths are style
#: attributes), no framing by other sites, no referrer sent to links out
HEADERS = {
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self' "
    "'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}
NAV = (
    ("runs", "/runs", "Runs"),
    ("dashboard", "/dashboard", "Production"),
    ("monitors", "/monitors", "Monitors"),
    ("suites", "/suites", "Suites"),
    ("evals", "/evals", "Eval runs"),
    ("sql", "/sql", "SQL"),
)


def ms(value: float | None) -> str:
    if value is None:
        return "–"
    if value >= 10_000:
        return f"{value / 1000:.1f} s"
    if value >= 1000:
        return f"{value / 1000:.2f} s"
    return f"{value:.0f} ms"


def pct(value: float | None, digits: int = 1) -> str:
    return "–" if value is None else f"{100 * value:.{digits}f}%"


def pts(value: float | None) -> str:
    """A change of a rate, signed, in percentage points: ``+66.7 pts``, ``-33.3 pts``."""
    return "–" if value is None else f"{100 * value:+.1f} pts"


def tokens(value: float | int | None) -> str:
    """A token count (or mean), whole, with thousands separators: the one token format."""
    return "–" if value is None else f"{round(value):,}"


def num(value: float | int | None) -> str:
    if value is None:
        return "–"
    if isinstance(value, float) and not value.is_integer():
        return f"{value:,.2f}"
    return f"{int(value):,}"


def when(value: datetime | None, seconds: bool = True) -> str:
    if value is None:
        return "–"
    if value.tzinfo is not None:
        value = value.astimezone(UTC)
    return value.strftime("%Y-%m-%d %H:%M:%S" if seconds else "%Y-%m-%d %H:%M")


def clip(value: Any, limit: int = 120) -> str:
    text = "" if value is None else str(value)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def pretty(value: Any) -> str:
    """JSON (or JSON text) indented; other text as is."""
    if isinstance(value, str):
        try:
            value = orjson.loads(value)
        except orjson.JSONDecodeError:
            return value
    return orjson.dumps(value, option=orjson.OPT_INDENT_2, default=str).decode()


def compact(value: Any) -> str:
    if isinstance(value, str):
        return value
    return orjson.dumps(value, default=str).decode()


def score(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def message_text(message: dict[str, Any]) -> list[dict[str, Any]]:
    """A GenAI message's parts as ``{"kind", "text"}`` items for the trajectory."""
    out: list[dict[str, Any]] = []
    for part in message.get("parts") or []:
        if not isinstance(part, dict):
            out.append({"kind": "text", "text": str(part)})
            continue
        kind = part.get("type", "text")
        if kind == "text":
            out.append({"kind": "text", "text": str(part.get("content", ""))})
        elif kind == "tool_call":
            args = part.get("arguments")
            out.append(
                {"kind": "tool_call", "text": f"{part.get('name', '?')}({compact(args or {})})"}
            )
        elif kind == "tool_call_response":
            out.append({"kind": "tool_result", "text": compact(part.get("response", ""))})
        else:
            out.append({"kind": kind, "text": compact(part)})
    return out


@functools.lru_cache(maxsize=1)
def environment() -> Environment:
    env = Environment(
        loader=PackageLoader("tracereplay.ui", "templates"),
        autoescape=select_autoescape(["html"]),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        ms=ms, pct=pct, pts=pts, tokens=tokens, settings=settings_text, num=num, when=when, clip=clip, pretty=pretty, compact=compact,
        score=score, spark=lambda values: Markup(sparkline(values)),
    )  # fmt: skip
    env.globals.update(nav=NAV, version=__version__, message_text=message_text)
    return env


def render(
    request: Request, template: str, *, status_code: int = 200, **context: Any
) -> HTMLResponse:
    """A page: the template with the request, the app's config and ``context``."""
    config = request.app.state.config
    html = (
        environment()
        .get_template(template)
        .render(request=request, config=config, read_only=config.read_only, **context)
    )
    return HTMLResponse(html, status_code=status_code, headers=HEADERS)
