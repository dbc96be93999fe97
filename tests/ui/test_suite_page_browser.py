"""The suite page read in Chromium as a user reads it: the Mode column says where the LLM
answers came from, changes are signed percentage points, an eval run that could not be carried
out is a gap in the token and latency charts (not a drop to 0), tokens read in one format, the
eval run page's breadcrumb names it as its title does, and an empty response reads "(empty)"."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from calculator_store import calc_cli, calculator_store
from headless_chromium import requires_chromium, requires_playwright
from ui_helpers import ui_server

try:
    from playwright.sync_api import Page
except ImportError:  # pragma: no cover - the test extra installs it
    pass

pytestmark = [requires_chromium, requires_playwright, pytest.mark.slow]


def _eval(cwd: Path, *args: str) -> None:
    calc_cli(cwd, "-m", "tracereplay", "eval", "calc", *args)


def test_the_suite_page_says_each_eval_runs_settings_and_changes(
    tmp_path: Path, page: Page
) -> None:
    cwd = calculator_store(tmp_path)
    _eval(cwd)  # recorded mode
    _eval(cwd, "--agent", "calc:agent")  # replay, tools recorded, no LLM at all
    _eval(cwd, "--agent", "calc:slow", "--timeout", "0.5")  # every case an ERROR
    _eval(cwd, "--agent", "calc:silent", "--llm", "recorded", "--llm-match", "strict")
    ids = calc_cli(cwd, "-m", "tracereplay", "sql",
                   "SELECT suite_id FROM eval_suites", "--format", "csv")  # fmt: skip
    suite_id = ids.stdout.split()[1]
    with ui_server(cwd / "tracereplay.duckdb") as base:
        page.goto(f"{base}/suites/{suite_id}")
        rows = page.locator("#eval-runs tbody tr")
        assert rows.count() == 4
        cells = [[c.strip() for c in r.split("\t")] for r in rows.all_inner_texts()]
        modes = [row[5] for row in cells]  # newest first
        assert modes == [
            "replay · LLM recorded (strict)",
            "replay · LLM live",
            "replay · LLM live",
            "recorded",
        ], cells
        changes = [row[9] for row in cells]
        assert changes[1] == "-100.0 pts" and changes[0] == "+0.0 pts", cells
        assert all(c == "" or re.fullmatch(r"[+-]\d+\.\d pts", c) for c in changes), cells
        tokens = [row[12] for row in cells]
        assert tokens[1] == "–", cells  # the errored eval run has no runs scored
        # the latency chart has no dot for the errored eval run: a gap
        latency = page.locator("#trend-charts figure").nth(1)
        assert latency.locator("circle").count() == 3
        # the eval run page: breadcrumb as the title, an empty response says so
        page.locator("#eval-runs tbody tr").first.locator("a").first.click()
        crumb = page.locator(".crumbs").inner_text()
        title = page.locator("h1").inner_text()
        assert crumb.split("›")[-1].strip() == title.split("·")[-1].strip(), (crumb, title)
        assert "(empty)" in page.locator("pre.response").first.inner_text()
