"""Headless Chromium for the browser tests (the report, the UI): Debian's package, installed by
tests/report/ensure_chromium.sh, driven by Playwright or run as a command.

``requires_chromium`` / ``requires_playwright`` skip a module when either is missing;
``started_browser()`` starts the browser as every browser test does, and closes it."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

try:
    from playwright.sync_api import sync_playwright
except ImportError:  # pragma: no cover - the test extra installs it
    sync_playwright = None  # type: ignore[assignment]

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

requires_chromium = pytest.mark.skipif(
    CHROMIUM is None,
    reason="chromium is not installed (tests/report/ensure_chromium.sh installs it when run "
    "as root with apt-get; make test calls it)",
)
requires_playwright = pytest.mark.skipif(
    sync_playwright is None, reason="playwright is not installed (pip install -e '.[test]')"
)

#: a browser with nothing of its own going on: no network of its own, no first-run pages
ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip


@contextmanager
def started_browser() -> Iterator[Any]:
    """Chromium started by Playwright (a Playwright ``Browser``), closed when the block ends."""
    assert CHROMIUM is not None and sync_playwright is not None
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield browser
        finally:
            browser.close()
