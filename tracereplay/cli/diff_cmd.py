"""``tracereplay diff``: compare two eval runs of a suite case by case."""

from __future__ import annotations

import sys
from enum import Enum
from typing import TYPE_CHECKING, Annotated

import orjson
import typer
from rich.table import Table
from rich.text import Text

from tracereplay.cli.common import console, db_path
from tracereplay.cli.eval_cmd import STATUS_STYLE

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


def diff_command(
    eval_run_a: Annotated[str, typer.Argument(help="The earlier eval run (id or unique prefix).")],
    eval_run_b: Annotated[str, typer.Argument(help="The later eval run (id or unique prefix).")],
    show_unchanged: Annotated[
        bool, typer.Option("--unchanged", help="Also list the cases that passed in both.")
    ] = False,
    fmt: Annotated[
        DiffFormat, typer.Option("--format", "-f", help="table, or json for scripts.")
    ] = DiffFormat.table,
) -> None:
    """Compare two eval runs of one suite: Regressed, Fixed, StillFailing, Added, Removed,
    Unchanged, with each case's score change.

    Exit code 1 when any case regressed, else 0.

    [bold]Example[/bold]

      tracereplay diff 3f2a 9c41        # unique prefixes of eval run ids work
    """
    from tracereplay.evaluate.diff import diff_eval_runs
    from tracereplay.ingest import open_store

    with open_store(db_path()) as store:
        diff = diff_eval_runs(store, eval_run_a, eval_run_b)
    if fmt is DiffFormat.json:
        data = {
            "a": diff.a.to_dict(),
            "b": diff.b.to_dict(),
            "counts": diff.counts(),
            "cases": [{**c.to_dict(), "delta": c.delta} for c in diff.cases],
        }
        sys.stdout.write(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        print_diff(diff, show_unchanged)
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
        return Text("-", style="dim")
    if abs(d) < 5e-4:
        return Text("0.00", style="dim")
    return Text(f"{d:+.2f}", style="green" if d > 0 else "red")


def print_diff(diff: EvalDiff, show_unchanged: bool) -> None:
    from tracereplay.evaluate.diff import BUCKETS

    a, b = diff.a, diff.b
    console.print(Text(f"suite {a.suite_name}", style="bold"))
    for tag, rec in (("A", a), ("B", b)):
        line = Text(f"  {tag} {rec.eval_run_id}  ")
        line.append(f"{rec.started_at:%Y-%m-%d %H:%M:%S}  {rec.mode}")
        if rec.agent:
            line.append(f" ({rec.agent})")
        if rec.label:
            line.append(f"  label {rec.label}")
        rate = "-" if rec.pass_rate is None else f"{rec.pass_rate:.1%}"
        line.append(f"  pass rate {rate}")
        console.print(line)
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
    table = Table(header_style="bold", pad_edge=False)
    table.add_column("bucket", no_wrap=True, min_width=12)
    table.add_column("#", justify="right", no_wrap=True, min_width=2)
    table.add_column("case", no_wrap=True, style="cyan", min_width=8)
    table.add_column("A", no_wrap=True, min_width=11)
    table.add_column("B", no_wrap=True, min_width=11)
    table.add_column("Δ score", justify="right", no_wrap=True, min_width=7)
    table.add_column("why (B)", ratio=1, min_width=10)
    for c in shown:
        why = c.reason_b if c.status_b and c.status_b.value != "PASSED" else ""
        table.add_row(
            Text(c.bucket, style=BUCKET_STYLE[c.bucket]),
            str(c.seq),
            Text(c.case_id[:8]),
            _side(c.status_a.value if c.status_a else None, c.score_a),
            _side(c.status_b.value if c.status_b else None, c.score_b),
            _delta(c),
            Text(" ".join((why or c.query).split()), no_wrap=True, overflow="ellipsis"),
        )
    console.print(table)
    for c in diff.bucket("Regressed"):
        line = Text("Regressed ", style=BUCKET_STYLE["Regressed"])
        line.append(f"#{c.seq} {c.case_id[:8]}", style="cyan")
        line.append(f"  {c.reason_b}")
        console.print(line)


def register(app: typer.Typer) -> None:
    app.command("diff")(diff_command)
