"""The main path in a real browser: headless Chromium (Debian's package, see
tests/report/ensure_chromium.sh) driven by Playwright against the real server
(``tracereplay ui`` in a subprocess): open the runs, filter, search, open a run, promote it,
run an eval from the CLI, see the eval run and the trend update.

Set ``TRACEREPLAY_UI_SCREENSHOTS=DIR`` to save the screenshots docs/ui.md shows.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from headless_chromium import requires_chromium, requires_playwright
from sql_pipeline import tracereplay
from ui_helpers import ui_server

from tracereplay.store import Store

try:
    from playwright.sync_api import Page, expect
except ImportError:  # pragma: no cover - the test extra installs it
    pass

pytestmark = [requires_chromium, requires_playwright, pytest.mark.slow]
SHOTS = os.environ.get("TRACEREPLAY_UI_SCREENSHOTS")


@pytest.fixture
def server(fresh_db: Path) -> Iterator[tuple[str, Path]]:
    """``tracereplay ui --port 0`` on a store of ingested runs; yields its URL and the store."""
    with ui_server(fresh_db) as url:
        yield url, fresh_db


def _count(db: Path, sql: str) -> int:
    with Store.open(db) as store:
        return int(store.con.execute(sql).fetchall()[0][0])


def _shot(page: Page, name: str, full: bool = False) -> None:
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SHOTS) / f"{name}.png"), full_page=full)


def _total(page: Page) -> int:
    return int(re.sub(r"\D", "", page.locator("#total").inner_text()))


def test_main_path(server: tuple[str, Path], page: Page) -> None:
    base, db = server
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))

    # open the runs
    page.goto(base + "/")
    expect(page).to_have_url(re.compile(r"/runs$"))
    runs = _count(db, "SELECT count(*) FROM runs")
    assert _total(page) == runs
    assert page.locator("#runs-table tbody tr[data-run-id]").count() == runs
    _shot(page, "runs")

    # filter: a service from the facet list
    service = page.locator('[data-facet="service"] a').first
    name = service.get_attribute("data-value")
    service.click()
    expect(page).to_have_url(re.compile(r"service="))
    assert _total(page) == _count(db, f"SELECT count(*) FROM runs WHERE service_name = '{name}'")
    page.locator("#clear-filters").click()
    assert _total(page) == runs

    # search
    query = page.locator("#runs-table td.query a").first.inner_text()
    word = max(query.split(), key=len).strip("?.,!")
    page.fill("#q", word.lower())
    page.locator("#search-form button").click()
    expect(page).to_have_url(re.compile(r"q="))
    found = _total(page)
    assert (
        0
        < found
        == _count(
            db,
            f"SELECT count(*) FROM runs WHERE contains(lower(query), '{word.lower()}') OR "
            f"contains(lower(response), '{word.lower()}') OR contains(lower(error), '{word.lower()}')",
        )
    )

    # open a run (one with tool calls)
    page.goto(base + "/runs?sort=tools")
    page.locator("#runs-table a.run-link").first.click()
    expect(page.locator("#trajectory")).to_be_visible()
    assert page.locator(".round").count() >= 1
    assert page.locator("#spans .track .bar").count() >= 1
    run_id = page.url.rsplit("/", 1)[1]
    _shot(page, "run", full=True)
    # the one-run replay command, for the reader to copy
    command = page.locator("#replay-command code").first
    expect(command).to_be_visible()
    assert command.inner_text() == f"tracereplay replay {run_id} --agent MODULE:ATTR --llm recorded"

    # promote it into a new suite, with a tag
    page.locator("#promote-link").click()
    page.select_option("#suite", "")
    page.fill("#suite_new", "browser-suite")
    page.fill("#tags", "from-the-browser")
    _shot(page, "promote", full=True)
    page.locator("#promote-submit").click()
    expect(page.locator("#notice")).to_contain_text("promoted into suite 'browser-suite'")
    case_id = page.locator("#case-id").inner_text()
    assert (
        _count(
            db,
            f"SELECT count(*) FROM eval_cases WHERE case_id = '{case_id}' AND source_run_id = "
            f"'{run_id}' AND tags::VARCHAR LIKE '%from-the-browser%'",
        )
        == 1
    )

    # the suite has not been evaluated yet
    page.locator("header nav a", has_text="Suites").click()
    page.locator('[data-suite="browser-suite"] a').first.click()
    expect(page.locator("#no-trend")).to_be_visible()
    suite_url = page.url

    # an eval from the CLI while the server runs; the page shows it after a reload
    proc = tracereplay(db, "eval", "browser-suite", "--label", "first")
    assert proc.returncode == 0, proc.stderr
    page.goto(suite_url)
    assert page.locator("#eval-runs tbody tr").count() == 1
    expect(page.locator("#trend-charts svg.trc")).to_have_count(3)
    assert page.locator("#trend-charts svg.trc").first.locator("circle").count() == 2

    proc = tracereplay(db, "eval", "browser-suite", "--label", "second")
    assert proc.returncode == 0, proc.stderr
    page.reload()
    assert page.locator("#eval-runs tbody tr").count() == 2
    # the trend now has a line through both eval runs (pass rate and score)
    assert page.locator("#trend-charts svg.trc").first.locator("polyline").count() == 2
    _shot(page, "suite", full=True)

    # the eval run's page: the case passed, with its checks and trajectory
    page.locator("#eval-runs tbody tr").first.locator("a").first.click()
    expect(page.locator("h1")).to_contain_text("second")
    expect(page.locator("details.case .badge").first).to_have_text("PASSED")
    page.locator("details.case summary").first.click()
    expect(page.locator("table.checks").first).to_be_visible()
    _shot(page, "eval-run", full=True)

    # and the run links to its case and the eval runs that scored it
    page.goto(f"{base}/runs/{run_id}")
    expect(page.locator("#links")).to_contain_text("case #0 of browser-suite")
    expect(page.locator("#links")).to_contain_text("browser-suite second")

    if SHOTS:
        page.goto(base + "/dashboard")
        _shot(page, "dashboard", full=True)
        page.goto(base + "/sql")
        page.fill("#sql", "SELECT agent_name, status, count(*) AS runs FROM runs GROUP BY ALL")
        page.locator("#sql-run").click()
        _shot(page, "sql")
    assert errors == []


def test_a_search_matching_many_runs_counts_its_newest(tmp_path: Path, page: Page) -> None:
    """A search matching more than ``SEARCH_COUNTED`` runs: the total reads "10,000+ runs",
    a note under it says the counts are of the newest matches, and the pager goes on past the
    counted pages (as far as there are runs)."""
    from tracereplay.ui.queries.runs import SEARCH_COUNTED

    db = tmp_path / "many.duckdb"
    with Store.open(db) as store:
        store.con.execute(
            "INSERT INTO runs (run_id, trace_id, root_span_id, kind, status, query, models,"
            " started_at) SELECT 'r' || i, 't' || i, 's', 'live', 'success',"
            " CASE WHEN i % 4 = 0 THEN 'weather in Tokyo' ELSE 'a refund' END, '[]',"
            " CAST('2026-03-01' AS TIMESTAMPTZ) + i * INTERVAL 1 MINUTE"
            f" FROM range({SEARCH_COUNTED * 2 + 200}) AS g(i)"
        )
    with ui_server(db) as base:
        page.goto(base + "/runs?q=refund&size=500")
        total = page.locator("#total")
        expect(total).to_have_text(f"{SEARCH_COUNTED:,}+ runs")
        note = page.locator("#counts-note")
        expect(note).to_be_visible()
        assert f"more than {SEARCH_COUNTED:,} runs" in note.inner_text()
        heading, shown = total.bounding_box(), note.bounding_box()
        assert heading and shown and shown["y"] >= heading["y"] + heading["height"]
        status = page.locator('[data-facet="status"] a[data-value="success"] .count')
        assert status.inner_text() == f"{SEARCH_COUNTED:,}"
        pages = SEARCH_COUNTED // 500
        expect(page.locator(".pager span")).to_have_text(f"page 1 of {pages}+")
        # past the counted pages, the list goes on while runs match
        page.goto(base + f"/runs?q=refund&size=500&page={pages}")
        page.locator("#next-page").click()
        expect(page.locator(".pager span")).to_contain_text(f"page {pages + 1} of")
        assert page.locator("#runs-table tbody tr[data-run-id]").count() == 500
        # a search matching fewer runs is counted in full, without a note
        page.goto(base + "/runs?q=tokyo")
        expect(page.locator("#total")).to_have_text(f"{(SEARCH_COUNTED * 2 + 200) // 4:,} runs")
        expect(page.locator("#counts-note")).to_have_count(0)
