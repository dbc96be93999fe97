"""Headless Chromium for the browser tests (the report, the UI): Debian's package, installed by
tests/report/ensure_chromium.sh, driven by Playwright or run as a command.

``requires_chromium`` / ``requires_playwright`` skip a module when either is missing;
``launch(pw)`` starts the browser as every browser test does."""

from __future__ import annotations

import shutil
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


def launch(pw: Any) -> Any:
    """Chromium started by Playwright ``pw`` (a Playwright ``Browser``)."""
    assert CHROMIUM is not None
    return pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
