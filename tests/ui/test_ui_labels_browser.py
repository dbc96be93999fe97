"""Labelling a run in a real browser (headless Chromium driven by Playwright against
``tracereplay ui`` in a subprocess): fill the run page's label form, see the label listed, then
promote the run and find its corrected answer as the case's expected output."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from headless_chromium import requires_chromium, requires_playwright
from ui_helpers import ui_server

from tracereplay.store import Store

try:
    from playwright.sync_api import Page, expect
except ImportError:  # pragma: no cover - the test extra installs it
    pass

pytestmark = [requires_chromium, requires_playwright, pytest.mark.slow]


def test_label_then_promote_in_the_browser(fresh_db: Path, page: Page) -> None:
    with Store.open(fresh_db) as store:
        run_id = store.con.execute(
            "SELECT run_id FROM runs WHERE query <> '' ORDER BY started_at, run_id LIMIT 1"
        ).fetchall()[0][0]
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    with ui_server(fresh_db) as base:
        page.goto(f"{base}/runs/{run_id}")
        expect(page.locator("#label-list")).to_contain_text("nobody labelled this run yet")
        page.check("#verdict-bad")
        page.fill("#label-author", "dana")
        page.fill("#label-note", "answered for the wrong city")
        page.fill("#label-expected", "Paris: sunny, 21 °C")
        page.locator("#label-submit").click()
        expect(page.locator("#notice")).to_contain_text("labelled bad by dana")
        row = page.locator("#label-list .label-row").first
        expect(row).to_contain_text("latest")
        expect(row).to_contain_text("answered for the wrong city")
        expect(row.locator(".label-expected")).to_have_text("Paris: sunny, 21 °C")
        page.locator("#promote-link").click()
        expect(page.locator("#promote-label")).to_contain_text("answered for the wrong city")
        expect(page.locator("#expected_output")).to_have_value("Paris: sunny, 21 °C")
        page.select_option("#suite", "")
        page.fill("#suite_new", "labelled-in-browser")
        page.locator("#promote-submit").click()
        expect(page.locator("#notice")).to_contain_text("promoted into suite")
        assert re.search(r"/cases/[0-9a-f-]{36}", page.url)
    assert errors == []
    with Store.open(fresh_db) as store:
        rows = store.query_dicts(
            "SELECT c.expected_output, c.source_kind FROM eval_cases c"
            " JOIN eval_suites s USING (suite_id) WHERE s.name = 'labelled-in-browser'"
        )
        assert rows == [{"expected_output": "Paris: sunny, 21 °C", "source_kind": "negative_score"}]
        [label] = store.list_labels(run_id)
        assert (label.verdict, label.author) == ("bad", "dana")
