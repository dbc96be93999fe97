"""``tracereplay eval``: score a suite's cases (recorded mode) or replay them (``--agent``)."""

from __future__ import annotations

from contextlib import nullcontext
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import orjson
import typer

from tracereplay.cli import options
from tracereplay.cli.common import console, db_path, err_console
from tracereplay.cli.eval_view import print_problems, print_summary, results_table
from tracereplay.cli.options import HistoryOption, LlmMatchOption, LlmOption, ToolMatchOption
from tracereplay.errors import BadParameterError
from tracereplay.evaluate.formats.json import write_json
from tracereplay.gcpause import gc_paused
from tracereplay.scoring.limits import MAX_CONCURRENCY, MAX_REPEAT, MAX_RETRIES

if TYPE_CHECKING:
    from tracereplay.evaluate.evaluation import EvalOutcome

_REPLAY = "Replay (--agent)"
_RUNNING = "Running"
_CASES = "Cases and checks"
_OUTPUT = "Output"
#: suites up to this size list every case; bigger ones list the cases that did not pass
TABLE_ALL_UP_TO = 200


class ResultFormat(str, Enum):
    agenticassure_json = "agenticassure-json"
    testing_api_json = "testing-api-json"


def eval_command(
    suite: Annotated[str, typer.Argument(help="Suite name (or a unique prefix of its id).")],
    agent: Annotated[
        Optional[str],
        options.agent(
            "Call this agent (module:callable, from the current directory or "
            "PYTHONPATH) for every case, its @tracereplay.tool calls answered from the "
            "recording (else: recorded mode).",
            panel=_REPLAY,
        ),
    ] = None,
    agent_cmd: Annotated[Optional[str], options.agent_cmd(panel=_REPLAY)] = None,
    agent_call: Annotated[Optional[str], options.agent_call(panel=_REPLAY)] = None,
    tool_match: Annotated[Optional[ToolMatchOption], options.tool_match(panel=_REPLAY)] = None,
    live_tools: Annotated[bool, options.live_tools(panel=_REPLAY)] = False,
    llm: Annotated[Optional[LlmOption], options.llm(panel=_REPLAY)] = None,
    llm_match: Annotated[Optional[LlmMatchOption], options.llm_match(panel=_REPLAY)] = None,
    llm_until: Annotated[Optional[int], options.llm_until(panel=_REPLAY)] = None,
    history: Annotated[Optional[HistoryOption], options.history(panel=_REPLAY)] = None,
    in_process: Annotated[bool, options.in_process(panel=_REPLAY)] = False,
    concurrency: Annotated[
        Optional[int],
        typer.Option(
            min=1,
            max=MAX_CONCURRENCY,
            help="Cases run at the same time (in replay, shared by the agent processes). Default 4;"
            " one per core when nothing is live (--llm recorded, no fork or live tools).",
            show_default=False,
            rich_help_panel=_RUNNING,
        ),
    ] = None,
    timeout: Annotated[
        Optional[float],
        options.timeout(
            "Seconds one attempt of a case may take before it is an ERROR (0: no limit). "
            "Default: the suite's eval_defaults, else 60.",
            panel=_RUNNING,
            show_default=False,
        ),
    ] = None,
    retries: Annotated[
        Optional[int],
        typer.Option(
            min=0,
            max=MAX_RETRIES,
            help="Run a case again this many times when it is an ERROR. Default: the suite's "
            "eval_defaults, else 0.",
            show_default=False,
            rich_help_panel=_RUNNING,
        ),
    ] = None,
    fail_fast: Annotated[
        Optional[bool],
        typer.Option(
            "--fail-fast/--no-fail-fast",
            help="Stop starting cases after the first that fails. Default: the suite's "
            "eval_defaults, else no.",
            show_default=False,
            rich_help_panel=_RUNNING,
        ),
    ] = None,
    repeat: Annotated[
        int,
        typer.Option(
            min=1,
            max=MAX_REPEAT,
            help="Run every case N times; it passes only if every time passes.",
            rich_help_panel=_RUNNING,
        ),
    ] = 1,
    fail_under: Annotated[
        Optional[float],
        options.fail_under(panel=_OUTPUT, help="Gate: exit 1 only if the pass rate % < RATE."),
    ] = None,
    max_regressions: Annotated[
        Optional[int],
        options.max_regressions(
            panel=_OUTPUT,
            help="Gate: exit 1 only if > N cases regressed.",
        ),
    ] = None,
    tag: Annotated[
        Optional[list[str]],
        typer.Option(
            "--tag",
            help="Only cases with this tag (repeatable: any of them).",
            rich_help_panel=_CASES,
        ),
    ] = None,
    case: Annotated[
        Optional[list[str]],
        typer.Option(
            "--case",
            help="Only this case (id or unique prefix; repeatable).",
            rich_help_panel=_CASES,
        ),
    ] = None,
    checks: Annotated[
        Optional[list[str]],
        typer.Option(
            "--checks",
            help="Import this module (or .py file) first: its @check functions become check "
            "kinds (repeatable).",
            rich_help_panel=_CASES,
        ),
    ] = None,
    label: Annotated[
        Optional[str],
        typer.Option(help="A note stored with the eval run (a branch).", rich_help_panel=_OUTPUT),
    ] = None,
    eval_run: Annotated[
        Optional[str],
        typer.Option(
            "--eval-run",
            help="Add the results to the eval run with this id (created when new): several "
            "jobs (CI shards) make one eval run. Letters, digits, '-', '_', '.'.",
            show_default=False,
            rich_help_panel=_CASES,
        ),
    ] = None,
    shard: Annotated[
        Optional[str],
        typer.Option(
            "--shard",
            help="I/N: run only this job's share of the cases (every N-th case in seq order, "
            "from the I-th); give every job the same --eval-run (or --label) so the N shares "
            "make one eval run.",
            show_default=False,
            rich_help_panel=_CASES,
        ),
    ] = None,
    json_file: Annotated[
        Optional[Path],
        options.json_file("Also write the results as JSON to this file.", panel=_OUTPUT),
    ] = None,
    junit_file: Annotated[
        Optional[Path],
        typer.Option(
            "--junit", help="Also write JUnit XML (for CI) to this file.", rich_help_panel=_OUTPUT
        ),
    ] = None,
    result_format: Annotated[
        Optional[ResultFormat],
        typer.Option(
            "--format",
            help="Write the results in another tool's shape: agenticassure-json (its RunResult) "
            "or testing-api-json (a list of EvaluationResults); to stdout instead of the table, "
            "or to --output.",
            show_default=False,
            rich_help_panel=_OUTPUT,
        ),
    ] = None,
    output: Annotated[
        Optional[Path],
        typer.Option(
            "--output",
            "-o",
            help="With --format: write there; the table shows.",
            show_default=False,
            rich_help_panel=_OUTPUT,
        ),
    ] = None,
) -> None:
    """Evaluate a suite: score every case and store the results (eval_runs, case_results).

    Exit code 0 when every case passed (or the gates passed), 1 otherwise, 2 for bad usage.

    [bold]Examples[/bold]

      tracereplay eval weather           # recorded mode: score what the runs did
      tracereplay eval weather --agent weather_agent:answer --concurrency 8
      tracereplay eval weather --agent my_agent:run --junit report.xml
      tracereplay eval weather --agent my_agent:run --llm recorded   # offline
      tracereplay eval weather --shard 2/4 --eval-run "ci-$RUN_ID"   # 1 job of 4
    """
    # the rules and defaults eval shares with replay and the pytest plugin (no store loaded)
    from tracereplay.evaluate.settings import (
        check_gates,
        check_options,
        default_concurrency,
        eval_settings,
        runner_options,
    )

    fail_under, max_regressions = check_gates(fail_under, max_regressions)
    check_options(
        agent=agent,
        agent_cmd=agent_cmd,
        agent_call=agent_call,
        tool_match=tool_match,
        live_tools=live_tools,
        in_process=in_process,
        llm=llm,
        llm_match=llm_match,
        llm_until=llm_until,
    )
    if agent and not in_process:
        from tracereplay.replay.workers.preload import start_agent_server

        start_agent_server(agent)  # the agent processes' imports, meanwhile, in the fork server
    # the evaluator (rapidfuzz, jsonschema, the store) loads only when an eval runs
    from tracereplay.cli.eval_progress import BarProgress
    from tracereplay.cli.lifetime import keep_until_exit
    from tracereplay.evaluate.evaluation import run_evaluation
    from tracereplay.evaluate.sharing import parse_shard, shared_eval_run_id

    if output is not None and result_format is None:
        raise BadParameterError("--output applies to --format")
    shard_of = parse_shard(shard) if shard is not None else None
    eval_run_id = shared_eval_run_id(eval_run, shard_of, label, suite)
    if concurrency is None:
        concurrency = default_concurrency(
            agent=agent, llm=llm, llm_until=llm_until, live_tools=live_tools
        )
    runner, suite_defaults = runner_options(
        concurrency=concurrency,
        timeout=timeout,
        retries=retries,
        fail_fast=fail_fast,
        repeat=repeat,
    )
    settings = eval_settings(
        suite,
        db_path(),
        agent=agent,
        agent_cmd=agent_cmd,
        agent_call=agent_call,
        tool_match=tool_match,
        live_tools=live_tools,
        llm=llm,
        llm_match=llm_match,
        llm_until=llm_until,
        history=history,
        in_process=in_process,
        runner=runner,
        suite_defaults=suite_defaults,
        tags=tag,
        case_ids=case,
        check_modules=checks,
        label=label,
        eval_run=eval_run_id,
        shard=shard_of,
        fail_under=fail_under,
        max_regressions=max_regressions,
    )
    # see gcpause: the pause run_evaluation takes lasts until the results are kept (frozen,
    # never scanned again); were it to end when the run returns, the first allocation after
    # would collect every object the run made, all still alive. Not while the
    # agent's own code runs in this process (--in-process): its cycles are its own
    with nullcontext() if in_process else gc_paused():
        outcome = run_evaluation(settings, BarProgress(f"eval {suite}"))
        keep_until_exit(outcome)  # its cases and results: freed by the process's end
        if (settings.gated or repeat > 1) and not outcome.runner.interrupted:
            from tracereplay.evaluate.gates import gate_report

            outcome.gates = gate_report(settings.db, outcome.record, fail_under, max_regressions)
        # the report (table, JSON, JUnit) builds many small objects next to every case's
        # result: the cyclic GC would rescan them all again and again (most of writing a big
        # JUnit file, benchmarks/RESULTS.md); no agent code runs from here on
        with gc_paused():
            _report(outcome, result_format, output, json_file, junit_file, repeat)


def _report(
    outcome: EvalOutcome,
    result_format: ResultFormat | None,
    output: Path | None,
    json_file: Path | None,
    junit_file: Path | None,
    repeat: int,
) -> None:
    """Print and write what the eval gives (exits with its exit code)."""
    if result_format is not None and write_format(outcome, result_format.value, output):
        _write_files(outcome, json_file, junit_file)  # stdout holds the document: no table
        raise typer.Exit(130 if outcome.runner.interrupted else outcome.exit_code)
    total = len(outcome.reports)
    # a big suite: list the cases that need attention (the others are not even built)
    shown = list(outcome.reports) if total <= TABLE_ALL_UP_TO else outcome.not_passed()
    if shown:
        console.print(results_table(shown, repeat > 1))
    if len(shown) < total:
        console.print(
            f"{total - len(shown)} passed cases not listed (see --json)",
            style="dim",
            markup=False,
        )
    print_problems(outcome.needing_attention())
    print_summary(outcome)
    _write_files(outcome, json_file, junit_file)
    if outcome.runner.interrupted:
        err_console.print("interrupted: the results so far are saved", style="yellow", markup=False)
        raise typer.Exit(130)
    raise typer.Exit(outcome.exit_code)


def _write_files(outcome: EvalOutcome, json_file: Path | None, junit_file: Path | None) -> None:
    """``--json`` and ``--junit``, when asked."""
    from tracereplay.evaluate.formats.junit import write_junit

    if json_file is not None:
        write_json(json_file, outcome)
    if junit_file is not None:
        write_junit(junit_file, outcome.record, outcome.reports)


def write_format(outcome: EvalOutcome, fmt: str, output: Path | None) -> bool:
    """``--format``: the results in another tool's shape, to ``output`` or else to stdout
    (True: stdout, so the table is left out)."""
    from tracereplay.evaluate.formats.foreign import format_results

    data = orjson.dumps(format_results(outcome, fmt), option=orjson.OPT_INDENT_2) + b"\n"
    if output is None or str(output) == "-":
        typer.get_binary_stream("stdout").write(data)
        return True
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_bytes(data)
    return False


def register(app: typer.Typer) -> None:
    app.command("eval")(eval_command)
