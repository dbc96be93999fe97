"""Inline SVG charts, the one builder of the UI's and the report's charts, with one stylesheet
(``charts.css``, ``stylesheet()``), scoped so nothing leaks either way.

Every element a chart draws has a ``trc-`` class inside ``<svg class="trc">`` and charts.css
styles only those, under ``svg.trc``: a page's own rules (the span waterfall's ``.bar``) cannot
reach a chart's marks, nor the chart's rules the page. Geometry is computed here, never left to
CSS: the plot leaves room for the y-axis labels (text measured at ``CHAR_W`` per character of
11 px type), x labels are thinned so that none overlaps another or leaves the chart, and the
legend wraps into rows that fit under the plot. Points sit at the centre of equal slots (a bar
per slot), so the first and last labels stay inside too. Each mark carries ``data-value`` (the
value it draws) and a tooltip (SVG ``<title>``); every text is escaped. No script.

Internal: not a public API, it changes whenever the code needs it (docs/python-api.md says
what is public).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape
from importlib import resources

#: estimated width of one character of the charts' 11 px type (a little over the real ~6.2 px)
CHAR_W = 7.0
FONT_PX = 11
TOP, RIGHT, GAP = 12, 12, 8
#: x labels longer than this are cut (…)
LABEL_CHARS = 14
LEGEND_ROW = 16


@dataclass(frozen=True)
class Series:
    """One series: a line (``dashed`` or not) with a dot per known value, or bars.

    ``color`` picks the palette entry (``trc-c0``..``trc-c6`` in charts.css). Bar series of one
    chart are stacked, in the order given (the first at the bottom)."""

    name: str
    values: Sequence[float | None]
    color: int = 0
    dashed: bool = False
    bars: bool = False


def stylesheet() -> str:
    """charts.css: what a page that shows charts must include (inline or linked)."""
    return resources.files(__name__).joinpath("charts.css").read_text(encoding="utf-8")


def text_width(text: str) -> float:
    return len(text) * CHAR_W


def _step(raw: float, whole: bool) -> float:
    """The smallest 1/2/2.5/5 x 10^k at or above ``raw`` (2.5 left out for whole numbers)."""
    if raw <= 0:
        return 1.0
    scale = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 5, 10) if whole else (1, 2, 2.5, 5, 10):
        if m * scale >= raw - 1e-12 and (not whole or m * scale >= 1):
            return m * scale
    return 10 * scale  # pragma: no cover


def y_ticks(largest: float, y_max: float | None = None, whole: bool = False) -> list[float]:
    """Tick values from 0 to the top of the axis: ``y_max`` in quarters, else about four round
    steps up to the first at or above ``largest``."""
    if y_max is not None:
        return [y_max * k / 4 for k in range(5)]
    step = _step(largest / 4, whole) if largest > 0 else 1.0
    count = max(1, math.ceil(largest / step - 1e-9))
    return [step * k for k in range(count + 1)]


def clip(label: str, chars: int = LABEL_CHARS) -> str:
    return label if len(label) <= chars else label[: chars - 1] + "…"


def chart(
    title: str,
    labels: Sequence[str],
    series: Sequence[Series],
    *,
    fmt: Callable[[float], str] = lambda v: f"{v:g}",
    y_max: float | None = None,
    tooltips: Sequence[str] | None = None,
    current: int | None = None,
    width: int = 560,
    height: int = 200,
    cls: str = "",
) -> str:
    """An SVG chart of ``series`` over the x positions ``labels``; ``tooltips[i]`` describes x
    position ``i``; ``current`` is the position drawn larger, its label always shown. The y axis
    goes from 0 to ``y_max`` when given (1.0 for rates), else to a round number at or above the
    largest value (of the stacked bars' totals)."""
    n = len(labels)
    bar_series = [s for s in series if s.bars]
    line_series = [s for s in series if not s.bars]
    stacked = [sum(s.values[i] or 0.0 for s in bar_series) for i in range(n)]
    known = [v for s in line_series for v in s.values if v is not None] + stacked
    whole = all(float(v).is_integer() for v in known) and y_max is None
    ticks = y_ticks(max(known, default=0.0), y_max, whole)
    top = ticks[-1] or 1.0
    tick_text = [fmt(t) for t in ticks]
    left = GAP + max((text_width(t) for t in tick_text), default=0.0) + 6
    legend = _legend_layout(series, left, width)
    rows = max((row for row, _, _ in legend), default=-1) + 1
    bottom = height - (FONT_PX + 12) - rows * LEGEND_ROW - 2  # the zero line
    plot_w = width - RIGHT - left
    slot = plot_w / max(n, 1)

    def x(i: int) -> float:
        return left + slot * (i + 0.5)

    def y(v: float) -> float:
        return bottom - (bottom - TOP) * min(max(v / top, 0.0), 1.0)

    klass = f"trc {cls}".strip()
    out = [
        f'<svg class="{escape(klass)}" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" role="img" aria-label="{escape(title)}" '
        f'xmlns="http://www.w3.org/2000/svg"><title>{escape(title)}</title>'
    ]
    for value, text in zip(ticks, tick_text):
        ty = y(value)
        out.append(
            f'<line class="trc-grid" x1="{left:.1f}" x2="{width - RIGHT}" y1="{ty:.1f}" '
            f'y2="{ty:.1f}"/><text class="trc-label trc-y" x="{left - 6:.1f}" '
            f'y="{ty + 4:.1f}" text-anchor="end">{escape(text)}</text>'
        )
    out += _x_labels(labels, current, x, slot, bottom + FONT_PX + 6, width)

    def tip(i: int) -> str:
        return tooltips[i] if tooltips else labels[i]

    if bar_series:
        bar_w = max(1.0, min(slot * 0.7, 28.0))
        base = [0.0] * n
        for s in bar_series:
            for i, v in enumerate(s.values):
                if not v:
                    continue
                y0, y1 = y(base[i]), y(base[i] + v)
                base[i] += v
                out.append(
                    f'<rect class="trc-bar trc-c{s.color}" data-value="{v:g}" '
                    f'x="{x(i) - bar_w / 2:.2f}" y="{y1:.2f}" width="{bar_w:.2f}" '
                    f'height="{y0 - y1:.2f}"><title>{escape(f"{s.name} {fmt(v)} · {tip(i)}")}'
                    "</title></rect>"
                )
    for s in line_series:
        pts = [(i, v) for i, v in enumerate(s.values) if v is not None]
        if len(pts) > 1:
            coords = " ".join(f"{x(i):.2f},{y(v):.2f}" for i, v in pts)
            dash = " trc-dashed" if s.dashed else ""
            out.append(f'<polyline class="trc-line trc-c{s.color}{dash}" points="{coords}"/>')
    for s in reversed(line_series):  # the first series' dots on top
        pts = [(i, v) for i, v in enumerate(s.values) if v is not None]
        for i, v in pts:
            big = i == current
            out.append(
                f'<circle class="trc-dot trc-c{s.color}{" trc-current" if big else ""}" '
                f'data-value="{v:g}" cx="{x(i):.2f}" cy="{y(v):.2f}" r="{5 if big else 3}">'
                f"<title>{escape(f'{s.name} {fmt(v)} · {tip(i)}')}</title></circle>"
            )
    for row, lx, s in legend:
        ly = height - 6 - (rows - 1 - row) * LEGEND_ROW
        swatch = (
            f'<rect class="trc-swatch trc-c{s.color}" x="{lx:.1f}" y="{ly - 9}" width="10" '
            'height="10"/>'
            if s.bars
            else f'<line class="trc-key trc-c{s.color}{" trc-dashed" if s.dashed else ""}" '
            f'x1="{lx:.1f}" x2="{lx + 14:.1f}" y1="{ly - 4}" y2="{ly - 4}"/>'
        )
        out.append(
            f'<g class="trc-legend">{swatch}<text class="trc-label" x="{lx + 18:.1f}" '
            f'y="{ly}">{escape(s.name)}</text></g>'
        )
    out.append("</svg>")
    return "".join(out)


def _legend_layout(
    series: Sequence[Series], left: float, width: int
) -> list[tuple[int, float, Series]]:
    """``(row, x, series)`` of each legend entry, rows filled left to right within the width."""
    out: list[tuple[int, float, Series]] = []
    row, lx = 0, left
    for s in series:
        w = 18 + text_width(s.name)
        if lx > left and lx + w > width - RIGHT:
            row, lx = row + 1, left
        out.append((row, lx, s))
        lx += w + 16
    return out


def _x_labels(
    labels: Sequence[str],
    current: int | None,
    x: Callable[[int], float],
    slot: float,
    baseline: float,
    width: int,
) -> list[str]:
    """The x labels that fit: the current one, the last, then every k-th from the first, each
    only where it overlaps no label already placed (centred on its slot, kept inside)."""
    n = len(labels)
    texts = [clip(label) for label in labels]
    widest = max((text_width(t) for t in texts), default=0.0)
    every = max(1, math.ceil((widest + GAP) / max(slot, 1e-9)))
    order = [i for i in (current, n - 1) if i is not None and 0 <= i < n]
    order += [i for i in range(0, n, every) if i not in order]
    placed: list[tuple[float, float, int]] = []
    for i in order:
        w = text_width(texts[i])
        cx = min(max(x(i), w / 2 + 1), width - w / 2 - 1)
        a, b = cx - w / 2, cx + w / 2
        if any(a < pb + GAP and b > pa - GAP for pa, pb, _ in placed):
            continue
        placed.append((a, b, i))
    out = []
    for a, b, i in sorted(placed, key=lambda p: p[0]):
        cur = " trc-current" if i == current else ""
        out.append(
            f'<text class="trc-label trc-x{cur}" x="{(a + b) / 2:.1f}" y="{baseline:.1f}" '
            f'text-anchor="middle">{escape(texts[i])}</text>'
        )
    return out


def sparkline(values: Sequence[float | None], width: int = 120, height: int = 24) -> str:
    """A small line of rates (0..1) for a table cell; the last value is a dot."""
    pts = [(i, v) for i, v in enumerate(values) if v is not None]
    if not pts:
        return ""
    n = len(values)

    def x(i: int) -> float:
        return 3 + (width - 6) * (0.5 if n == 1 else i / (n - 1))

    def y(v: float) -> float:
        return 3 + (height - 6) * (1.0 - min(max(v, 0.0), 1.0))

    coords = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in pts)
    last_i, last_v = pts[-1]
    return (
        f'<svg class="trc trc-spark" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" role="img" aria-label="pass rate trend" '
        f'xmlns="http://www.w3.org/2000/svg"><polyline class="trc-line trc-c0" '
        f'points="{coords}"/><circle class="trc-dot trc-c0" data-value="{last_v:g}" '
        f'cx="{x(last_i):.1f}" cy="{y(last_v):.1f}" r="2.5"/></svg>'
    )
