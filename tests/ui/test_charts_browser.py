"""The charts as a person sees them: headless Chromium (tests/headless_chromium.py) measures
what it drew on the UI's Production, suite and eval-run pages and in the HTML report, all drawn
by ``tracereplay.charts``.

For every chart: each bar's height and each dot's height above the zero line are proportional
to the value it draws (``data-value``), the tallest mark fills at least half of the plot and
none leaves it; marks sit at equally spaced x positions; every text (axis labels, legend) is
inside the chart and overlaps no other text and no bar. A page's own CSS (the span waterfall's
``.bar``) does not reach the charts.

Set ``TRACEREPLAY_UI_SCREENSHOTS=DIR`` to keep the screenshots (else they go to a temporary
directory) and look at them.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from chart_store import RUNS_PER_DAY, chart_store
from headless_chromium import requires_chromium, requires_playwright, started_browser
from sql_pipeline import tracereplay
from ui_helpers import ui_server

from tracereplay.store.open import open_store

pytestmark = [requires_chromium, requires_playwright, pytest.mark.slow]

MEASURE = """(svg) => {
  const r = (e) => { const b = e.getBoundingClientRect();
                     return {x: b.x, y: b.y, w: b.width, h: b.height}; };
  const marks = (sel) => [...svg.querySelectorAll(sel)].map(
    (e) => ({...r(e), v: Number(e.dataset.value), cls: e.getAttribute('class')}));
  const grid = [...svg.querySelectorAll('line.trc-grid')].map(r);
  return {
    label: svg.getAttribute('aria-label'), box: r(svg),
    zero: Math.max(...grid.map((g) => g.y)), top: Math.min(...grid.map((g) => g.y)),
    bars: marks('rect.trc-bar'), dots: marks('circle.trc-dot'),
    texts: [...svg.querySelectorAll('text')].map((e) => ({...r(e), t: e.textContent})),
  };
}"""


def _overlap(a: dict[str, float], b: dict[str, float], slack: float = 0.5) -> bool:
    return (
        a["x"] < b["x"] + b["w"] - slack
        and b["x"] < a["x"] + a["w"] - slack
        and a["y"] < b["y"] + b["h"] - slack
        and b["y"] < a["y"] + a["h"] - slack
    )


def _inside(inner: dict[str, float], outer: dict[str, float], slack: float = 1.0) -> bool:
    return (
        inner["x"] >= outer["x"] - slack
        and inner["y"] >= outer["y"] - slack
        and inner["x"] + inner["w"] <= outer["x"] + outer["w"] + slack
        and inner["y"] + inner["h"] <= outer["y"] + outer["h"] + slack
    )


def _proportional(pairs: list[tuple[float, float]], what: str) -> None:
    """``(value, pixels)`` pairs: pixels = k * value for one k (within rounding)."""
    pairs = [(v, px) for v, px in pairs if v > 0]
    if not pairs:
        return
    k = max(px for _, px in pairs) / max(v for v, _ in pairs)
    for v, px in pairs:
        assert abs(px - k * v) <= max(1.0, 0.02 * px), (
            f"{what}: {v} drawn {px:.1f}px, not {k * v:.1f}"
        )


def _equally_spaced(xs: list[float], what: str) -> None:
    xs = sorted(set(round(x, 1) for x in xs))
    if len(xs) < 3:
        return
    gaps = [b - a for a, b in zip(xs, xs[1:])]
    unit = min(gaps)
    for g in gaps:  # a gap is a whole number of slots (slots without a mark are skipped)
        assert abs(g / unit - round(g / unit)) < 0.05, f"{what}: x gaps {gaps}"


def check_chart(c: dict[str, Any]) -> None:
    what = c["label"]
    plot = c["zero"] - c["top"]
    assert plot > 40, what
    if c["bars"]:
        _proportional([(b["v"], b["h"]) for b in c["bars"]], what)
        tallest = max(c["zero"] - b["y"] for b in c["bars"])
        assert plot * 0.5 <= tallest <= plot + 1, f"{what}: tallest bar {tallest} of {plot}"
        for b in c["bars"]:
            assert b["y"] >= c["top"] - 1 and b["y"] + b["h"] <= c["zero"] + 1, what
            assert b["w"] >= 1, what
        bottoms = {}
        for b in sorted(c["bars"], key=lambda b: -b["y"]):  # stacks rest on the zero line
            centre = round(b["x"] + b["w"] / 2, 1)
            expected = bottoms.get(centre, c["zero"])
            assert abs(b["y"] + b["h"] - expected) <= 1, f"{what}: a bar floats"
            bottoms[centre] = b["y"]
        _equally_spaced([b["x"] + b["w"] / 2 for b in c["bars"]], what)
    if c["dots"]:
        centre = [(d["v"], c["zero"] - (d["y"] + d["h"] / 2)) for d in c["dots"]]
        _proportional(centre, what)
        for v, up in centre:
            if v == 0:
                assert abs(up) <= 1, f"{what}: a zero off the zero line"
            assert -1 <= up <= plot + 1, f"{what}: a dot outside the plot"
        if not c["bars"]:
            highest = max(up for _, up in centre)
            assert highest >= plot * 0.5 or max(v for v, _ in centre) == 0, what
        by_series: dict[str, list[float]] = {}
        for d in c["dots"]:
            by_series.setdefault(d["cls"].split()[1], []).append(d["x"] + d["w"] / 2)
        for xs in by_series.values():
            _equally_spaced(xs, what)
    texts = [t for t in c["texts"] if t["w"] > 0]
    for t in texts:
        assert _inside(t, c["box"]), f"{what}: {t['t']!r} is outside the chart"
    for a, b in itertools.combinations(texts, 2):
        assert not _overlap(a, b), f"{what}: {a['t']!r} overlaps {b['t']!r}"
    for t, b in itertools.product(texts, c["bars"]):
        assert not _overlap(t, b), f"{what}: {t['t']!r} overlaps a bar"


@pytest.fixture(scope="module")
def charted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    return chart_store(tmp_path_factory)


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = Path(os.environ.get("TRACEREPLAY_UI_SCREENSHOTS") or tmp_path_factory.mktemp("shots"))
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="module")
def server(charted: tuple[Path, str]) -> Iterator[str]:
    db, _ = charted
    with ui_server(db) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with started_browser() as b:
        yield b


def _charts(browser: Any, url: str, shot: Path, width: int = 1360) -> list[dict[str, Any]]:
    page = browser.new_page(viewport={"width": width, "height": 900})
    try:
        page.goto(url)
        page.screenshot(path=str(shot), full_page=True)
        found = page.locator("svg.trc:not(.trc-spark)")
        return [found.nth(i).evaluate(MEASURE) for i in range(found.count())]
    finally:
        page.close()


def _suite_id(db: Path) -> str:
    with open_store(db) as store:
        return store.con.execute("SELECT suite_id FROM eval_suites").fetchall()[0][0]


@pytest.mark.parametrize("width", [1360, 760])
def test_production_page(
    browser: Any, server: str, shots: Path, width: int, charted: tuple[Path, str]
) -> None:
    charts = _charts(
        browser, f"{server}/dashboard?days=14", shots / f"dashboard-{width}.png", width
    )
    assert len(charts) == 4
    for c in charts:
        check_chart(c)
    runs = charts[0]  # a bar per day with runs, stacked: succeeded + failed = the day's runs
    per_slot: dict[float, float] = {}
    for b in runs["bars"]:
        per_slot[round(b["x"] + b["w"] / 2)] = per_slot.get(round(b["x"] + b["w"] / 2), 0) + b["v"]
    totals = [n for n in RUNS_PER_DAY if n]
    drawn = [per_slot[x] for x in sorted(per_slot)]
    assert drawn[:-1] == totals[:-1]  # the last day also has the demo's live runs
    assert drawn[-1] > totals[-1]


def test_suite_and_eval_run_pages(
    browser: Any, server: str, shots: Path, charted: tuple[Path, str]
) -> None:
    db, latest = charted
    suite = _charts(browser, f"{server}/suites/{_suite_id(db)}", shots / "suite.png")
    assert len(suite) == 3
    for c in suite:
        check_chart(c)
    assert sorted(d["v"] for d in suite[0]["dots"] if "trc-c0" in d["cls"]) == pytest.approx(
        [2 / 3, 1.0, 1.0]
    )
    eval_run = _charts(browser, f"{server}/evals/{latest}", shots / "eval-run.png")
    assert len(eval_run) == 1
    check_chart(eval_run[0])
    assert len([d for d in eval_run[0]["dots"] if "trc-current" in d["cls"]]) == 2


def test_run_page_waterfall_keeps_its_bars(
    browser: Any, server: str, shots: Path, charted: tuple[Path, str]
) -> None:
    """The waterfall's own .bar rule still styles its bars (and only them)."""
    db, _ = charted
    with open_store(db) as store:
        run_id = store.con.execute("SELECT run_id FROM runs LIMIT 1").fetchall()[0][0]
    page = browser.new_page(viewport={"width": 1360, "height": 900})
    try:
        page.goto(f"{server}/runs/{run_id}")
        page.screenshot(path=str(shots / "run.png"), full_page=True)
        heights = page.locator("table.waterfall .bar").evaluate_all(
            "(els) => els.map((e) => e.getBoundingClientRect().height)"
        )
        assert heights and all(h == pytest.approx(10, abs=0.5) for h in heights)
    finally:
        page.close()


def test_report(browser: Any, shots: Path, charted: tuple[Path, str], tmp_path: Path) -> None:
    db, latest = charted
    out = tmp_path / "report.html"
    tracereplay(db, "report", latest, "-o", str(out))
    charts = _charts(browser, out.as_uri(), shots / "report.png")
    labels = [c["label"] for c in charts]
    assert labels == [
        "pass rate of each eval run of the suite",
        "duration of the agent runs per eval run",
        "tokens per agent run per eval run",
        "production runs and failed runs per day",
        "tool error rate per day",
    ]
    for c in charts:
        check_chart(c)
