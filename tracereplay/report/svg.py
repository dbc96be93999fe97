"""The report's charts: the shared chart builder (``tracereplay.charts``, as the UI draws
them) given the report's data, and the case x eval-run grid. Every text is escaped (tooltips
are SVG ``<title>``s)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from html import escape

from tracereplay.charts import Series, chart
from tracereplay.report.data import DayPoint, Grid, TrendPoint

WIDTH, HEIGHT = 760, 240


def point_label(p: TrendPoint) -> str:
    """How a run is named under the axis: its label, else its commit, else its number."""
    if p.label:
        return p.label
    if p.git_commit:
        return p.git_commit[:7]
    return f"#{p.run_number}"


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"


def _current(points: Sequence[TrendPoint]) -> int | None:
    return next((i for i, p in enumerate(points) if p.current), None)


def _run_tip(p: TrendPoint) -> str:
    return f"run {p.run_number} · {p.eval_run_id[:8]}" + (f" · {p.label}" if p.label else "")


def trend_svg(points: Sequence[TrendPoint]) -> str:
    """Pass rate (solid) and aggregate score (dashed) of every eval run, oldest first; the
    reported run is the larger dot, its label always shown."""
    tips = [
        _run_tip(p)
        + (f" · {p.git_commit[:10]}" if p.git_commit else "")
        + f" · {p.started_at:%Y-%m-%d %H:%M} UTC · pass rate {_pct(p.pass_rate)}"
        + f" ({p.passed}/{p.cases}) · score {_pct(p.aggregate_score)} · {p.run_status}"
        for p in points
    ]
    series = [Series("pass rate", [p.pass_rate for p in points], 0)]
    if any(p.aggregate_score is not None for p in points):
        series.append(
            Series("aggregate score", [p.aggregate_score for p in points], 1, dashed=True)
        )
    return chart(
        "pass rate of each eval run of the suite",
        [point_label(p) for p in points],
        series,
        fmt=lambda v: f"{100 * v:.0f}%",
        y_max=1.0,
        tooltips=tips,
        current=_current(points),
        width=WIDTH,
        height=HEIGHT,
        cls="trend",
    )


def metric_svg(
    points: Sequence[TrendPoint],
    series: Sequence[tuple[int, str, Sequence[float | None]]],
    fmt: Callable[[float], str],
    label: str,
) -> str:
    """A line per ``(colour, name, values)`` over the eval runs (oldest first); the reported
    run's dots are larger."""
    return chart(
        label,
        [point_label(p) for p in points],
        [Series(name, values, color) for color, name, values in series],
        fmt=fmt,
        tooltips=[_run_tip(p) for p in points],
        current=_current(points),
        width=WIDTH,
        height=HEIGHT,
        cls="metric",
    )


GRID_CELL, GRID_LABEL = 16, 260


def grid_svg(grid: Grid, current_cases: set[str]) -> str:
    """Cases (rows) x eval runs (columns, oldest first): a square per case and run, coloured by
    status, a ring when the case was flaky within that run. A row links to its case below when
    the reported run has it."""
    runs, rows = grid.runs, grid.rows
    width = GRID_LABEL + GRID_CELL * max(len(runs), 1) + 8
    height = 8 + GRID_CELL * len(rows) + 24
    parts = [
        f'<svg class="grid" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        'role="img" aria-label="status of each case in each eval run" '
        'xmlns="http://www.w3.org/2000/svg">'
    ]
    for r, row in enumerate(rows):
        y = 8 + r * GRID_CELL
        query = " ".join(row.query.split())
        text = f"#{row.seq} {query}"
        if len(text) > 40:
            text = text[:39] + "…"
        cells = [
            f'<text class="axis" x="{GRID_LABEL - 8}" y="{y + 12}" text-anchor="end">'
            f"{escape(text)}</text>"
        ]
        for c, status in enumerate(row.statuses):
            x = GRID_LABEL + c * GRID_CELL
            p = runs[c]
            state = status or "absent"
            flaky = row.flaky[c]
            tip = (
                f"#{row.seq} · run {p.run_number}" + (f" ({p.label})" if p.label else "")
                + f" · {state.lower()}" + (" · flaky (repetitions differ)" if flaky else "")
            )  # fmt: skip
            cells.append(
                f'<rect class="cell {state}{" flaky" if flaky else ""}" x="{x + 1}" y="{y + 1}" '
                f'width="{GRID_CELL - 2}" height="{GRID_CELL - 2}" rx="2">'
                f"<title>{escape(tip)}</title></rect>"
            )
        body = "".join(cells)
        if row.case_id in current_cases:
            body = f'<a href="#case-{escape(row.case_id)}">{body}</a>'
        parts.append(
            f'<g class="row" data-case="{escape(row.case_id)}" data-changes="{row.changes}">'
            f"{body}</g>"
        )
    step = max(1, -(-len(runs) // 10))
    for c, p in enumerate(runs):
        if c % step == 0 or p.current or c == len(runs) - 1:
            x = GRID_LABEL + c * GRID_CELL + GRID_CELL / 2
            parts.append(
                f'<text class="axis{" current" if p.current else ""}" x="{x:.1f}" '
                f'y="{height - 8}" text-anchor="middle">{escape(f"#{p.run_number}")}</text>'
            )
    parts.append("</svg>")
    return "".join(parts)


def _day_labels(days: Sequence[DayPoint]) -> list[str]:
    return [f"{d.day:%m-%d}" for d in days]


def runs_per_day_svg(days: Sequence[DayPoint]) -> str:
    """A bar per day: its live runs, the failed ones (red) at the bottom."""
    return chart(
        "production runs and failed runs per day",
        _day_labels(days),
        [Series("failed", [d.failed for d in days], 4, bars=True),
         Series("succeeded", [d.runs - d.failed for d in days], 6, bars=True)],
        tooltips=[f"{d.day:%Y-%m-%d} · {d.runs} runs · {d.failed} failed" for d in days],
        width=WIDTH,
        height=HEIGHT,
        cls="daily",
    )  # fmt: skip


def tool_errors_svg(days: Sequence[DayPoint]) -> str:
    """The share of tool calls that failed, per day (no dot on a day without tool calls)."""
    return chart(
        "tool error rate per day",
        _day_labels(days),
        [Series("tool error rate", [d.tool_error_rate for d in days], 4)],
        fmt=lambda v: f"{100 * v:g}%",
        tooltips=[
            f"{d.day:%Y-%m-%d} · {d.tool_errors} of {d.tool_calls} tool calls failed" for d in days
        ],
        width=WIDTH,
        height=HEIGHT,
        cls="daily",
    )
