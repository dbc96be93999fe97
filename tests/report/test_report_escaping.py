"""Whatever text a run holds, the report's markup stays the report's: every field is escaped."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from report_dom import parse

from tracereplay.evaluate.diff import CaseDiff
from tracereplay.models import Status, ToolCallRecord
from tracereplay.report import html as html_module
from tracereplay.report.data import (
    CaseView,
    CheckRow,
    RepetitionView,
    ReportData,
    RunStats,
    TrendPoint,
)
from tracereplay.report.html import INLINE_CASES, render_report
from tracereplay.report.script import SCRIPT, script_hash
from tracereplay.report.svg import trend_svg
from tracereplay.report.trajectory import align
from tracereplay.scoring.outcomes import ArgumentDrift, EvalRunRecord, ReplayReport

T0 = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)
ALLOWED_TAGS = {
    "#document", "html", "head", "meta", "title", "style", "body", "header", "h1", "h2", "h3",
    "p", "span", "code", "strong", "section", "div", "a", "svg", "line", "text", "polyline",
    "circle", "table", "thead", "tbody", "tr", "th", "td", "details", "summary", "pre", "ul",
    "input", "label", "select", "option", "script", "b", "small", "figure", "figcaption", "rect",
    "g", "li", "mark", "footer",
}  # fmt: skip


def report_with(text: str) -> ReportData:
    """A report whose every stored text field holds ``text``."""
    suite = str(uuid.UUID(int=1))
    run = EvalRunRecord(
        eval_run_id=str(uuid.UUID(int=2)), suite_id=suite, suite_name=text or "s", mode="replay",
        agent=text, label=text, started_at=T0, finished_at=T0 + timedelta(seconds=3),
        git_commit=text, status="completed",
    )  # fmt: skip
    previous = run.model_copy(
        update={"eval_run_id": str(uuid.UUID(int=3)), "started_at": T0 - timedelta(days=1)}
    )
    recorded = [
        ToolCallRecord(round=1, tool_name=text, arguments={text: text}, result=text, error=text)
    ]
    replayed = [ToolCallRecord(round=1, tool_name=text, arguments={text: text + "!"}, result=text)]
    report = ReplayReport(
        drift=[ArgumentDrift(tool=text, arguments={text: text + "!"}, recorded_position=0,
                             recorded_arguments={text: text}, differences=[text], answered=True)]
    )  # fmt: skip
    rep = RepetitionView(
        repetition=0, status="FAILED", score=0.5, reason=text, response=text,
        checks=[CheckRow(name=text, kind=text, status="FAILED", passed=False, score=0.0,
                         explanation=text)],
        steps=align(recorded, replayed, report), replay=report,
    )  # fmt: skip
    case_id = str(uuid.UUID(int=4))
    return ReportData(
        run=run,
        stats=RunStats(cases=1, failed=1, pass_rate=0.0, aggregate_score=0.5, checks=1),
        trend=[TrendPoint(eval_run_id=run.eval_run_id, run_number=1, label=text, git_commit=text,
                          started_at=T0, run_status="completed", cases=1, passed=0,
                          pass_rate=0.0, aggregate_score=0.5, current=True)],
        previous=previous,
        diff_counts={"Regressed": 1},
        changes=[CaseDiff(case_id=case_id, seq=0, query=text, bucket="Regressed",
                          status_a=Status.PASSED, status_b=Status.FAILED)],
        cases=[CaseView(case_id=case_id, seq=0, query=text, expected_output=text, status="FAILED",
                        score=0.5, reason=text, source_run_id=text, bucket="Regressed",
                        repetitions=[rep, rep.model_copy(update={"repetition": 1})])],
        generated_at=T0,
    )  # fmt: skip


HOSTILE = st.one_of(
    st.sampled_from([
        "<script>alert(1)</script>", "</pre><script>x()</script>", '"><img src=x onerror=alert(1)>',
        "</title></head><body onload=alert(1)>", "<!-- comment", "]]><svg onload=alert(1)>",
        "&amp; &lt;b&gt;", "<style>body{display:none}</style>", "'single' \"double\" `back`",
    ]),
    st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=60),
)  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(HOSTILE)
def test_no_stored_text_becomes_markup(text: str) -> None:
    dom = parse(render_report(report_with(text)))
    tags = {n.tag for n in dom.iter()}
    assert tags <= ALLOWED_TAGS, tags - ALLOWED_TAGS
    assert len(dom.find_all("style")) == 1
    for node in dom.iter():  # no attribute but the ones the report writes
        assert not any(k.startswith("on") for k in node.attrs), node
    responses = [p.text for p in dom.find_all("pre", "response")]
    assert responses == [text, text]
    assert dom.find("pre", "query").text == text
    scripts = dom.find_all("script")
    assert [s.attrs for s in scripts] == [{}]  # the report's own; the case is written open


@settings(max_examples=40, deadline=None)
@given(HOSTILE)
def test_details_shown_on_demand_are_escaped_too(text: str) -> None:
    """A passed case's details travel as JSON inside the page: the block cannot be ended or
    turned into a comment by stored text, and the markup it holds escapes every text."""
    data = report_with(text)
    data.cases[0].status = "PASSED"
    data.cases.append(data.cases[0].model_copy(update={"case_id": str(uuid.UUID(int=5))}))
    html = render_report(data)
    start = html.index('<script type="application/json" id="case-details">')
    block = html[html.index(">", start) + 1 : html.index("</script>", start)]
    assert "</" not in block and "<!" not in block
    bodies = json.loads(block)
    assert len(bodies) == 2
    for body in bodies:
        dom = parse(body)
        assert {n.tag for n in dom.iter()} <= ALLOWED_TAGS - {"script"}
        assert [p.text for p in dom.find_all("pre", "response")] == [text, text]


def test_the_page_allows_its_own_script_only() -> None:
    html = render_report(report_with("x"))
    assert (
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        f"style-src 'unsafe-inline'; img-src data:; script-src {script_hash()}\">"
    ) in html
    assert html.count("<script>") == 1 and f"<script>{SCRIPT}</script>" in html


def test_a_big_suite_stays_under_the_page_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """Cases that did not pass come first, the first INLINE_CASES written open; the rest have
    their details on demand while the page has room, then none (and a note says so)."""
    base = report_with("a response " * 40)
    rep = base.cases[0].repetitions[0]
    cases = [
        base.cases[0].model_copy(update={
            "case_id": str(uuid.UUID(int=100 + i)), "seq": i, "bucket": None,
            "status": "FAILED" if i % 10 == 3 else "PASSED",
            "repetitions": [rep.model_copy(update={"status": "PASSED" if i % 10 != 3 else "FAILED"})],
        })
        for i in range(400)
    ]  # fmt: skip
    data = base.model_copy(update={"cases": cases})
    full = render_report(data)
    assert full.count(" data-none") == 0
    monkeypatch.setattr(html_module, "PAGE_BUDGET", len(full.encode()) // 2)
    page = render_report(data)
    assert len(page.encode()) <= len(full.encode()) // 2
    dom = parse(page)
    shown = dom.find_all("details", "case")
    assert [c.attrs["data-status"] for c in shown[:40]] == ["FAILED"] * 40  # failing first
    assert sum("open" in c.attrs for c in shown) == INLINE_CASES
    lazy = [c for c in shown if "data-i" in c.attrs]
    none = [c for c in shown if "data-none" in c.attrs]
    assert lazy and none and len(lazy) + len(none) + INLINE_CASES == 400
    assert all(c.attrs["data-status"] == "FAILED" for c in lazy[: 40 - INLINE_CASES])
    assert (
        f"{len(none)} cases further down the list are listed without details"
        in dom.find("p", id="left-out").text
    )


def test_the_trend_axis_thins_its_labels() -> None:
    points = [
        TrendPoint(eval_run_id=f"{i:08x}", run_number=i + 1, started_at=T0 + timedelta(hours=i),
                   run_status="completed", cases=10, passed=i % 10, pass_rate=(i % 10) / 10,
                   aggregate_score=None, current=i == 39)
        for i in range(40)
    ]  # fmt: skip
    svg = parse(trend_svg(points)).find("svg")
    assert len(svg.find_all("circle")) == 40
    labels = [t.text for t in svg.find_all("text") if t.text.startswith("#")]
    # labels that fit side by side (tests/ui/test_charts_browser.py measures them), the last
    # and the current run's among them
    assert 5 <= len(labels) <= 20 and labels[-1] == "#40"
    assert len(svg.find_all("polyline")) == 1  # no aggregate score known: no score line
