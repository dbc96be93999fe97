"""The ``tracereplay`` command: a typer app whose commands live one group per module."""

from __future__ import annotations

import functools
import importlib
import os
import sys
from collections.abc import Iterable, Sequence
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
    keep_objects_until_exit,
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


def _new_app() -> typer.Typer:
    return typer.Typer(
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


# Each module defines ``register(app)``; add new command groups here, with the names of the
# commands (and command groups) it registers: ``main`` imports only the module of the command
# it runs (``tests/cli/test_command_modules.py`` checks the names against what each module registers).
COMMAND_MODULES: dict[str, tuple[str, ...]] = {
    "tracereplay.cli.ingest_cmd": ("ingest",),
    "tracereplay.cli.runs_cmd": ("runs", "show"),
    "tracereplay.cli.promote_cmd": ("promote",),
    "tracereplay.cli.label_cmd": ("label",),
    "tracereplay.cli.suite_cmd": ("suite", "case"),
    "tracereplay.cli.serve_cmd": ("serve",),
    "tracereplay.cli.sql_cmd": ("sql",),
    "tracereplay.cli.eval_cmd": ("eval",),
    "tracereplay.cli.replay_cmd": ("replay",),
    "tracereplay.cli.llm_server_cmd": ("llm-server",),
    "tracereplay.cli.diff_cmd": ("diff",),
    "tracereplay.cli.export_cmd": ("export",),
    "tracereplay.cli.report_cmd": ("report",),
    "tracereplay.cli.ui_cmd": ("ui",),
    "tracereplay.cli.check_cmd": ("check",),
    "tracereplay.cli.prune_cmd": ("prune",),
    "tracereplay.cli.monitor_cmd": ("monitor",),
    "tracereplay.cli.store_cmd": ("store",),
}
_MODULE_OF = {name: module for module, names in COMMAND_MODULES.items() for name in names}
#: the root's options that take a value (``--db FILE``): skipped to find the command's name
_VALUED_OPTIONS = ("--db", "--store")
_VALUED_OPTIONS_EQ = tuple(f"{option}=" for option in _VALUED_OPTIONS)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"tracereplay {__version__}")
        raise typer.Exit()


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


def build_app(modules: Iterable[str] = COMMAND_MODULES) -> typer.Typer:
    """The app with the commands of ``modules`` (default: every command)."""
    built = _new_app()
    built.callback()(_root)
    for name in modules:
        importlib.import_module(name).register(built)
    _add_exit_codes(built)
    return built


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


def app_for(args: Sequence[str]) -> typer.Typer:
    """The app that runs the command line ``args``: only the module of the command it names
    (importing and building every command would cost every command the import of all), every
    command for the help, a name it does not know (its suggestions) or shell completion."""
    name = _command_name(args)
    module = _MODULE_OF.get(name) if name is not None else None
    completing = any(key.endswith("_COMPLETE") for key in os.environ)
    if module is None or completing:
        return _full_app()
    return build_app([module])


def _command_name(args: Sequence[str]) -> str | None:
    """The first argument that is not one of the root's options (or an option's value); None
    when an option the root does not take with a value comes first (``--help``, ``--version``)."""
    rest = iter(args)
    for arg in rest:
        if arg in _VALUED_OPTIONS:
            next(rest, None)
        elif not arg.startswith(_VALUED_OPTIONS_EQ):
            return None if arg.startswith("-") else arg
    return None


@functools.cache
def _full_app() -> typer.Typer:
    return build_app()


def __getattr__(name: str) -> typer.Typer:
    """``app``: every command (tests and Python callers), built on first use."""
    if name == "app":
        return _full_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main() -> None:
    """Console-script entry point: one-line errors, exit 2 for bad input, never a traceback;
    every process the command started has exited when it returns (``lifetime``)."""
    terminate_as_interrupt()
    the_program = is_the_program(main)
    keep_objects_until_exit(the_program)  # exit_now ends it: what it built is not torn down
    workers_skip_main(main)
    start_agent_server_early(sys.argv[1:])
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


def start_agent_server_early(args: Sequence[str]) -> None:
    """``eval --agent`` with agent processes: start their fork server before the command's own
    parsing and imports, while the second core is idle; the fork server's
    imports, which the first agent process waits for, take place meanwhile. The command starts
    it again later (a no-op); a command line that turns out to be wrong ends it with the
    command, as every process it started (``end_processes``)."""
    if _command_name(args) != "eval" or "--in-process" in args:
        return
    agent = _option_value(args, "--agent")
    if agent is not None:
        from tracereplay.replay.workers.preload import start_agent_server

        start_agent_server(agent)


def _option_value(args: Sequence[str], option: str) -> str | None:
    """The value given to ``option`` on a command line not parsed yet ("" when it has none)."""
    for i, arg in enumerate(args):
        if arg == option:
            return args[i + 1] if i + 1 < len(args) else ""
        if arg.startswith(option + "="):
            return arg[len(option) + 1 :]
    return None


def _run() -> None:
    try:
        app_for(sys.argv[1:])()
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
