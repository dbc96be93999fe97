"""``tracereplay promote``: turn a run (or every run matching a predicate) into a test case."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from tracereplay.cli.common import db_path
from tracereplay.errors import BadParameterError

if TYPE_CHECKING:
    from tracereplay.models import EvalCase, EvalSuite
    from tracereplay.promote import PromoteResult


def promote(
    run_id: Annotated[
        Optional[str],
        typer.Argument(
            help="Run to promote: its id, a unique prefix of it, or a trace id holding one run.",
            metavar="RUN_ID",
            show_default=False,
        ),
    ] = None,
    where: Annotated[
        Optional[str],
        typer.Option(
            "--where",
            metavar="PREDICATE",
            help="Promote every recorded run for which this SQL predicate over the runs table "
            "holds, e.g. \"status = 'failed' AND agent_name = 'support'\" (needs --suite).",
            show_default=False,
        ),
    ] = None,
    session: Annotated[
        Optional[str],
        typer.Option(
            "--session",
            metavar="ID",
            help="Promote a whole conversation (its turns, as `runs --session ID` lists them) "
            "as one multi-turn case, replayed turn by turn.",
            show_default=False,
        ),
    ] = None,
    suite: Annotated[
        Optional[str],
        typer.Option(
            "--suite",
            "-s",
            help="Suite to add the case to; created when missing (default: the run's agent name).",
            show_default=False,
        ),
    ] = None,
    kind: Annotated[
        Optional[str],
        typer.Option(
            help="Why the run is promoted: failed_run, negative_score or reference_run "
            "(default: failed_run for a failed run, reference_run otherwise).",
            show_default=False,
        ),
    ] = None,
    expected_output: Annotated[
        Optional[str],
        typer.Option(
            "--expected",
            "--expected-output",
            metavar="TEXT",
            help="Expected output: containsExpected checks the response contains it (default: "
            "a reference run's own response; none otherwise).",
            show_default=False,
        ),
    ] = None,
    expected_tool: Annotated[
        Optional[list[str]],
        typer.Option(
            "--expected-tool",
            metavar="NAME[:JSON]",
            help="An expected tool call, by name and optionally a subset of its arguments "
            '(get_weather:\'{"city": "Paris"}\'); repeatable. Instead of copying the run\'s.',
            show_default=False,
        ),
    ] = None,
    expected_tools: Annotated[
        Optional[bool],
        typer.Option(
            "--expected-tools/--no-expected-tools",
            help="Copy the run's tool calls (names and arguments) as expected tool calls "
            "(default: yes for a reference run, no otherwise).",
            show_default=False,
        ),
    ] = None,
    tag: Annotated[
        Optional[list[str]],
        typer.Option("--tag", "-t", help="Tag the case (repeatable).", show_default=False),
    ] = None,
    limit: Annotated[
        Optional[int],
        typer.Option(
            min=1,
            max=10**9,
            help="With --where: at most this many matching runs, oldest first.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Promote a run into an eval suite as a test case; prints the case id.

    Promoting a run already in the suite prints the existing case's id and changes nothing.
    A case with no expected output or tool calls (a failed run's) is judged by fewer checks:
    promote says which, and how to give it what to expect.

    [bold]Examples[/bold]

      tracereplay promote 3f2a9c1e
      tracereplay promote 3f2a9c1e --suite support-regressions --tag refunds
      tracereplay promote 3f2a9c1e --expected "21 °C" --expected-tool get_weather
      tracereplay promote --where "status = 'failed'" --suite regressions
      tracereplay promote --session chat-42 --suite conversations
    """
    if sum(x is not None for x in (run_id, where, session)) != 1:
        raise BadParameterError("give a RUN_ID, --where PREDICATE or --session ID (one of them)")
    if expected_tool and expected_tools is not None:
        raise BadParameterError(
            "give --expected-tool or --expected-tools/--no-expected-tools, not both"
        )
    from tracereplay.promote import (
        PromoteOptions,
        parse_kind,
        promote_run,
        promote_session,
        promote_where,
    )
    from tracereplay.promote.inputs import parse_expected_tool
    from tracereplay.store.open import open_store

    options = PromoteOptions(
        kind=parse_kind(kind) if kind is not None else None,
        expected_output=expected_output,
        expected_tools=expected_tools,
        expected_tool_calls=(
            tuple(parse_expected_tool(t) for t in expected_tool) if expected_tool else None
        ),
        tags=tuple(tag or ()),
    )
    if where is not None:
        if suite is None:
            raise BadParameterError(
                "--where needs --suite NAME (the runs may be of several agents)"
            )
        with open_store(db_path()) as store:
            bulk = promote_where(store, where, suite_name=suite, limit=limit, options=options)
        if bulk.matched == 0:
            typer.echo(f"0 new cases: no recorded run matches --where {where}")
            return
        note = " (new suite)" if bulk.suite_created else ""
        typer.echo(
            f"{len(bulk.created)} new cases in suite '{suite}'{note}: {bulk.matched} runs matched, "
            f"{len(bulk.existing)} already in the suite, {len(bulk.skipped)} skipped"
        )
        for run, reason in bulk.skipped:
            typer.echo(f"skipped run {run}: {reason}", err=True)
        if bulk.suite is not None:
            _bulk_note(bulk.created, bulk.suite)
        return
    if limit is not None:
        raise BadParameterError("--limit only applies with --where")
    if session is not None:
        with open_store(db_path()) as store:
            result = promote_session(store, session, suite_name=suite, options=options)
        case = result.case
        _tell(result, f"session {session}", f"{len(case.turns)} turns ({case.source_kind})")
        typer.echo(case.id)
        return
    assert run_id is not None
    with open_store(db_path()) as store:
        result = promote_run(store, run_id, suite_name=suite, options=options)
    case = result.case
    _tell(result, f"run {case.source_run_id}", f"({case.source_kind})")
    if result.created:
        _case_note(case, result.suite, run_id)
    typer.echo(case.id)


def _tell(result: PromoteResult, what: str, detail: str) -> None:
    """On stderr: what was promoted into which suite as which case, or that it was there."""
    case, suite = result.case, result.suite.name
    if result.created:
        note = " (new suite, default checks)" if result.suite_created else ""
        said = f"promoted {what} into suite '{suite}'{note} as case #{case.seq}"
        typer.echo(f"{said}{':' if detail[0] != '(' else ''} {detail}", err=True)
    else:
        typer.echo(
            f"{what} is already case #{case.seq} of suite '{suite}'; nothing changed", err=True
        )


def _case_note(case: EvalCase, suite: EvalSuite, run_ident: str) -> None:
    """When the case expects nothing: which checks will judge it, and how to give it an
    expected output (promotion keeps a case: remove it, then promote again)."""
    from tracereplay.promote.judging import judging, judging_note, missing_text

    j = judging(case, suite.checks)
    note = judging_note(j)
    if note is None:
        return
    typer.echo(f"note: case #{case.seq} has {missing_text(j)}: {note}.", err=True)
    typer.echo(
        "give it what to expect: tracereplay case rm "
        f"{case.id[:8]} && tracereplay promote {run_ident} --suite {shlex.quote(suite.name)} "
        "--expected TEXT --expected-tool NAME[:JSON]",
        err=True,
    )


def _bulk_note(cases: Sequence[EvalCase], suite: EvalSuite) -> None:
    """``--where``: how many new cases expect nothing, and what that leaves to judge them."""
    from tracereplay.promote.judging import judging, judging_note, missing_text

    found = [(c, judging(c, suite.checks)) for c in cases]
    idle = [(c, j) for c, j in found if judging_note(j) is not None]
    if not idle:
        return
    _, j = idle[0]
    note = judging_note(j, "them")
    typer.echo(
        f"note: {len(idle)} of the new cases have {missing_text(j)}: {note}. Promote them one "
        "by one with --expected TEXT / --expected-tool NAME[:JSON], or edit the suite file "
        "(tracereplay suite export, then tracereplay suite import).",
        err=True,
    )


def register(app: typer.Typer) -> None:
    app.command("promote")(promote)
