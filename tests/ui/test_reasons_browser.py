"""A failed case's reasons in the UI, read in Chromium: the whole text of each check's reason
is rendered (nothing cut with an ellipsis), wrapped inside the page's width."""

from __future__ import annotations

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


#: the page the ``page`` fixture opens (tests/ui/conftest.py)
VIEWPORT = {"width": 1024, "height": 800}


def test_the_eval_and_diff_pages_show_every_reason_whole(tmp_path: Path, page: Page) -> None:
    cwd = calculator_store(tmp_path)
    for agent in ("calc:agent", "calc:renamed"):
        calc_cli(cwd, "-m", "tracereplay", "eval", "calc", "--agent", agent)
    ids = calc_cli(cwd, "-m", "tracereplay", "sql",
                   "SELECT eval_run_id FROM eval_runs ORDER BY started_at", "--format", "csv")  # fmt: skip
    first, second = ids.stdout.split()[1:]
    with ui_server(cwd / "tracereplay.duckdb") as base:
        for url in (f"{base}/evals/{second}", f"{base}/diff?a={first}&b={second}"):
            page.goto(url)
            body = page.inner_text("body")
            assert "…" not in body, url
            assert "a renamed x; b renamed y" in " ".join(body.split()), url
            reason = page.locator(".reason").first
            box = reason.bounding_box()
            assert box is not None and box["x"] + box["width"] <= 1024, url
            text = " ".join(reason.inner_text().split())
            assert "toolCallArgsMatch" in text and text.endswith("b renamed y"), text
