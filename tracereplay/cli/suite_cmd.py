"""``tracereplay suite ...`` and ``tracereplay case ...``: eval suites, their cases, their files."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Annotated, Optional, TypeVar

import orjson
import typer

from tracereplay.cli import common
from tracereplay.cli.common import db_path
from tracereplay.errors import BadParameterError
from tracereplay.models import CheckSpec, EvalSuite

# The store (duckdb, pyarrow) and the promote package load inside each command, so that
# `tracereplay --help` and unrelated commands do not pay for them.

T = TypeVar("T")

suite_app = typer.Typer(
    name="suite",
    help="Eval suites: list, show, create, export to / import from YAML or JSON files.",
    no_args_is_help=True,
)
case_app = typer.Typer(
    name="case", help="Cases of a suite: add one by hand, show, remove.", no_args_is_help=True
)


class ListFormat(str, Enum):
    table = "table"
    json = "json"


class FileFormat(str, Enum):
    yaml = "yaml"
    json = "json"


ChecksModules = Annotated[
    Optional[list[str]],
    typer.Option(
        "--checks-module",
        help="Module (or .py file) registering custom checks, imported first so their kinds "
        "validate; as for `eval --checks` (repeatable).",
        show_default=False,
    ),
]


# ---------------------------------------------------------------------- suite
@suite_app.command("list")
def suite_list(
    fmt: Annotated[
        ListFormat, typer.Option("--format", "-f", help="table, or json for scripts.")
    ] = ListFormat.table,
) -> None:
    """List the suites: name, agent, number of cases, checks.

    [bold]Examples[/bold]

      tracereplay suite list
      tracereplay suite list --format json
    """
    from rich.table import Table
    from rich.text import Text

    from tracereplay.store import suites as suite_store
    from tracereplay.store.open import open_store

    with open_store(db_path()) as store:
        suites = suite_store.list_suites(store)
    if fmt is ListFormat.json:
        rows = [
            {
                "id": s.id,
                "name": s.name,
                "agent_name": s.agent_name,
                "cases": n,
                "checks": [c.label for c in s.checks],
                "required_parameters": s.required_parameters,
                "updated_at": s.updated_at.isoformat() if s.updated_at else None,
            }
            for s, n in suites
        ]
        sys.stdout.write(orjson.dumps(rows, option=orjson.OPT_INDENT_2).decode() + "\n")
        return
    if not suites:
        typer.echo("no suites yet: create one with `tracereplay promote RUN_ID`")
        return
    table = Table(box=None, pad_edge=False)
    table.add_column("name", no_wrap=True)  # names are what the user types next: never cut
    table.add_column("agent", overflow="ellipsis", max_width=24)
    table.add_column("cases", justify="right")
    table.add_column("checks", ratio=1, overflow="fold")
    table.add_column("updated", no_wrap=True)
    for suite, count in suites:
        table.add_row(
            Text(suite.name),
            Text(suite.agent_name or "-"),
            Text(str(count)),
            Text(", ".join(c.label for c in suite.checks) or "(none)"),
            Text(_when(suite)),
        )
    common.console.print(table)


@suite_app.command("show")
def suite_show(
    name: Annotated[str, typer.Argument(help="Suite name (or a unique prefix of its id).")],
) -> None:
    """Show a suite: its fields, its checks and a table of its cases.

    [bold]Examples[/bold]

      tracereplay suite show weather
    """
    from rich.table import Table
    from rich.text import Text

    from tracereplay.store import suites as suite_store
    from tracereplay.store.open import open_store

    with open_store(db_path()) as store:
        suite = suite_store.get_suite(store, name)
        cases = suite_store.list_cases(store, suite.id)
    head = Table(show_header=False, box=None, pad_edge=False)
    head.add_column(style="bold")
    head.add_column(overflow="fold")
    head.add_row("suite", Text(suite.name))
    head.add_row("id", Text(suite.id))
    head.add_row("agent", Text(suite.agent_name or "-"))
    if suite.description:
        head.add_row("description", Text(suite.description))
    head.add_row("checks", Text("\n".join(_check_line(c) for c in suite.checks) or "(none)"))
    head.add_row("parameters", Text(", ".join(suite.required_parameters) or "-"))
    head.add_row("updated", Text(_when(suite)))
    head.add_row("cases", Text(str(len(cases))))
    common.console.print(head)
    if not cases:
        return
    table = Table("#", "case", "kind", "query", "expected", "tools", "tags", pad_edge=False)
    for case in cases:
        table.add_row(
            Text(str(case.seq)),
            Text(case.id[:8]),
            Text(case.source_kind or "hand-written"),
            Text(_clip(case.query)),
            Text(_clip(case.expected_output) if case.expected_output is not None else "-"),
            Text(", ".join(t.name for t in case.expected_tool_calls) or "-"),
            Text(", ".join(case.tags) or "-"),
        )
    common.console.print(table)


@suite_app.command("create")
def suite_create(
    name: Annotated[str, typer.Argument(help="Name of the new suite (unique).")],
    agent: Annotated[str, typer.Option(help="The agent the suite tests.")] = "",
    description: Annotated[str, typer.Option(help="What the suite is for.")] = "",
    checks: Annotated[
        Optional[Path],
        typer.Option(
            help="YAML/JSON file with the checks: a list of {kind, name?, options...} "
            "(default: status, containsExpected, toolCallArgsMatch).",
            show_default=False,
        ),
    ] = None,
    require_param: Annotated[
        Optional[list[str]],
        typer.Option(
            "--require-param",
            help="A parameter every case must give a value for (repeatable).",
            show_default=False,
        ),
    ] = None,
    checks_module: ChecksModules = None,
) -> None:
    """Create an empty suite; prints its id.

    [bold]Examples[/bold]

      tracereplay suite create weather --agent weather_agent
      tracereplay suite create support --checks checks.yaml --require-param org
    """
    from tracereplay.checks import load_check_modules
    from tracereplay.promote.suite_file import detect_format, load_checks
    from tracereplay.promote.suites import create_suite
    from tracereplay.store.open import open_store

    if checks_module:
        load_check_modules(checks_module)
    specs: list[CheckSpec] | None = None
    if checks is not None:
        text = _read_text(checks)
        specs = _report(lambda: load_checks(text, detect_format(str(checks), text), str(checks)))
    with open_store(db_path()) as store:
        suite = create_suite(
            store,
            name,
            agent_name=agent,
            description=description,
            checks=specs,
            required_parameters=require_param or [],
        )
    typer.echo(suite.id)


@suite_app.command("export")
def suite_export(
    name: Annotated[str, typer.Argument(help="Suite name (or a unique prefix of its id).")],
    output: Annotated[
        Optional[Path],
        typer.Option("--output", "-o", help="File to write (default: stdout).", show_default=False),
    ] = None,
    fmt: Annotated[
        Optional[FileFormat],
        typer.Option(
            "--format",
            "-f",
            help="yaml or json (default: from the file's extension, else yaml).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Write a suite and all its cases (ids and seq included) to a YAML or JSON file.

    [bold]Examples[/bold]

      tracereplay suite export weather -o suites/weather.yaml
      tracereplay suite export weather --format json > weather.json
    """
    from tracereplay.promote.suite_file import dump_suite
    from tracereplay.store import suites as suite_store
    from tracereplay.store.open import open_store

    with open_store(db_path()) as store:
        suite = suite_store.get_suite(store, name)
        cases = suite_store.list_cases(store, suite.id)
    chosen = (
        fmt.value if fmt else ("json" if output and output.suffix.lower() == ".json" else "yaml")
    )
    text = dump_suite(suite, cases, chosen)  # type: ignore[arg-type]
    if output is None or str(output) == "-":
        sys.stdout.write(text)
        return
    _write_atomically(output, text)
    typer.echo(f"wrote suite '{suite.name}' ({len(cases)} cases) to {output}", err=True)


@suite_app.command("import")
def suite_import(
    file: Annotated[
        Path,
        typer.Argument(
            help="Suite file ('-' for stdin): tracereplay's YAML or JSON, an AgenticAssure "
            "suite, a testing-api TestSet, a JSON list of Tracon EvalCases or of ffai "
            "AgentResults (those become runs of kind imported). See docs/migrating.md."
        ),
    ],
    dry_run: Annotated[
        bool,
        typer.Option("--dry-run", help="Check the file and say what would change; change nothing."),
    ] = False,
    checks_module: ChecksModules = None,
    metric: Annotated[
        Optional[Path],
        typer.Option(
            "--metric",
            help="testing-api: the MetricConfiguration (JSON) that becomes the suite's check.",
            show_default=False,
        ),
    ] = None,
    name: Annotated[
        Optional[str],
        typer.Option(
            "--name",
            help="Another tool's file: the suite's name (default: the name in the file, else "
            "the file's name).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Create or update a suite from a file: afterwards the stored suite is what the file says.

    The file's suite is matched by id (else by name); cases the file no longer lists are removed.
    Every problem in the file is reported with its line before anything is changed.

    [bold]Examples[/bold]

      tracereplay suite import suites/weather.yaml --dry-run
      tracereplay suite import suites/weather.yaml
      tracereplay suite import agenticassure/weather.yaml --name weather
    """
    from tracereplay.checks import load_check_modules
    from tracereplay.gcpause import gc_paused

    if checks_module:
        load_check_modules(checks_module)
    text = _read_text(file)
    source = "<stdin>" if str(file) == "-" else str(file)
    metric_text = _read_text(metric) if metric is not None else None
    # see gcpause: the file's values and its cases are acyclic; they are freed when
    # _import_file returns, inside the pause, so no collection scans them all afterwards
    with gc_paused():
        line = _import_file(text, source, dry_run, name, metric_text, str(metric))
    typer.echo(line)


def _import_file(
    text: str,
    source: str,
    dry_run: bool,
    name: str | None,
    metric_text: str | None,
    metric_source: str,
) -> str:
    """``suite import``'s work: the line saying what it did (or would do)."""
    from tracereplay.cli.lifetime import keep_until_exit
    from tracereplay.promote.suite_import import import_runs, import_suite, read_import_file
    from tracereplay.store.open import open_store

    found = _report(
        lambda: read_import_file(
            text, source, name=name, metric_text=metric_text, metric_source=metric_source
        )
    )
    for note in found.notes:
        typer.echo(f"note: {note}", err=True)
    keep_until_exit(found)  # the file's values and cases: freed by the process's end
    with open_store(db_path()) as store:
        if found.parsed is None:
            return _report(lambda: import_runs(store, found.runs, dry_run=dry_run))
        parsed = found.parsed
        plan = _report(lambda: import_suite(store, parsed, source, dry_run=dry_run))
        keep_until_exit(plan)
    prefix = "would be: " if dry_run else ""
    origin = "" if found.format == "tracereplay" else f" (from {found.format})"
    return prefix + plan.summary() + origin


@suite_app.command("rm")
def suite_rm(
    name: Annotated[str, typer.Argument(help="Suite name (or a unique prefix of its id).")],
) -> None:
    """Remove a suite and all its cases.

    [bold]Examples[/bold]

      tracereplay suite rm weather
    """
    from tracereplay.promote.suites import remove_suite
    from tracereplay.store.open import open_store

    with open_store(db_path()) as store:
        suite, removed = remove_suite(store, name)
    typer.echo(f"removed suite '{suite.name}' and its {removed} cases")


# ---------------------------------------------------------------------- case
@case_app.command("add")
def case_add(
    suite: Annotated[
        str, typer.Option("--suite", "-s", help="Suite to add the case to (must exist).")
    ],
    query: Annotated[str, typer.Option("--query", "-q", help="The query sent to the agent.")],
    expected_output: Annotated[
        Optional[str],
        typer.Option(
            "--expected",
            "--expected-output",
            metavar="TEXT",
            help="Text the response should contain (containsExpected).",
            show_default=False,
        ),
    ] = None,
    context: Annotated[
        Optional[str],
        typer.Option(
            help="Context as text: plain (one document named 'context') or document blocks.",
            show_default=False,
        ),
    ] = None,
    context_file: Annotated[
        Optional[Path],
        typer.Option(help="Read the context from this file ('-' for stdin).", show_default=False),
    ] = None,
    param: Annotated[
        Optional[list[str]],
        typer.Option(
            "--param", "-p", help="A parameter value, name=value (repeatable).", show_default=False
        ),
    ] = None,
    expected_tool: Annotated[
        Optional[list[str]],
        typer.Option(
            "--expected-tool",
            metavar="NAME[:JSON]",
            help="An expected tool call: NAME, or NAME:JSON-OBJECT of arguments to match as a "
            'subset, e.g. \'get_weather:{"city": "Paris"}\' (repeatable, in order).',
            show_default=False,
        ),
    ] = None,
    tag: Annotated[
        Optional[list[str]],
        typer.Option("--tag", "-t", help="Tag the case (repeatable).", show_default=False),
    ] = None,
) -> None:
    """Add a hand-written case at the end of a suite; prints its id.

    [bold]Examples[/bold]

      tracereplay case add -s weather -q "Weather in Lima?" --expected "Lima"
      tracereplay case add -s weather -q "Weather in Oslo?" \\
          --expected-tool 'get_weather:{"city": "Oslo"}' --tag smoke
    """
    from tracereplay.promote.documents import DocumentFormatError, parse_documents
    from tracereplay.promote.inputs import parse_expected_tool, parse_params
    from tracereplay.promote.suites import add_case
    from tracereplay.store.open import open_store

    if context is not None and context_file is not None:
        raise BadParameterError("give --context or --context-file, not both")
    text = _read_text(context_file) if context_file is not None else context or ""
    try:
        documents = parse_documents(text)
    except DocumentFormatError as exc:
        raise BadParameterError(f"context: {exc}") from None
    tools = [parse_expected_tool(t) for t in expected_tool or []]
    params = parse_params(param or [])
    with open_store(db_path()) as store:
        case = add_case(
            store,
            suite,
            query=query,
            context=documents,
            expected_output=expected_output,
            expected_tool_calls=tools,
            parameters=params,
            tags=tag or [],
        )
    typer.echo(f"added case #{case.seq} to suite '{suite}'", err=True)
    typer.echo(case.id)


@case_app.command("show")
def case_show(
    case_id: Annotated[str, typer.Argument(help="Case id or a unique prefix of it.")],
    fmt: Annotated[
        FileFormat, typer.Option("--format", "-f", help="yaml or json.")
    ] = FileFormat.yaml,
) -> None:
    """Print one case in full, as it appears in a suite file.

    [bold]Examples[/bold]

      tracereplay case show 8d0b6a52
      tracereplay case show 8d0b6a52 --format json
    """
    from tracereplay.promote.suite_file import dump_case
    from tracereplay.store import suites as suite_store
    from tracereplay.store.open import open_store

    with open_store(db_path()) as store:
        case = suite_store.get_case(store, case_id)
        suite = suite_store.find_suite_by_id(store, case.suite_id)
    if fmt is FileFormat.yaml:
        sys.stdout.write(
            f"# case #{case.seq} of suite '{suite.name if suite else case.suite_id}'\n"
        )
    sys.stdout.write(dump_case(case, fmt.value))  # type: ignore[arg-type]


@case_app.command("rm")
def case_rm(
    case_ids: Annotated[list[str], typer.Argument(help="Case ids (or unique prefixes).")],
) -> None:
    """Remove cases (all ids are checked first); the other cases keep their seq.

    [bold]Examples[/bold]

      tracereplay case rm 8d0b6a52
      tracereplay case rm 8d0b6a52 1f3e9c07
    """
    from tracereplay.promote.suites import remove_cases
    from tracereplay.store.open import open_store

    with open_store(db_path()) as store:
        removed = remove_cases(store, case_ids)
    for case, suite_name in removed:
        typer.echo(f"removed case #{case.seq} {case.id} from suite '{suite_name}'")


# ---------------------------------------------------------------------- helpers
def _report(fn: Callable[[], T]) -> T:
    """Run ``fn``; for a file with problems print each on its own line before the error."""
    from tracereplay.promote.suite_file import SuiteFileError

    try:
        return fn()
    except SuiteFileError as exc:
        if len(exc.problems) > 1:
            for line in exc.lines():
                typer.echo(line, err=True)
        raise


def _read_text(path: Path) -> str:
    if str(path) == "-":
        return sys.stdin.read()
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BadParameterError(f"no such file: {path}") from None
    except IsADirectoryError:
        raise BadParameterError(f"{path} is a directory, not a file") from None
    except UnicodeDecodeError as exc:
        raise BadParameterError(
            f"{path} is not UTF-8 text ({exc.reason} at byte {exc.start})"
        ) from None
    except OSError as exc:
        raise BadParameterError(f"cannot read {path}: {exc.strerror}") from None


def _write_atomically(path: Path, text: str) -> None:
    path = path.expanduser()
    if path.is_dir():
        raise BadParameterError(f"{path} is a directory; give a file name")
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except FileNotFoundError:
        raise BadParameterError(f"no such directory: {path.parent}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _check_line(check: CheckSpec) -> str:
    options = check.options
    label = check.kind if check.name is None else f"{check.name} ({check.kind})"
    return label + (" " + orjson.dumps(options).decode() if options else "")


def _clip(text: str, limit: int = 60) -> str:
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= limit else one_line[: limit - 1] + "…"


def _when(suite: EvalSuite) -> str:
    return suite.updated_at.strftime("%Y-%m-%d %H:%M:%S") if suite.updated_at else "-"


def register(app: typer.Typer) -> None:
    app.add_typer(suite_app, name="suite")
    app.add_typer(case_app, name="case")
