"""The ``tracereplay`` command: a typer app whose commands live one group per module."""

from __future__ import annotations

import importlib
import os
import sys
from typing import Annotated, Optional

import typer
from typer import _click as click  # typer's own copy of click: its exceptions and classes
from typer.core import TyperGroup

from tracereplay import __version__
from tracereplay.cli import help_style
from tracereplay.cli.common import EXIT_CODES, print_error, state
from tracereplay.cli.lifetime import (
    end_processes,
    exit_now,
    is_the_program,
    terminate_as_interrupt,
    workers_skip_main,
)
from tracereplay.errors import TraceReplayError

help_style.install()


class _Group(TyperGroup):
    """Turns a ``TraceReplayError`` from any command, and every usage error, into one line
    ``error: <message>`` and its exit code, whether the app runs from the console script or from
    a test's CliRunner."""

    def resolve_command(self, ctx, args):  # type: ignore[override]
        name, cmd, rest = super().resolve_command(ctx, args)
        if name is not None:  # "runs", or "suite import" for a command of a group
            sub = rest[0] if isinstance(cmd, TyperGroup) and rest else ""
            state.command = f"{name} {sub}" if sub and not sub.startswith("-") else name
        return name, cmd, rest

    def invoke(self, ctx):  # type: ignore[override]
        try:
            return super().invoke(ctx)
        except TraceReplayError as exc:
            print_error(str(exc))
            raise typer.Exit(exc.exit_code) from None

    def main(self, *args, standalone_mode: bool = True, **kwargs):  # type: ignore[override]
        try:
            rv = super().main(*args, standalone_mode=False, **kwargs)
        except click.exceptions.NoArgsIsHelpError as exc:  # `tracereplay suite`: the help
            typer.echo(exc.format_message(), err=True)
            rv = exc.exit_code
        except click.exceptions.UsageError as exc:
            print_error(_usage_line(exc))
            rv = exc.exit_code
        except click.exceptions.ClickException as exc:
            print_error(exc.format_message())
            rv = exc.exit_code
        except typer.Abort:
            print_error("aborted")
            rv = 1
        if not standalone_mode:
            return rv
        sys.exit(rv if isinstance(rv, int) else 0)


def _usage_line(exc: click.exceptions.UsageError) -> str:
    """``No such command 'evl'. Did you mean 'eval'? (see tracereplay -h)``: the message (with
    typer's suggestion) and where the help is, on one line."""
    message = " ".join(exc.format_message().split())
    message = message.replace("Value error, ", "")
    if exc.ctx is not None:
        message += f" (see `{exc.ctx.command_path} --help`)"
    return message


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
    "tracereplay.cli.replay_cmd",
    "tracereplay.cli.diff_cmd",
    "tracereplay.cli.export_cmd",
    "tracereplay.cli.report_cmd",
    "tracereplay.cli.ui_cmd",
    "tracereplay.cli.check_cmd",
    "tracereplay.cli.prune_cmd",
    "tracereplay.cli.monitor_cmd",
    "tracereplay.cli.store_cmd",
]


def _version(value: bool) -> None:
    if value:
        typer.echo(f"tracereplay {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    ctx: typer.Context,
    db: Annotated[
        Optional[str],
        typer.Option(
            "--db",
            envvar="TRACEREPLAY_DB",
            help="DuckDB file to use (default ./tracereplay.duckdb).",
            show_envvar=True,
        ),
    ] = None,
    store: Annotated[
        Optional[str],
        typer.Option(
            "--store",
            envvar="TRACEREPLAY_STORE",
            help="The store as a URL: postgresql://user:password@host:5432/database (the"
            " 'postgres' extra), or a DuckDB file path. Beats --db when both are given.",
            show_envvar=True,
        ),
    ] = None,
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    state.db = _chosen_store(ctx, store, db)


def _chosen_store(ctx: typer.Context, store: str | None, db: str | None) -> str | None:
    """``--store`` > ``--db`` > ``$TRACEREPLAY_STORE`` > ``$TRACEREPLAY_DB``: an option given
    on the command line beats an environment variable."""
    commandline = click.core.ParameterSource.COMMANDLINE  # typer's copy of click, as above

    def given(name: str) -> bool:
        return ctx.get_parameter_source(name) == commandline

    if given("store"):
        return store
    if given("db"):
        return db
    return store or db


for _name in COMMAND_MODULES:
    importlib.import_module(_name).register(app)


def _add_exit_codes(typer_app: typer.Typer) -> None:
    """Every command's help ends with its exit codes: the command's own words when its
    docstring has them, else the common ones."""
    for info in typer_app.registered_commands:
        doc = (info.callback.__doc__ or "") if info.callback else ""
        if "Exit code" not in doc and info.epilog is None:
            info.epilog = EXIT_CODES
    for group in typer_app.registered_groups:
        if group.typer_instance is not None:
            _add_exit_codes(group.typer_instance)


_add_exit_codes(app)


def main() -> None:
    """Console-script entry point: one-line errors, exit 2 for bad input, never a traceback;
    every process the command started has exited when it returns (``lifetime``)."""
    terminate_as_interrupt()
    the_program = is_the_program(main)
    workers_skip_main(main)
    try:
        _run()
    except SystemExit as exc:
        code = exc.code
    else:
        code = None
    finally:
        end_processes()
    if the_program:
        exit_now(code)  # nothing left to tear down but the imported modules
    sys.exit(code)


def _run() -> None:
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
