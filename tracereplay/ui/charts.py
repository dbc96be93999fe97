"""Inline SVG charts: a line chart over eval runs or days, and a sparkline. No script; every
text is escaped; each point has a tooltip (SVG ``<title>``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

from markupsafe import Markup

WIDTH, HEIGHT = 560, 200
LEFT, RIGHT, TOP, BOTTOM = 56, 12, 14, 34
MAX_LABELS = 10


@dataclass(frozen=True)
class Series:
    name: str
    values: Sequence[float | None]
    #: CSS class: ``s0``..``s3`` give the colours
    cls: str = "s0"
    dashed: bool = False


def _nice_max(value: float) -> float:
    if value <= 0:
        return 1.0
    for step in (1, 2, 2.5, 5):
        magnitude = 10 ** int(f"{value:e}".split("e")[1])
        for mult in (1, 10):
            top = step * magnitude * mult
            if top >= value:
                return float(top)
    return value


def line_chart(
    title: str,
    labels: Sequence[str],
    series: Sequence[Series],
    *,
    fmt: Callable[[float], str] = lambda v: f"{v:g}",
    y_max: float | None = None,
    tooltips: Sequence[str] | None = None,
    bars: bool = False,
) -> Markup:
    """A chart of one or more series over ``labels`` (x axis). ``y_max`` fixes the scale (1.0
    for rates); else it is rounded up from the data. ``bars`` draws the first series as bars."""
    n = len(labels)
    values = [v for s in series for v in s.values if v is not None]
    top = y_max if y_max is not None else _nice_max(max(values, default=0.0))
    inner_w, inner_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(i: int) -> float:
        if bars:
            return LEFT + inner_w * (i + 0.5) / max(n, 1)
        return LEFT + (inner_w / 2 if n == 1 else inner_w * i / max(n - 1, 1))

    def y(v: float) -> float:
        return TOP + inner_h * (1.0 - min(max(v / top, 0.0), 1.0)) if top else TOP + inner_h

    parts = [
        f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" '
        f'role="img" aria-label="{escape(title)}" xmlns="http://www.w3.org/2000/svg">'
        f"<title>{escape(title)}</title>"
    ]
    for k in range(5):
        tick = top * k / 4
        ty = y(tick)
        parts.append(
            f'<line class="grid" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{ty:.1f}" y2="{ty:.1f}"/>'
            f'<text class="axis" x="{LEFT - 6}" y="{ty + 4:.1f}" text-anchor="end">'
            f"{escape(fmt(tick))}</text>"
        )
    step = max(1, -(-n // MAX_LABELS))
    for i, label in enumerate(labels):
        if i % step == 0 or i == n - 1:
            parts.append(
                f'<text class="axis" x="{x(i):.1f}" y="{HEIGHT - BOTTOM + 16}" '
                f'text-anchor="middle">{escape(label)}</text>'
            )
    for index, s in enumerate(series):
        pts = [(i, v) for i, v in enumerate(s.values) if v is not None]
        if bars and index == 0:
            bw = min(max(inner_w / max(n, 1) * 0.7, 1.0), 28.0)
            for i, v in pts:
                tip = tooltips[i] if tooltips else f"{labels[i]}: {fmt(v)}"
                parts.append(
                    f'<rect class="bar {s.cls}" x="{x(i) - bw / 2:.1f}" y="{y(v):.1f}" '
                    f'width="{bw:.1f}" height="{TOP + inner_h - y(v):.1f}">'
                    f"<title>{escape(s.name)} · {escape(tip)}</title></rect>"
                )
            continue
        if len(pts) > 1:
            coords = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in pts)
            dash = ' stroke-dasharray="5 4"' if s.dashed else ""
            parts.append(f'<polyline class="line {s.cls}" points="{coords}"{dash}/>')
        for i, v in pts:
            tip = tooltips[i] if tooltips else labels[i]
            parts.append(
                f'<circle class="dot {s.cls}" cx="{x(i):.1f}" cy="{y(v):.1f}" r="3.5">'
                f"<title>{escape(s.name)}: {escape(fmt(v))} · {escape(tip)}</title></circle>"
            )
    lx = LEFT
    for s in series:
        parts.append(
            f'<rect class="key {s.cls}" x="{lx}" y="{HEIGHT - 11}" width="12" height="4"/>'
            f'<text class="axis" x="{lx + 16}" y="{HEIGHT - 6}">{escape(s.name)}</text>'
        )
        lx += 24 + 7 * len(s.name)
    parts.append("</svg>")
    return Markup("".join(parts))


def sparkline(values: Sequence[float | None], width: int = 120, height: int = 24) -> Markup:
    """A small pass-rate line (0..1) for tables."""
    pts = [(i, v) for i, v in enumerate(values) if v is not None]
    if not pts:
        return Markup("")
    n = len(values)

    def x(i: int) -> float:
        return 2 + (width - 4) * (0.5 if n == 1 else i / (n - 1))

    def y(v: float) -> float:
        return 2 + (height - 4) * (1.0 - min(max(v, 0.0), 1.0))

    coords = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in pts)
    last_i, last_v = pts[-1]
    return Markup(
        f'<svg class="spark" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'role="img" aria-label="pass rate trend" xmlns="http://www.w3.org/2000/svg">'
        f'<polyline class="line s0" points="{coords}"/>'
        f'<circle class="dot s0" cx="{x(last_i):.1f}" cy="{y(last_v):.1f}" r="2.5"/></svg>'
    )
