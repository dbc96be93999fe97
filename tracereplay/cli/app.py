"""The ``tracereplay`` command: a typer app whose commands live one group per module."""

from __future__ import annotations

import importlib
import os
import sys
from typing import Annotated, Optional

import typer
from typer.core import TyperGroup

from tracereplay import __version__
from tracereplay.cli.common import print_error, state
from tracereplay.errors import TraceReplayError


class _Group(TyperGroup):
    """Turns a ``TraceReplayError`` from any command into ``error: <message>`` and its exit code,
    whether the app runs from the console script or from a test's CliRunner."""

    def invoke(self, ctx):  # type: ignore[override]
        try:
            return super().invoke(ctx)
        except TraceReplayError as exc:
            print_error(str(exc))
            raise typer.Exit(exc.exit_code) from None


app = typer.Typer(
    cls=_Group,
    name="tracereplay",
    help=(
        "Turn what your production LLM agents did into regression tests.\n\n"
        "Spans from your agents land in one DuckDB file (./tracereplay.duckdb, or --db / "
        "$TRACEREPLAY_DB). Typical flow: ingest (or capture live) -> runs / show -> promote -> "
        "eval -> sql."
    ),
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
    context_settings={"help_option_names": ["-h", "--help"]},
)

# Each module defines ``register(app)``; add new command groups here.
COMMAND_MODULES = [
    "tracereplay.cli.ingest_cmd",
    "tracereplay.cli.runs_cmd",
    "tracereplay.cli.promote_cmd",
    "tracereplay.cli.suite_cmd",
    "tracereplay.cli.serve_cmd",
    "tracereplay.cli.sql_cmd",
    "tracereplay.cli.eval_cmd",
    "tracereplay.cli.diff_cmd",
    "tracereplay.cli.export_cmd",
    "tracereplay.cli.report_cmd",
]


def _version(value: bool) -> None:
    if value:
        typer.echo(f"tracereplay {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    db: Annotated[
        Optional[str],
        typer.Option(
            "--db",
            envvar="TRACEREPLAY_DB",
            help="DuckDB file to use (default ./tracereplay.duckdb).",
            show_envvar=True,
        ),
    ] = None,
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    state.db = db


for _name in COMMAND_MODULES:
    importlib.import_module(_name).register(app)


def main() -> None:
    """Console-script entry point: one-line errors, exit 2 for bad input, never a traceback."""
    try:
        app()
    except TraceReplayError as exc:
        print_error(str(exc))
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        print_error("interrupted")
        sys.exit(130)
    except Exception as exc:  # a bug: still one line, the traceback only on request
        if os.environ.get("TRACEREPLAY_DEBUG"):
            raise
        print_error(
            f"internal error: {type(exc).__name__}: {exc} (set TRACEREPLAY_DEBUG=1 for details)"
        )
        sys.exit(1)
