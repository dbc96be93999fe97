"""State and helpers shared by every CLI command: the chosen store, the consoles, one-line errors."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

from rich.console import Console

from tracereplay.errors import BadParameterError
from tracereplay.store.paths import resolve_db_path

console = Console(highlight=False)
err_console = Console(stderr=True, highlight=False)


class _State:
    db: str | None = None


state = _State()


def db_path() -> Path:
    """The DuckDB file for this invocation (``--db`` > ``$TRACEREPLAY_DB`` > ./tracereplay.duckdb)."""
    return resolve_db_path(state.db)


def print_error(message: str) -> None:
    """Print ``error: <message>`` on one line to stderr, never interpreting it as markup."""
    err_console.print(
        f"error: {' '.join(str(message).split())}", style="red", markup=False, soft_wrap=True
    )


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_since(value: str) -> datetime:
    """``--since`` values: a duration back from now (``90m``, ``12h``, ``7d``, ``2w``) or an
    ISO date/time (``2026-11-01``, ``2026-11-01T08:00``; UTC unless it names a zone)."""
    text = value.strip()
    if len(text) >= 2 and text[-1].lower() in _UNITS and text[:-1].replace(".", "", 1).isdigit():
        return datetime.now(timezone.utc) - timedelta(
            seconds=float(text[:-1]) * _UNITS[text[-1].lower()]
        )
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise BadParameterError(
            f"--since '{value}' is neither a duration (30m, 12h, 7d) nor an ISO date"
        ) from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)
