"""State and helpers shared by every CLI command: the chosen store, the consoles, one-line errors."""

from __future__ import annotations

import functools
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from tracereplay.errors import BadParameterError, NotFoundError, hide_passwords
from tracereplay.store.paths import resolve_db_path, spool_dir

if TYPE_CHECKING:
    from rich.console import Console

    console: Console
    err_console: Console


@functools.cache
def _console(stderr: bool) -> Console:
    from rich.console import Console

    return Console(stderr=stderr, highlight=False)


def __getattr__(name: str) -> Console:
    """``console`` (stdout) and ``err_console`` (stderr), made on first use: a command that
    prints no table (``suite import``) does not import rich (a fortieth of a second)."""
    if name not in ("console", "err_console"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = globals()[name] = _console(name == "err_console")
    return value


#: the commands that may create the store when it does not exist yet (they write into it);
#: every other command needs an existing store (a typo in --db is then an error, not a new file)
CREATING_COMMANDS = frozenset({"ingest", "serve", "suite create", "suite import", "monitor create"})

#: what every command's help ends with unless it says more about its exit codes
EXIT_CODES = "Exit codes: 0 done, 2 bad input (unknown id, malformed option, missing store)."


class _State:
    db: str | None = None
    #: the command being run, e.g. "runs" or "suite import" (set by the app before it runs)
    command: str = ""


state = _State()


def store_exists(path: Path) -> bool:
    """A store is there when its DuckDB file is, or its spool (an agent recorded runs into it
    with the embedded default, and no command has read them yet)."""
    return path.is_file() or spool_dir(path).is_dir()


def db_path(create: bool | None = None) -> Path:
    """The DuckDB file for this invocation (``--db`` > ``$TRACEREPLAY_DB`` > ./tracereplay.duckdb).

    A command that only reads (everything but ``CREATING_COMMANDS``, unless ``create`` says
    otherwise) gets a one-line error when there is no store there, and nothing is created.
    """
    path = resolve_db_path(state.db)
    if create is None:
        create = state.command in CREATING_COMMANDS
    if not create and not store_exists(path):
        hint = (
            "check --db / $TRACEREPLAY_DB"
            if state.db is not None
            else "run `tracereplay ingest`, capture runs with the SDK, or give --db"
        )
        raise NotFoundError(f"no tracereplay store at {path} ({hint})")
    _install_hooks()
    return path


def _install_hooks() -> None:
    """The command's ``open_store`` drains the spool (``ingest/on_open.py``) and that drain
    starts the monitors' background round (``monitor/embedded.py``); installed here, when a
    command is about to open the store, so `--help` stays light."""
    from tracereplay.ingest import on_open
    from tracereplay.monitor.embedded import install

    on_open.install()
    install()


def print_error(message: str) -> None:
    """Print ``error: <message>`` on one line to stderr, never interpreting it as markup."""
    _console(True).print(
        f"error: {' '.join(hide_passwords(str(message)).split())}",
        style="red",
        markup=False,
        soft_wrap=True,
    )


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_since(value: str) -> datetime:
    """``--since`` values: a duration back from now (``90m``, ``12h``, ``7d``, ``2w``) or an
    ISO date/time (``2026-11-01``, ``2026-11-01T08:00``; UTC unless it names a zone)."""
    text = value.strip()
    if len(text) >= 2 and text[-1].lower() in _UNITS and text[:-1].replace(".", "", 1).isdigit():
        return datetime.now(UTC) - timedelta(seconds=float(text[:-1]) * _UNITS[text[-1].lower()])
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise BadParameterError(
            f"--since '{value}' is neither a duration (30m, 12h, 7d) nor an ISO date"
        ) from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def short_ids(store, table: str, column: str, ids: list[str], minimum: int = 8) -> dict[str, str]:
    """The shortest prefix (at least ``minimum`` characters) of each of ``ids`` that no other
    row of ``table`` shares, as git abbreviates commits: what a user can type back."""
    out = {i: i[:minimum] for i in ids}
    pending = set(ids)
    length = minimum
    while pending:
        shared = store.shared_prefixes(table, column, sorted({i[:length] for i in pending}))
        for i in list(pending):
            if i[:length] not in shared or length >= len(i):
                out[i] = i[:length]
                pending.discard(i)
        length += 4
    return out
