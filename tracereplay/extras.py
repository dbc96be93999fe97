"""Optional parts behind extras: a one-line error naming the extra when its packages are missing.

``require_extra("ui", ["starlette", "uvicorn", "jinja2", "multipart"], "tracereplay ui")`` is
called where a command starts, before anything imports those packages, so a user without the
extra reads what to install instead of an ``ImportError`` from deep inside.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence

from tracereplay.errors import TraceReplayError


class MissingExtraError(TraceReplayError):
    """A command needs packages of an extra that is not installed."""


def require_extra(extra: str, modules: Sequence[str], what: str) -> None:
    """Raise ``MissingExtraError`` unless every one of ``modules`` can be imported."""
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        raise MissingExtraError(
            f"{what} needs the '{extra}' extra: pip install 'tracereplay[{extra}]'"
            f" (missing: {', '.join(missing)})"
        )
