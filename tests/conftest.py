"""Suite-wide: the slow tests are handed out first.

pytest-xdist hands tests to its workers in collection order, so a slow test collected late keeps
one worker busy while the others have nothing left to do. The tests marked ``slow`` (a
framework's venv, a wheel install, a browser, a whole demo) are moved to the front, each group
keeping its own order; with ``--dist loadfile`` (``make test``: a file goes to one worker
whole) the files holding slow tests are handed out first, so the suite ends on short files, on
every worker at once.
"""

from __future__ import annotations

import pytest

# every command's open_store drains the spool: the CLI registers the drain (ingest/on_open.py)
# before opening the store; tests that call open_store themselves get it registered here
import tracereplay.ingest  # noqa: F401


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
