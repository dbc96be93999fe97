"""The pass-rate trend chart: inline SVG, no script, every text escaped."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from tracereplay.report.data import TrendPoint

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
