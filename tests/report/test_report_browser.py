"""The report's interactive parts as a person uses them: headless Chromium (Debian's package,
see ensure_chromium.sh) driven by Playwright on the written file. Opening a case shows its
details from the page's JSON; search and the check filter narrow the list; the page's
Content-Security-Policy lets its one script run and nothing else (no console errors)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from headless_chromium import requires_chromium, requires_playwright, started_browser
from sql_pipeline import tracereplay

from tracereplay.store import Store

try:
    from playwright.sync_api import Page, expect
except ImportError:  # pragma: no cover - the test extra installs it
    pass

pytestmark = [requires_chromium, requires_playwright]


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with started_browser() as b:
        yield b


@pytest.fixture
def open_report(browser, tmp_path: Path):  # noqa: ANN001, ANN201 - Playwright's Browser
    """``open_report(db, label)``: the report of that eval run in a page; after the test, no
    console error and no page error (a CSP violation is a console error)."""
    pages: list[tuple[Page, list[str]]] = []

    def _open(db: Path, label: str) -> Page:
        with Store.open(db) as store:
            [row] = store.query_dicts("SELECT eval_run_id FROM eval_runs WHERE label = ?", [label])
        out = tmp_path / f"{label}.html"
        tracereplay(db, "report", str(row["eval_run_id"]), "-o", str(out))
        page = browser.new_page(viewport={"width": 1300, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on(
            "console", lambda m: errors.append(m.text) if m.type in ("error", "warning") else None
        )
        page.goto(out.as_uri())
        pages.append((page, errors))
        return page

    yield _open
    for page, errors in pages:
        assert errors == []
        page.close()


def test_opening_a_case_shows_its_details(pipeline_db: Path, open_report) -> None:  # noqa: ANN001
    page = open_report(pipeline_db, "v1")  # every case passed: all closed, details on demand
    expect(page.locator("#case-tools")).to_be_visible()  # the script ran (CSP allowed it)
    cases = page.locator("details.case")
    assert cases.count() == 6 and page.locator("details.case[open]").count() == 0
    assert page.locator("details.case table").count() == 0
    case = cases.nth(3)
    case.locator("> summary").click()
    body = case.locator(".case-body")
    expect(body.locator("table.checks")).to_be_visible()
    assert body.locator("pre.query").inner_text().startswith("What")
    assert body.locator("table.trajectory tbody tr").count() == 2
    assert page.locator("details.case .case-body").count() == 1  # only the opened one
    case.locator("> summary").click()  # closed and opened again: shown once
    case.locator("> summary").click()
    assert case.locator(".case-body").count() == 1


def test_search_and_the_check_filter(pipeline_db: Path, open_report) -> None:  # noqa: ANN001
    page = open_report(pipeline_db, "v3")
    shown = page.locator("#case-shown")
    expect(shown).to_have_text("6 of 6 cases shown")
    visible = page.locator("details.case:visible")

    # by case id (a prefix, as the CLI shows it)
    with Store.open(pipeline_db) as store:
        failing = store.query_dicts(
            "SELECT check_name, count(DISTINCT case_id) AS n FROM score_history"
            " WHERE label = 'v3' AND NOT passed GROUP BY check_name ORDER BY n DESC, check_name"
        )
        [one] = store.query_dicts("SELECT case_id FROM eval_cases WHERE seq = 4")
    page.fill("#case-search", one["case_id"][:8])
    expect(shown).to_have_text("1 of 6 cases shown")
    assert visible.count() == 1 and "#4" in visible.first.locator("> summary").inner_text()

    # by what is inside a case (the replayed response's markup, searched as text)
    page.fill("#case-search", "")  # from all cases, so the next count is the new search's own
    expect(shown).to_have_text("6 of 6 cases shown")
    with Store.open(pipeline_db) as store:  # the cases with a repetition that answered markup
        [marked] = store.query_dicts(
            "SELECT count(DISTINCT case_id) AS n FROM case_results JOIN eval_runs"
            " USING (eval_run_id) WHERE label = 'v3' AND response LIKE '%document.title=''pwned''%'"
        )
    page.fill("#case-search", "document.title='pwned'")
    expect(shown).to_have_text(f"{marked['n']} of 6 cases shown")
    assert marked["n"] > 0 and visible.count() == marked["n"]
    page.fill("#case-search", "")
    expect(shown).to_have_text("6 of 6 cases shown")

    # by a failing check: the options name each check with the cases it failed in
    options = page.locator("#case-check option")
    assert options.all_inner_texts() == ["any check"] + [
        f"{r['check_name']} failed ({r['n']})" for r in failing
    ]
    page.select_option(
        "#case-check", label=f"{failing[-1]['check_name']} failed ({failing[-1]['n']})"
    )
    expect(shown).to_have_text(f"{failing[-1]['n']} of 6 cases shown")
    assert visible.count() == failing[-1]["n"]

    # combined with a status filter (radio buttons the stylesheet reads)
    page.locator("label[for=f-flaky]").click()
    flaky = page.locator("details.case[data-flaky]:visible").count()
    assert visible.count() == flaky <= failing[-1]["n"]
    expect(shown).to_have_text(f"{flaky} of 6 cases shown")


def test_the_charts(pipeline_db: Path, open_report) -> None:  # noqa: ANN001
    page = open_report(pipeline_db, "v3")
    # latency and tokens per eval run: a dot per eval run and series, the current one larger
    metrics = page.locator("#metrics svg.metric")
    assert metrics.count() == 2
    assert metrics.nth(0).locator("circle").count() == 6  # median and p95 of 3 eval runs
    assert metrics.nth(1).locator("circle.trc-current").count() == 1
    tip = metrics.nth(1).locator("circle").first.locator("title").text_content()
    assert tip is not None and tip.startswith("tokens ") and "· run 1 ·" in tip

    # the grid: every case moved (passed in v1 and v2, not in v3); flaky ones ringed in v3
    rows = page.locator("#flaky svg.grid g.row")
    assert rows.count() == 6
    assert rows.first.locator("rect").count() == 3
    assert page.locator("#flaky rect.cell.flaky").count() == 5
    assert page.locator("#flaky rect.cell.ERROR").count() == 0  # #2 drifted: FAILED
    rows.first.locator("rect").last.click()  # a row links to its case
    assert page.url.split("#", 1)[1] == "case-" + rows.first.get_attribute("data-case")

    # production: live runs per day, tool errors per day, the tools table
    prod = page.locator("#production")
    with Store.open(pipeline_db) as store:
        [live] = store.query_dicts(
            "SELECT count(*) AS n FROM runs WHERE kind = 'live' AND parent_run_id IS NULL"
        )
    days = prod.locator("svg.daily").first
    assert days.locator("text.trc-x").count() >= 4  # 30 days, labels thinned to fit
    tips = days.locator("rect.trc-bar title").all_text_contents()  # a bar per day with runs
    assert len(tips) == 1 and tips[0].endswith(f"· {live['n']} runs · 0 failed")
    error_dot = prod.locator("svg.daily").nth(1).locator("circle")
    assert error_dot.count() == 1
    assert error_dot.locator("title").text_content().endswith("4 of 10 tool calls failed")
    assert prod.locator("tr[data-tool=get_population] td").all_inner_texts() == [
        "get_population", "5", "4", "80.0%"
    ]  # fmt: skip
