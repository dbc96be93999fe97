"""Monitor pages in a real browser (headless Chromium, Playwright, ``tracereplay ui`` in a
subprocess): the monitors list, a monitor's page (pass rate, chart, worst checks, failing runs),
one click promoting a failing run into a suite, and the monitors on the Production page."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from headless_chromium import requires_chromium, requires_playwright
from sql_pipeline import tracereplay
from ui_helpers import ui_server

from tracereplay.store import Store
from tracereplay.ui.pages import pct

try:
    from playwright.sync_api import Page, expect
except ImportError:  # pragma: no cover - the test extra installs it
    pass

pytestmark = [requires_chromium, requires_playwright, pytest.mark.slow]


@pytest.fixture
def judged_db(fresh_db: Path, tmp_path: Path) -> Path:
    checks = tmp_path / "m.yaml"
    checks.write_text("checks:\n  - kind: status\n  - kind: noToolErrors\n")
    tracereplay(fresh_db, "monitor", "create", "prod", "--checks", str(checks))
    tracereplay(fresh_db, "monitor", "run")
    return fresh_db


@pytest.fixture
def server(judged_db: Path) -> Iterator[str]:
    with ui_server(judged_db) as url:
        yield url


def _one(db: Path, sql: str) -> object:
    with Store.open(db) as store:
        return store.con.execute(sql).fetchall()[0][0]


def test_a_monitor_page_shows_its_pass_rate_and_promotes_a_failing_run(
    server: str, judged_db: Path, page: Page
) -> None:
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    runs = _one(judged_db, "SELECT count(DISTINCT run_id) FROM monitor_results")
    failing = _one(
        judged_db, "SELECT count(DISTINCT run_id) FROM monitor_results WHERE status = 'FAILED'"
    )
    assert runs and failing  # the fixtures hold failed runs and failing tools
    page.goto(server + "/monitors?since=")
    row = page.locator('#monitors-table tr[data-monitor="prod"]')
    expect(row).to_contain_text(f"{runs}")
    page.locator("header nav a", has_text="Monitors").click()
    row.locator("a").click()
    expect(page.locator("h1")).to_have_text("Monitor prod")
    rate = (runs - failing) / runs  # no check of these two can be an ERROR
    expect(page.locator("#monitor-pass-rate")).to_have_text(pct(rate))
    assert page.locator("#failing-table tbody tr[data-run]").count() == failing
    expect(page.locator("#monitor-chart svg.trc")).to_be_visible()
    checks = page.locator("#checks-table tbody tr")
    assert checks.count() == 2
    box = page.locator("#failing-table").bounding_box()
    assert box is not None and box["width"] > 300 and box["height"] > 20
    first = page.locator("#failing-table tbody tr[data-run]").first
    run_id = first.get_attribute("data-run")
    first.locator("button", has_text="Promote to monitor-prod").click()
    expect(page.locator("#notice")).to_contain_text("promoted into suite 'monitor-prod'")
    assert (
        _one(
            judged_db,
            f"SELECT count(*) FROM eval_cases WHERE source_run_id = '{run_id}'",
        )
        == 1
    )
    page.goto(server + "/dashboard?days=3660")
    monitors = page.locator("#dashboard-monitors")
    expect(monitors).to_be_visible()
    expect(monitors.locator("tbody tr").first).to_contain_text("prod")
    assert not errors, errors
