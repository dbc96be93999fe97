"""``tracereplay label``: a person's verdict on a run (good or bad), with a note and the answer
it should have given."""

from __future__ import annotations

import shlex
from typing import Annotated, Optional

import typer
from rich.table import Table
from rich.text import Text

from tracereplay.cli.common import console, db_path
from tracereplay.errors import BadParameterError


def label(
    run_id: Annotated[
        str,
        typer.Argument(
            help="The run: its id, a unique prefix of it, or a trace id holding one run.",
            metavar="RUN_ID",
            show_default=False,
        ),
    ],
    bad: Annotated[bool, typer.Option("--bad", help="The run went wrong.")] = False,
    good: Annotated[bool, typer.Option("--good", help="The run did what it should.")] = False,
    note: Annotated[
        Optional[str],
        typer.Option(
            metavar="TEXT",
            help="What was wrong (or right); promoting the run makes it the case's description.",
            show_default=False,
        ),
    ] = None,
    expected: Annotated[
        Optional[str],
        typer.Option(
            "--expected",
            metavar="TEXT",
            help="The answer the run should have given; promoting the run makes it the "
            "case's expected output.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Label a run good or bad, with a note and the corrected answer; without --bad or
    --good, list the run's labels.

    A run may be labelled many times (by several people, or again later); its latest label is
    the run's label: what `runs --label`, `promote --where "label = 'bad'"` and the UI go by.
    Who labelled is $TRACEREPLAY_USER, else the OS user.

    [bold]Examples[/bold]

      tracereplay label 3f2a9c1e --bad --note "old price" --expected "12 EUR"
      tracereplay label 3f2a9c1e --good
      tracereplay label 3f2a9c1e      # its labels, newest first
      tracereplay runs --label bad
      tracereplay promote --where "label = 'bad'" --suite regressions

    Exit codes: 0 done, 2 bad input (unknown or ambiguous run id, --bad with --good, an
    option without --bad or --good, missing store).
    """
    if bad and good:
        raise BadParameterError("give --bad or --good, not both")
    from tracereplay.store.open import open_store

    if not (bad or good):
        if note is not None or expected is not None:
            raise BadParameterError("--note and --expected go with --bad or --good")
        with open_store(db_path()) as store:
            ident = store.resolve_run_id(run_id)
            labels = store.list_labels(ident)
        _print_labels(ident, labels)
        return
    with open_store(db_path()) as store:
        made = store.add_label(run_id, "bad" if bad else "good", note=note, expected=expected)
    short = made.run_id[:8]
    console.print(f"labelled run {made.run_id} {made.verdict} (by {made.author})", markup=False)
    if made.verdict == "bad":
        console.print(
            f"make it a test case: tracereplay promote {short} --suite NAME"
            + ("" if made.expected is not None else " (give --expected TEXT to correct it)"),
            style="dim",
            markup=False,
            soft_wrap=True,
        )


def _print_labels(run_id: str, labels: list) -> None:  # noqa: ANN001 (Label: loaded lazily)
    if not labels:
        console.print(
            f"run {run_id} has no labels (label it: tracereplay label {shlex.quote(run_id[:8])} "
            "--bad|--good)",
            style="dim",
            markup=False,
        )
        return
    table = Table(header_style="bold", box=None, pad_edge=False)
    for header in ("when (UTC)", "verdict", "by", "note", "expected"):
        table.add_column(header, overflow="fold")
    for i, lab in enumerate(labels):
        table.add_row(
            lab.created_at.strftime("%Y-%m-%d %H:%M:%S"),
            Text(
                lab.verdict + (" (latest)" if i == 0 else ""),
                style="red" if lab.verdict == "bad" else "green",
            ),  # fmt: skip
            Text(lab.author or ""),
            Text(lab.note or ""),
            Text(lab.expected or ""),
        )
    console.print(table)


def register(app: typer.Typer) -> None:
    app.command("label")(label)
