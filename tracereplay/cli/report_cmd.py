"""``tracereplay report``: one eval run as a self-contained HTML page."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Optional

import typer

from tracereplay.cli.common import console, db_path
from tracereplay.errors import BadParameterError


def report(
    eval_run: Annotated[
        Optional[str],
        typer.Argument(
            help="Eval run id or a unique prefix of one (default: the latest eval run).",
            show_default=False,
        ),
    ] = None,
    output: Annotated[
        Path, typer.Option("--output", "-o", help="HTML file to write.", dir_okay=False)
    ] = Path("report.html"),
    suite: Annotated[
        Optional[str],
        typer.Option("--suite", "-s", help="Without EVAL_RUN: the latest eval run of this suite."),
    ] = None,
) -> None:
    """Write an eval run's report: summary, pass-rate trend, diff against the previous run, and
    each case's checks, response and tool trajectory (recorded vs replayed, drift highlighted).

    The page is one file with no external resources: open it anywhere, attach it to a CI run.

    [bold]Examples[/bold]

      tracereplay report -o report.html
      tracereplay report 5e1c --output nightly.html
    """
    if not output.parent.exists():
        raise BadParameterError(f"-o {output}: directory {output.parent} does not exist")
    from tracereplay.ingest import open_store
    from tracereplay.report import load_report, pick_eval_run, render_report

    with open_store(db_path()) as store:
        data = load_report(store, pick_eval_run(store, eval_run, suite))
    page = render_report(data)
    tmp = output.with_name(f".{output.name}.{os.getpid()}.partial")
    try:
        tmp.write_text(page, encoding="utf-8")
        os.replace(tmp, output)
    finally:
        if tmp.exists():
            tmp.unlink()
    s = data.stats
    rate = "–" if s.pass_rate is None else f"{100 * s.pass_rate:.1f}%"
    console.print(
        f"wrote {output}: suite {data.run.suite_name}, eval run {data.run.eval_run_id[:8]}, "
        f"{s.passed}/{s.cases} passed ({rate})",
        markup=False,
        soft_wrap=True,
    )


def register(app: typer.Typer) -> None:
    app.command(name="report")(report)
