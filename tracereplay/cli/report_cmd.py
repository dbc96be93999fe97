"""``tracereplay report``: one eval run as a self-contained HTML page (or a Markdown summary)."""

from __future__ import annotations

import os
import sys
from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer

from tracereplay.cli import options
from tracereplay.cli.common import console, db_path, short_ids
from tracereplay.errors import BadParameterError


class ReportFormat(str, Enum):
    html = "html"
    markdown = "markdown"


def report(
    eval_run: Annotated[
        Optional[str],
        typer.Argument(
            help="Eval run id or a unique prefix of one (default: the latest eval run).",
            show_default=False,
        ),
    ] = None,
    output: Annotated[
        Optional[Path],
        typer.Option(
            "--output",
            "-o",
            help="File to write (default: report.html; with --format markdown, stdout).",
            dir_okay=False,
            show_default=False,
        ),
    ] = None,
    suite: Annotated[
        Optional[str],
        typer.Option("--suite", "-s", help="Without EVAL_RUN: the latest eval run of this suite."),
    ] = None,
    fmt: Annotated[
        ReportFormat,
        typer.Option(
            "--format",
            "-f",
            help="html, or markdown: a short summary against the previous eval run for a "
            "pull request.",
        ),
    ] = ReportFormat.html,
    report_url: Annotated[
        Optional[str],
        typer.Option(
            "--report-url",
            metavar="URL",
            help="With --format markdown: where this eval run's HTML report is published; the "
            "summary links to it and to each case in it.",
            show_default=False,
        ),
    ] = None,
    fail_under: Annotated[
        Optional[float],
        options.fail_under(
            help="With --format markdown: the summary says whether the pass rate (percent, "
            "0-100) is below RATE, as eval --fail-under."
        ),
    ] = None,
    max_regressions: Annotated[
        Optional[int],
        options.max_regressions(
            help="With --format markdown: the summary counts the regressions against the "
            "previous eval run (significant ones only when both repeated the case: Fisher's "
            "exact test, p < 0.05) against N, as eval --max-regressions."
        ),
    ] = None,
) -> None:
    """Write an eval run's report: summary, pass-rate trend, diff against the previous run, and
    each case's checks, response and tool trajectory (recorded vs replayed, drift highlighted).

    The page is one file with no external resources: open it anywhere, attach it to a CI run.
    --format markdown writes instead a short GitHub-flavoured summary of the eval run against
    the previous one of its suite (as diff --format markdown), for a pull request's comment.

    [bold]Examples[/bold]

      tracereplay report -o report.html
      tracereplay report 5e1c --output nightly.html
      tracereplay report -s weather -f markdown -o summary.md
    """
    if report_url is not None and fmt is not ReportFormat.markdown:
        raise BadParameterError("--report-url goes with --format markdown")
    gated = fail_under is not None or max_regressions is not None
    if gated and fmt is not ReportFormat.markdown:
        raise BadParameterError("--fail-under and --max-regressions go with --format markdown")
    from tracereplay.evaluate.settings import check_gates

    fail_under, max_regressions = check_gates(fail_under, max_regressions)
    if output is None and fmt is ReportFormat.html:
        output = Path("report.html")
    if output is not None and not output.parent.exists():
        raise BadParameterError(f"-o {output}: directory {output.parent} does not exist")
    from tracereplay.report import pick_eval_run
    from tracereplay.store.open import open_store

    if fmt is ReportFormat.markdown:
        from tracereplay.report.markdown import load_summary, markdown_summary

        with open_store(db_path()) as store:
            run, previous, cases = load_summary(store, pick_eval_run(store, eval_run, suite, _note))
            ids = [run.eval_run_id] + ([previous.eval_run_id] if previous else [])
            short = short_ids(store, "eval_runs", "eval_run_id", ids)
        details = f"tracereplay diff {short[ids[-1]]} {short[ids[0]]}" if previous else None
        gates = None
        if gated:
            from tracereplay.evaluate.gates import compared_gates

            gates = compared_gates(run, previous, cases, fail_under, max_regressions)
        text = markdown_summary(
            run,
            previous,
            cases,
            report_url=report_url,
            short=short,
            details=details,
            gates=gates,
        )
        if output is None:
            sys.stdout.write(text)
            return
        _write(output, text)
        console.print(
            f"wrote {output}: suite {run.suite_name}, eval run {run.eval_run_id[:8]}",
            markup=False,
            soft_wrap=True,
        )
        return

    from tracereplay.report import load_report, render_report

    assert output is not None
    with open_store(db_path()) as store:
        data = load_report(store, pick_eval_run(store, eval_run, suite, _note))
    _write(output, render_report(data))
    s = data.stats
    rate = "–" if s.pass_rate is None else f"{100 * s.pass_rate:.1f}%"
    console.print(
        f"wrote {output}: suite {data.run.suite_name}, eval run {data.run.eval_run_id[:8]}, "
        f"{s.passed}/{s.cases} passed ({rate})",
        markup=False,
        soft_wrap=True,
    )


def _note(message: str) -> None:
    """A ``note: ...`` line on stderr (an eval run skipped for the report's default)."""
    from tracereplay.cli.common import err_console

    err_console.print(message, style="yellow", markup=False, soft_wrap=True)


def _write(output: Path, text: str) -> None:
    """``text`` into ``output`` whole or not at all (a partial file renamed into place)."""
    tmp = output.with_name(f".{output.name}.{os.getpid()}.partial")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, output)
    finally:
        if tmp.exists():
            tmp.unlink()


def register(app: typer.Typer) -> None:
    app.command(name="report")(report)
