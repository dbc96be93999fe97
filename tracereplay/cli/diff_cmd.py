"""``tracereplay diff``: compare two eval runs of a suite case by case."""

from __future__ import annotations

import sys
from enum import Enum
from typing import TYPE_CHECKING, Annotated, Optional

import orjson
import typer
from rich import box
from rich.table import Table
from rich.text import Text

from tracereplay.cli import options
from tracereplay.cli.common import console, db_path, err_console, short_ids
from tracereplay.cli.eval_view import STATUS_STYLE
from tracereplay.cli.eval_view import print_reasons as print_check_reasons
from tracereplay.cli.run_view import fields_lines
from tracereplay.errors import BadParameterError

if TYPE_CHECKING:
    from tracereplay.evaluate.diff import CaseDiff, EvalDiff

BUCKET_STYLE = {
    "Regressed": "bold red",
    "Fixed": "bold green",
    "StillFailing": "red",
    "Added": "cyan",
    "Removed": "magenta",
    "Unchanged": "dim",
}


class DiffFormat(str, Enum):
    table = "table"
    json = "json"
    markdown = "markdown"


def diff_command(
    eval_run_a: Annotated[
        Optional[str],
        typer.Argument(
            metavar="A",
            help="The earlier eval run: an id or unique prefix, a label (eval --label), or "
            "SUITE@N (the suite's Nth eval run; SUITE@-1 the latest, SUITE@-2 the one before).",
            show_default=False,
        ),
    ] = None,
    eval_run_b: Annotated[
        Optional[str],
        typer.Argument(
            metavar="B", help="The later eval run, named the same ways.", show_default=False
        ),
    ] = None,
    last: Annotated[
        bool,
        typer.Option(
            "--last",
            help="Compare the latest eval run with the previous one of the same suite "
            "(instead of A and B); diff --last SUITE for a suite's.",
        ),
    ] = False,
    suite: Annotated[
        Optional[str],
        typer.Option(
            "--suite",
            "-s",
            metavar="SUITE",
            help="With --last: of this suite (as diff --last SUITE).",
            show_default=False,
        ),
    ] = None,
    show_unchanged: Annotated[
        bool, typer.Option("--unchanged", help="Also list the cases that passed in both.")
    ] = False,
    fmt: Annotated[
        DiffFormat,
        typer.Option(
            "--format",
            "-f",
            help="table, json for scripts, or markdown: a short summary for a pull request.",
        ),
    ] = DiffFormat.table,
    report_url: Annotated[
        Optional[str],
        typer.Option(
            "--report-url",
            metavar="URL",
            help="With --format markdown: where B's HTML report (tracereplay report B) is "
            "published; the summary links to it and to each case in it.",
            show_default=False,
        ),
    ] = None,
    fail_under: Annotated[
        Optional[float],
        options.fail_under(
            help="A gate, as eval's: exit 1 only when B's pass rate (percent, 0-100) is below "
            "RATE (instead of when any case regressed)."
        ),
    ] = None,
    max_regressions: Annotated[
        Optional[int],
        options.max_regressions(
            help="A gate, as eval's: exit 1 only when more than N cases regressed from A to B "
            "(instead of any); when both repeated a case (eval --repeat), its regression counts "
            "only when significant: Fisher's exact test, p < 0.05."
        ),
    ] = None,
) -> None:
    """Compare two eval runs of one suite: Regressed, Fixed, StillFailing, Added, Removed,
    Unchanged, with each case's score change.

    --format markdown writes a GitHub-flavoured summary to post on a pull request: both eval
    runs, pass rate and mean score before and now, each case whose verdict changed with its
    reason (the first 50), and links into the HTML report with --report-url.

    --last skips eval runs that did not complete (running, interrupted, stopped), saying so
    on stderr. When A and B differ in mode, agent, or where the LLM answers came from (--llm,
    --llm-match, --llm-until), the first line says so: their verdicts are not comparable one
    for one. A case whose verdict changed between two eval runs that both repeated it (eval
    --repeat) shows the p-value of Fisher's exact test on its passes (p=0.03).

    Exit codes: 1 when any case regressed, else 0 (with --fail-under or --max-regressions:
    1 only when that gate fails); 2 bad input (unknown eval run, two suites).

    [bold]Examples[/bold]

      tracereplay diff --last               # the latest two eval runs
      tracereplay diff --last weather       # the same, of the suite weather
      tracereplay diff v1 v2                # by label (eval --label v1)
      tracereplay diff weather@1 weather@-1 # a suite's first and latest eval runs
      tracereplay diff 3f2a 9c41            # unique prefixes of eval run ids
      tracereplay diff --last weather -f markdown > summary.md
    """
    from tracereplay.evaluate.diff import diff_eval_runs, last_two, skipped_note
    from tracereplay.evaluate.settings import check_gates
    from tracereplay.store.open import open_store

    fail_under, max_regressions = check_gates(fail_under, max_regressions)
    if last and eval_run_b:
        raise BadParameterError(
            "--last takes one SUITE at most (diff --last weather), not two eval runs A and B"
        )
    if last and eval_run_a:  # diff --last weather: the suite as the argument
        if suite is not None:
            raise BadParameterError("give the suite once: diff --last SUITE or --suite SUITE")
        suite, eval_run_a = eval_run_a, None
    if not last and not (eval_run_a and eval_run_b):
        raise BadParameterError("give two eval runs A and B (or --last for the latest two)")
    if suite is not None and not last:
        raise BadParameterError("--suite goes with --last")
    if report_url is not None and fmt is not DiffFormat.markdown:
        raise BadParameterError("--report-url goes with --format markdown")
    with open_store(db_path()) as store:
        if last:
            eval_run_a, eval_run_b, skipped = last_two(store, suite)
            note = skipped_note(skipped, "comparing the latest completed eval runs")
            if note:
                err_console.print(note, style="yellow", markup=False, soft_wrap=True)
        assert eval_run_a is not None and eval_run_b is not None
        diff = diff_eval_runs(store, eval_run_a, eval_run_b)
        short = short_ids(
            store, "eval_runs", "eval_run_id", [diff.a.eval_run_id, diff.b.eval_run_id]
        )
    gates = None
    if fail_under is not None or max_regressions is not None:
        from tracereplay.evaluate.gates import compared_gates

        gates = compared_gates(diff.b, diff.a, diff.cases, fail_under, max_regressions)
    if fmt is DiffFormat.json:
        data = {
            "a": diff.a.to_dict(),
            "b": diff.b.to_dict(),
            "settings_differ": diff.settings_note(),
            "counts": diff.counts(),
            "cases": [{**c.to_dict(), "delta": c.delta} for c in diff.cases],
            **({"gates": gates.to_dict()} if gates is not None else {}),
        }
        sys.stdout.write(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n")
    elif fmt is DiffFormat.markdown:
        from tracereplay.report.markdown import markdown_summary

        a, b = short[diff.a.eval_run_id], short[diff.b.eval_run_id]
        sys.stdout.write(
            markdown_summary(
                diff.b, diff.a, diff.cases, report_url=report_url, short=short,
                details=f"tracereplay diff {a} {b}", gates=gates,
            )
        )  # fmt: skip
    else:
        print_diff(diff, show_unchanged, short)
        for line in gates.lines() if gates is not None else ():
            console.print(line, markup=False, highlight=False)
    if gates is not None:
        raise typer.Exit(1 if gates.failed else 0)
    raise typer.Exit(1 if diff.bucket("Regressed") else 0)


def _side(status: str | None, score: float | None) -> Text:
    """``PASSED 1.00`` for one side of the comparison (``-`` when the case is not in it)."""
    if status is None:
        return Text("-", style="dim")
    text = Text(status, style=STATUS_STYLE.get(status, ""))
    text.append(" " + ("-" if score is None else f"{score:.2f}"))
    return text


def _delta(case: CaseDiff) -> Text:
    d = case.delta
    if d is None:
        text = Text("-", style="dim")
    elif abs(d) < 5e-4:
        text = Text("0.00", style="dim")
    else:
        text = Text(f"{d:+.2f}", style="green" if d > 0 else "red")
    if case.p_value is not None:  # --repeat on both sides: is the change significant?
        text.append(f" p={case.p_value:.2g}", style="bold" if case.p_value < 0.05 else "dim")
    return text


def print_diff(diff: EvalDiff, show_unchanged: bool, short: dict[str, str] | None = None) -> None:
    from tracereplay.evaluate.diff import BUCKETS

    a, b = diff.a, diff.b
    short = short or {}
    settings = diff.settings_note()
    if settings:
        # wrapped at the terminal's width, as the rest of the table output
        console.print(f"note: {settings}", style="yellow", markup=False)
    console.print(Text(f"suite {a.suite_name}", style="bold"))
    for tag, rec in (("A", a), ("B", b)):
        rate = "-" if rec.pass_rate is None else f"{rec.pass_rate:.1%}"
        mode = rec.mode + (f" ({rec.agent})" if rec.agent else "")
        fields = [
            ("", tag, "bold"),
            ("", short.get(rec.eval_run_id, rec.eval_run_id[:8]), "cyan"),
            ("label", rec.label, "") if rec.label else None,
            ("pass rate", rate, ""),
            ("", f"{rec.started_at:%Y-%m-%d %H:%M}", ""),
            ("", mode, ""),
        ]
        for line in fields_lines([f for f in fields if f is not None], console.width - 2):
            console.print(Text("  ").append_text(line))
    counts = diff.counts()
    summary = Text()
    for i, name in enumerate(BUCKETS):
        if i:
            summary.append("  ")
        summary.append(
            f"{name} {counts[name]}", style=BUCKET_STYLE[name] if counts[name] else "dim"
        )
    console.print(summary)
    shown = [c for c in diff.cases if show_unchanged or c.bucket != "Unchanged"]
    if not shown:
        console.print("no case changed", style="dim", markup=False)
        return
    table = Table(header_style="bold", box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("bucket", no_wrap=True)
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("case", no_wrap=True, style="cyan")
    table.add_column("A", no_wrap=True)
    table.add_column("B", no_wrap=True)
    table.add_column("Δ", justify="right", no_wrap=True)
    for c in shown:
        table.add_row(
            Text(c.bucket, style=BUCKET_STYLE[c.bucket]),
            str(c.seq),
            Text(c.case_id[:8]),
            _side(c.status_a.value if c.status_a else None, c.score_a),
            _side(c.status_b.value if c.status_b else None, c.score_b),
            _delta(c),
        )
    console.print(table)
    print_reasons(shown)


def print_reasons(cases: list[CaseDiff]) -> None:
    """Why (B): every listed case that did not pass in B, each failing check's whole reason on
    its own lines, wrapped at the terminal's width (a table column would cut it)."""
    failing = [c for c in cases if c.status_b is not None and c.status_b.value != "PASSED"]
    if not failing:
        return
    console.print(Text("why (B)", style="bold"))
    for c in failing:
        line = Text(f"{c.bucket} ", style=BUCKET_STYLE[c.bucket])
        line.append(f"#{c.seq} {c.case_id[:8]}", style="cyan")
        console.print(line)
        print_check_reasons(c.reasons_b or [c.reason_b], indent=2)


def register(app: typer.Typer) -> None:
    app.command("diff")(diff_command)
