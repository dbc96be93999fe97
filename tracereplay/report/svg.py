"""The report's charts: inline SVG, every text escaped (tooltips are SVG ``<title>``s)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from html import escape

from tracereplay.report.data import DayPoint, Grid, TrendPoint

WIDTH, HEIGHT = 760, 240
LEFT, RIGHT, TOP, BOTTOM = 48, 16, 16, 44
#: at most this many x-axis labels (every k-th run beyond it)
MAX_LABELS = 12


def _x(i: int, n: int) -> float:
    inner = WIDTH - LEFT - RIGHT
    return LEFT + (inner / 2 if n == 1 else inner * i / (n - 1))


def _y(rate: float) -> float:
    return TOP + (HEIGHT - TOP - BOTTOM) * (1.0 - rate)


def point_label(p: TrendPoint) -> str:
    """How a run is named under the axis: its label, else its commit, else its number."""
    if p.label:
        return p.label if len(p.label) <= 14 else p.label[:13] + "…"
    if p.git_commit:
        return p.git_commit[:7]
    return f"#{p.run_number}"


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"


def _line(points: Sequence[tuple[float, float]], cls: str) -> str:
    if len(points) < 2:
        return ""
    coords = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
    return f'<polyline class="{cls}" points="{coords}"/>'


def trend_svg(points: Sequence[TrendPoint]) -> str:
    """Pass rate (solid) and aggregate score (dashed) of every eval run, oldest first; the
    reported run is the larger dot. Each dot has a tooltip (SVG ``<title>``)."""
    n = len(points)
    parts = [
        f'<svg class="trend" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" '
        'role="img" aria-label="pass rate of each eval run of the suite" '
        'xmlns="http://www.w3.org/2000/svg">'
    ]
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        y = _y(tick)
        parts.append(
            f'<line class="grid" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y:.1f}" y2="{y:.1f}"/>'
            f'<text class="axis" x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">'
            f"{int(tick * 100)}%</text>"
        )
    rates = [(i, p) for i, p in enumerate(points) if p.pass_rate is not None]
    scores = [(i, p) for i, p in enumerate(points) if p.aggregate_score is not None]
    parts.append(_line([(_x(i, n), _y(p.aggregate_score or 0.0)) for i, p in scores], "score"))
    parts.append(_line([(_x(i, n), _y(p.pass_rate or 0.0)) for i, p in rates], "rate"))
    step = max(1, -(-n // MAX_LABELS))
    for i, p in enumerate(points):
        x = _x(i, n)
        if i % step == 0 or p.current or i == n - 1:
            parts.append(
                f'<text class="axis{" current" if p.current else ""}" x="{x:.1f}" '
                f'y="{HEIGHT - BOTTOM + 18}" text-anchor="middle">{escape(point_label(p))}</text>'
            )
        if p.pass_rate is None:
            continue
        tip = (
            f"run {p.run_number} · {p.eval_run_id[:8]}"
            + (f" · {p.label}" if p.label else "")
            + (f" · {p.git_commit[:10]}" if p.git_commit else "")
            + f" · {p.started_at:%Y-%m-%d %H:%M} UTC · pass rate {_pct(p.pass_rate)}"
            + f" ({p.passed}/{p.cases}) · score {_pct(p.aggregate_score)} · {p.run_status}"
        )
        parts.append(
            f'<circle class="dot{" current" if p.current else ""}" cx="{x:.1f}" '
            f'cy="{_y(p.pass_rate):.1f}" r="{6 if p.current else 4}">'
            f"<title>{escape(tip)}</title></circle>"
        )
    legend_y = HEIGHT - 8
    parts.append(
        f'<line class="rate" x1="{LEFT}" x2="{LEFT + 24}" y1="{legend_y - 4}" y2="{legend_y - 4}"/>'
        f'<text class="axis" x="{LEFT + 30}" y="{legend_y}">pass rate</text>'
        f'<line class="score" x1="{LEFT + 110}" x2="{LEFT + 134}" y1="{legend_y - 4}" '
        f'y2="{legend_y - 4}"/>'
        f'<text class="axis" x="{LEFT + 140}" y="{legend_y}">aggregate score</text>'
    )
    parts.append("</svg>")
    return "".join(p for p in parts if p)


# ---------------------------------------------------------------------- more charts
def _nice_max(value: float) -> float:
    """The smallest 1/2/2.5/5 x 10^k at or above ``value`` (the top of a y axis)."""
    if value <= 0:
        return 1.0
    scale = 10 ** math.floor(math.log10(value))
    for m in (1, 2, 2.5, 5, 10):
        if m * scale >= value:
            return m * scale
    return 10 * scale  # pragma: no cover


def _svg_open(cls: str, width: int, height: int, label: str) -> str:
    return (
        f'<svg class="{cls}" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'role="img" aria-label="{escape(label)}" xmlns="http://www.w3.org/2000/svg">'
    )


def _y_axis(top: float, fmt: Callable[[float], str], width: int = WIDTH) -> list[str]:
    out = []
    for k in range(5):
        value = top * k / 4
        y = TOP + (HEIGHT - TOP - BOTTOM) * (1 - k / 4)
        out.append(
            f'<line class="grid" x1="{LEFT}" x2="{width - RIGHT}" y1="{y:.1f}" y2="{y:.1f}"/>'
            f'<text class="axis" x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">'
            f"{escape(fmt(value))}</text>"
        )
    return out


def _legend(items: Sequence[tuple[str, str]], width: int = WIDTH) -> str:
    y = HEIGHT - 8
    out, x = [], LEFT
    for cls, text in items:
        out.append(
            f'<line class="{cls}" x1="{x}" x2="{x + 24}" y1="{y - 4}" y2="{y - 4}"/>'
            f'<text class="axis" x="{x + 30}" y="{y}">{escape(text)}</text>'
        )
        x += 40 + 7 * len(text)
    return "".join(out)


def metric_svg(
    points: Sequence[TrendPoint],
    series: Sequence[tuple[str, str, Sequence[float | None]]],
    fmt: Callable[[float], str],
    label: str,
) -> str:
    """A line per ``(css class, name, values)`` over the eval runs (oldest first), y from 0 to a
    round number above the largest value; every dot has a tooltip; the reported run's dots are
    larger."""
    n = len(points)
    known = [v for _, _, values in series for v in values if v is not None]
    top = _nice_max(max(known) if known else 0.0)

    def y(v: float) -> float:
        return TOP + (HEIGHT - TOP - BOTTOM) * (1.0 - v / top)

    parts = [_svg_open("metric", WIDTH, HEIGHT, label), *_y_axis(top, fmt)]
    step = max(1, -(-n // MAX_LABELS))
    for i, p in enumerate(points):
        if i % step == 0 or p.current or i == n - 1:
            parts.append(
                f'<text class="axis{" current" if p.current else ""}" x="{_x(i, n):.1f}" '
                f'y="{HEIGHT - BOTTOM + 18}" text-anchor="middle">{escape(point_label(p))}</text>'
            )
    for cls, name, values in series:
        dots = [(i, v) for i, v in enumerate(values) if v is not None]
        parts.append(_line([(_x(i, n), y(v)) for i, v in dots], cls))
        for i, v in dots:
            p = points[i]
            tip = f"run {p.run_number} · {p.eval_run_id[:8]}" + (f" · {p.label}" if p.label else "")
            parts.append(
                f'<circle class="dot {cls}{" current" if p.current else ""}" cx="{_x(i, n):.1f}" '
                f'cy="{y(v):.1f}" r="{5 if p.current else 3}">'
                f"<title>{escape(f'{tip} · {name} {fmt(v)}')}</title></circle>"
            )
    parts.append(_legend([(cls, name) for cls, name, _ in series]))
    parts.append("</svg>")
    return "".join(p for p in parts if p)


GRID_CELL, GRID_LABEL = 16, 260


def grid_svg(grid: Grid, current_cases: set[str]) -> str:
    """Cases (rows) x eval runs (columns, oldest first): a square per case and run, coloured by
    status, a ring when the case was flaky within that run. A row links to its case below when
    the reported run has it."""
    runs, rows = grid.runs, grid.rows
    width = GRID_LABEL + GRID_CELL * max(len(runs), 1) + 8
    height = 8 + GRID_CELL * len(rows) + 24
    parts = [_svg_open("grid", width, height, "status of each case in each eval run")]
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


DAY_WIDTH = 760


def _day_x(i: int, n: int) -> tuple[float, float]:
    slot = (DAY_WIDTH - LEFT - RIGHT) / max(n, 1)
    return LEFT + i * slot, slot


def _day_labels(days: Sequence[DayPoint]) -> list[str]:
    out = []
    n = len(days)
    for i, d in enumerate(days):
        if (i % 7 == 0 and i < n - 4) or i == n - 1:
            x, slot = _day_x(i, n)
            out.append(
                f'<text class="axis" x="{x + slot / 2:.1f}" y="{HEIGHT - BOTTOM + 18}" '
                f'text-anchor="middle">{d.day:%m-%d}</text>'
            )
    return out


def runs_per_day_svg(days: Sequence[DayPoint]) -> str:
    """A bar per day: its live runs, the failed ones in red at the bottom."""
    top = _nice_max(max((d.runs for d in days), default=0))
    parts = [
        _svg_open("daily", DAY_WIDTH, HEIGHT, "production runs and failed runs per day"),
        *_y_axis(top, lambda v: f"{v:g}", DAY_WIDTH),
        *_day_labels(days),
    ]
    scale = (HEIGHT - TOP - BOTTOM) / top
    base = HEIGHT - BOTTOM
    for i, d in enumerate(days):
        x, slot = _day_x(i, len(days))
        tip = f"{d.day:%Y-%m-%d} · {d.runs} runs · {d.failed} failed"
        ok = d.runs - d.failed
        parts.append(f'<g class="day" data-day="{d.day}"><title>{escape(tip)}</title>')
        if d.failed:
            parts.append(
                f'<rect class="bar failed" x="{x + 1:.1f}" y="{base - d.failed * scale:.1f}" '
                f'width="{slot - 2:.1f}" height="{d.failed * scale:.1f}"/>'
            )
        if ok:
            parts.append(
                f'<rect class="bar ok" x="{x + 1:.1f}" y="{base - d.runs * scale:.1f}" '
                f'width="{slot - 2:.1f}" height="{ok * scale:.1f}"/>'
            )
        parts.append("</g>")
    parts.append(_legend([("bar-ok", "runs"), ("bar-failed", "failed")], DAY_WIDTH))
    parts.append("</svg>")
    return "".join(parts)


def tool_errors_svg(days: Sequence[DayPoint]) -> str:
    """The share of tool calls that failed, per day (no dot on a day without tool calls)."""
    rates = [d.tool_error_rate for d in days]
    top = _nice_max(max((r for r in rates if r is not None), default=0.0))
    top = min(top, 1.0)
    parts = [
        _svg_open("daily", DAY_WIDTH, HEIGHT, "tool error rate per day"),
        *_y_axis(top, lambda v: f"{100 * v:g}%", DAY_WIDTH),
        *_day_labels(days),
    ]

    def y(v: float) -> float:
        return TOP + (HEIGHT - TOP - BOTTOM) * (1.0 - v / top)

    pts = []
    for i, d in enumerate(days):
        rate = rates[i]
        if rate is None:
            continue
        x, slot = _day_x(i, len(days))
        pts.append((x + slot / 2, y(rate)))
        tip = f"{d.day:%Y-%m-%d} · {d.tool_errors} of {d.tool_calls} tool calls failed"
        parts.append(
            f'<circle class="dot errors" data-day="{d.day}" cx="{x + slot / 2:.1f}" '
            f'cy="{y(rate):.1f}" r="3"><title>{escape(tip)}</title></circle>'
        )
    parts.append(_line(pts, "errors"))
    parts.append("</svg>")
    return "".join(p for p in parts if p)
