"""``tracereplay promote``: turn a run (or every run matching a predicate) into a test case."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from tracereplay.cli.common import db_path
from tracereplay.errors import BadParameterError


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
            help="Expected output (default: a reference run's own response; none otherwise).",
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

    [bold]Examples[/bold]

      tracereplay promote 3f2a9c1e
      tracereplay promote 3f2a9c1e --suite support-regressions --tag refunds
      tracereplay promote --where "status = 'failed'" --suite support-regressions --limit 50
    """
    if (run_id is None) == (where is None):
        raise BadParameterError("give a RUN_ID or --where PREDICATE (one of the two)")
    from tracereplay.ingest import open_store
    from tracereplay.promote import PromoteOptions, parse_kind, promote_run, promote_where

    options = PromoteOptions(
        kind=parse_kind(kind) if kind is not None else None,
        expected_output=expected_output,
        expected_tools=expected_tools,
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
        return
    if limit is not None:
        raise BadParameterError("--limit only applies with --where")
    assert run_id is not None
    with open_store(db_path()) as store:
        result = promote_run(store, run_id, suite_name=suite, options=options)
    case = result.case
    if result.created:
        note = " (new suite, default checks)" if result.suite_created else ""
        typer.echo(
            f"promoted run {case.source_run_id} into suite '{result.suite.name}'{note} "
            f"as case #{case.seq} ({case.source_kind})",
            err=True,
        )
    else:
        typer.echo(
            f"run {case.source_run_id} is already case #{case.seq} of suite "
            f"'{result.suite.name}'; nothing changed",
            err=True,
        )
    typer.echo(case.id)


def register(app: typer.Typer) -> None:
    app.command("promote")(promote)
