"""An eval's results on the terminal: the results table, what each case's replay saw, the
summary line, which ``eval`` and ``replay`` print; ``tracereplay.evaluate.formats`` writes the
files (JSON, JUnit, other tools' shapes)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from tracereplay.cli.common import console
from tracereplay.evaluate.formats.notes import PROMPT_DRIFT_HINT, answered_drift, problem_notes

if TYPE_CHECKING:
    from tracereplay.evaluate.evaluation import EvalOutcome
    from tracereplay.scoring.outcomes import CaseReport

STATUS_STYLE = {"PASSED": "green", "FAILED": "red", "ERROR": "yellow"}


def _score(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def results_table(reports: Sequence[CaseReport], repeated: bool) -> Table:
    """One row per case: seq, id, status, score, time, query."""
    table = Table(header_style="bold", pad_edge=False)
    table.add_column("#", justify="right", no_wrap=True, min_width=2)
    table.add_column("case", no_wrap=True, style="cyan", min_width=8)
    table.add_column("status", no_wrap=True, min_width=6)
    table.add_column("score", justify="right", no_wrap=True, min_width=5)
    if repeated:
        table.add_column("passed", justify="right", no_wrap=True, min_width=6)
    table.add_column("ms", justify="right", no_wrap=True, min_width=5)
    table.add_column("query", ratio=1, min_width=12)
    for r in reports:
        status = r.result.status.value
        row = [
            str(r.case.seq),
            Text(r.case.id[:8]),
            Text(status, style=STATUS_STYLE[status]),
            _score(r.result.score),
        ]
        if repeated:
            ok = sum(1 for x in r.runs if x.status.value == "PASSED")
            row.append(f"{ok}/{len(r.runs)}")
        asked = " ".join(r.case.query.split())
        if r.case.turns:  # a conversation: its turns, then the first question
            asked = f"[{len(r.case.turns)} turns] {asked}"
        query = Text(asked, no_wrap=True, overflow="ellipsis")
        row += [f"{r.result.duration_ms:.0f}", query]
        table.add_row(*row)
    return table


def print_problems(reports: Sequence[CaseReport]) -> None:
    """Why each case that did not pass did not, and what the replay saw."""
    for r in reports:
        status = r.result.status.value
        notes = problem_notes(r)
        if status == "PASSED" and not notes:
            continue
        head = Text(f"{status:<6} ", style=STATUS_STYLE[status])
        head.append(f"#{r.case.seq} {r.case.id[:8]}", style="cyan")
        console.print(head)
        if status != "PASSED":
            from tracereplay.scoring.verdicts import check_reasons  # models: after the fork server

            print_reasons(check_reasons(r.result))
        for note in notes:
            console.print(Text(f"       {note}", style="dim"))
    if any(answered_drift(r) for r in reports):
        console.print(Text(PROMPT_DRIFT_HINT, style="yellow"))


def print_reasons(reasons: Sequence[str], indent: int = 7) -> None:
    """Each reason on its own lines, wrapped at the terminal's width under the indent (rich
    wraps a ``Text`` and never cuts it)."""
    for reason in reasons:
        line = Text(" ".join(reason.split()))
        console.print(Padding(line, (0, 0, 0, indent), expand=False))


def print_summary(outcome: EvalOutcome) -> None:
    rec = outcome.record
    for note in outcome.agent_notes:
        console.print(Text(f"note: {note}", style="yellow"))
    line = Text()
    line.append(f"eval run {rec.eval_run_id}", style="bold")
    line.append(f"  suite {rec.suite_name}  {rec.mode}")
    if rec.agent:
        line.append(f" ({rec.agent})")
    console.print(line)
    if outcome.runner.interrupted:  # no rate: the run did not finish (issue 55)
        console.print(
            f"interrupted after {rec.total_cases} of {outcome.selected} case(s): "
            f"{rec.passed} passed, {rec.failed} failed, {rec.errored} errored",
            style="yellow",
            markup=False,
        )
        return
    parts = Text()
    # the pass rate is the headline: the share of cases that passed, every case counted
    rate = rec.pass_rate if rec.pass_rate is not None else 0.0
    parts.append(f"pass rate {rate:.1%}", style="bold")
    parts.append(f": {rec.passed} of {rec.total_cases} cases passed, ")
    parts.append(f"{rec.failed} failed", style="red" if rec.failed else "")
    parts.append(", ")
    parts.append(f"{rec.errored} errored", style="yellow" if rec.errored else "")
    if rec.aggregate_score is not None:
        parts.append(f"  score {rec.aggregate_score:.3f}")
    if rec.finished_at is not None:
        parts.append(f"  {(rec.finished_at - rec.started_at).total_seconds():.2f}s")
    console.print(parts)
    if outcome.gates is not None:
        for gate_line in outcome.gates.lines():
            console.print(gate_line, markup=False, highlight=False)
    not_run = outcome.selected - len(outcome.reports)
    if outcome.runner.stopped and not_run:
        console.print(
            f"--fail-fast: stopped after the first case that did not pass; {not_run} case(s) not run",
            style="yellow",
            markup=False,
        )
