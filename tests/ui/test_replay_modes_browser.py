"""A fork (``--llm-until``) and tools run live against recorded decisions (``--live-tools``) as a
person sees them in the HTML report and on the UI's eval-run and case pages: headless Chromium
(tests/report/ensure_chromium.sh) driven by Playwright, on the report file and on the real
server (``tracereplay ui`` in a subprocess). The store: tests/query/replay_modes_store.py.

Asserted on what is drawn: the fork line lies below the rounds the recording answered and above
the live ones; each changed tool result shows the recorded and the live result side by side
and their diff, inside its box; the round from which the run is not comparable is said."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from headless_chromium import requires_chromium, requires_playwright, started_browser
from replay_modes_store import ModesStore, modes_store
from sql_pipeline import tracereplay
from ui_helpers import ui_server

from tracereplay.store import Store

try:
    from playwright.sync_api import Locator, Page, expect
except ImportError:  # pragma: no cover - the test extra installs it
    pass

pytestmark = [requires_chromium, requires_playwright, pytest.mark.slow]

FORK_LINE = "fork at LLM call 1: call 1 answered from the recording"
DIVERGED = "LLM call 2: the recording no longer answers this decision"


@pytest.fixture(scope="module")
def modes(tmp_path_factory: pytest.TempPathFactory) -> ModesStore:
    return modes_store(tmp_path_factory)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with started_browser() as b:
        yield b


@pytest.fixture
def page(browser: Any) -> Iterator[Page]:
    """A page at a laptop's width; no console or page error when the test ends."""
    p = browser.new_page(viewport={"width": 1024, "height": 900})
    errors: list[str] = []
    p.on("pageerror", lambda exc: errors.append(str(exc)))
    p.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    yield p
    assert errors == []
    p.close()


@pytest.fixture(scope="module")
def ui(modes: ModesStore) -> Iterator[str]:
    """``tracereplay ui --port 0`` on the store; yields its URL."""
    with ui_server(modes.db) as url:
        yield url


def _report(modes: ModesStore, eval_run_id: str, tmp_path: Path) -> str:
    out = tmp_path / f"{eval_run_id}.html"
    tracereplay(modes.db, "report", eval_run_id, "-o", str(out))
    return out.as_uri()


def _box(loc: Locator) -> dict[str, float]:
    box = loc.bounding_box()
    assert box is not None, "not drawn"
    return box


def assert_fork_line_between_parts(table: Locator) -> None:
    """The fork's line is drawn under every call the recording answered and over every live
    one (at least one of each)."""
    marker = table.locator("tr.marker.fork")
    expect(marker).to_be_visible()
    assert FORK_LINE in " ".join(marker.inner_text().split())
    line = _box(marker)
    rows = table.locator("tbody tr:not(.marker)")
    before = after = 0
    for i in range(rows.count()):
        row = rows.nth(i)
        box = _box(row)
        if row.get_attribute("data-part") == "live":
            assert box["y"] >= line["y"] + line["height"] - 0.5
            after += 1
        elif row.get_attribute("class") != "unused":
            assert box["y"] + box["height"] <= line["y"] + 0.5
            before += 1
    assert before >= 1 and after >= 1


def assert_tool_result_shown(scope: Locator, recorded: str, live: str) -> None:
    """A changed tool result: the recorded and the live result side by side, and their diff
    (the removed and the added line both visible), each inside the call's box."""
    result = scope.locator(".tool-result").first
    expect(result).to_be_visible()
    outer = _box(result)
    rec = _box(result.locator(".recorded-result pre"))
    now = _box(result.locator(".live-result pre"))
    assert rec["x"] + rec["width"] <= now["x"] and abs(rec["y"] - now["y"]) < 1  # side by side
    diff = result.locator("pre.diff")
    expect(diff.locator("span.del", has_text=recorded).first).to_be_visible()
    expect(diff.locator("span.add", has_text=live).first).to_be_visible()
    for box in (rec, now, _box(diff)):
        assert outer["x"] - 0.5 <= box["x"]
        assert box["x"] + box["width"] <= outer["x"] + outer["width"] + 0.5
    assert diff.evaluate("e => e.scrollWidth <= e.clientWidth")  # nothing cut off sideways


def _case_with(page: Page, selector: str) -> Locator:
    cases = page.locator("details.case", has=page.locator(selector))
    assert cases.count() >= 1, f"no case shows {selector}"
    return cases.first


def test_report_draws_the_fork_between_the_recorded_and_the_live_rounds(
    modes: ModesStore, page: Page, tmp_path: Path
) -> None:
    page.goto(_report(modes, modes.fork, tmp_path))
    case = _case_with(page, "tr.marker.fork")
    assert_fork_line_between_parts(case.locator("table.trajectory"))
    expect(case.locator(".fork-note")).to_have_text(FORK_LINE + ", 2 live from call 2")
    drift = case.locator(".live-drift").first  # the live part against the recording
    expect(drift).to_contain_text("(live)")
    # the tools after the fork ran for real, on the changed data: only those are compared
    expect(case.locator(".tools-note")).to_contain_text("ran for real: 0 result(s) as recorded")
    assert_tool_result_shown(case, '"temperature_c": 21', '"temperature_c": 23')


def test_report_shows_each_changed_tool_result_and_where_comparing_stops(
    modes: ModesStore, page: Page, tmp_path: Path
) -> None:
    page.goto(_report(modes, modes.tools, tmp_path))
    case = _case_with(page, ".tool-result")
    assert_tool_result_shown(case, '"temperature_c": 12', '"temperature_c": 14')
    expect(case.locator(".replay-modes .diverged")).to_contain_text(DIVERGED)
    marker = case.locator("tr.marker.diverged")
    expect(marker).to_be_visible()
    assert "not comparable from here" in marker.inner_text()
    assert case.locator(".replay-modes tr.marker.fork").count() == 0  # no fork in this replay


def test_eval_run_page_shows_the_fork_and_the_tool_results(
    modes: ModesStore, ui: str, page: Page
) -> None:
    page.goto(f"{ui}/evals/{modes.fork}")
    case = _case_with(page, "tr.marker.fork")
    assert_fork_line_between_parts(case.locator("table.trajectory"))
    expect(case.locator(".fork-note")).to_contain_text(FORK_LINE)
    assert_tool_result_shown(case, '"temperature_c": 21', '"temperature_c": 23')

    page.goto(f"{ui}/evals/{modes.tools}")
    case = _case_with(page, ".tool-result")
    assert_tool_result_shown(case, '"temperature_c": 12', '"temperature_c": 14')
    expect(case.locator("tr.marker.diverged")).to_contain_text(DIVERGED)


def test_case_page_shows_its_latest_results_tool_drift(
    modes: ModesStore, ui: str, page: Page
) -> None:
    with Store.open(modes.db) as store:
        [row] = store.query_dicts(
            "SELECT case_id FROM case_results WHERE eval_run_id = ?"
            " AND json_array_length(drift, '$.tool_result_drift') > 0 LIMIT 1",
            [modes.tools],
        )
    page.goto(f"{ui}/cases/{row['case_id']}")
    latest = page.locator("#latest-result")
    assert_tool_result_shown(latest, '"temperature_c": 12', '"temperature_c": 14')
    expect(latest.locator("p.diverged")).to_contain_text(DIVERGED)
