"""The report as a browser shows it: rendered by headless Chromium (Debian's chromium package,
see ensure_chromium.sh), then asserted on the DOM the browser built."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from headless_chromium import CHROMIUM, requires_chromium
from report_dom import Node, parse
from sql_pipeline import tracereplay

from tracereplay.report.script import script_hash
from tracereplay.store import Store

pytestmark = requires_chromium

HOSTILE_TEXT = (
    "<script>document.title='pwned'</script><img src=x onerror=\"document.title='pwned'\">"
)


def render_in_chromium(page: Path, profile: Path, fragment: str = "") -> str:
    """The DOM after Chromium loaded ``page`` (no network, a throw-away profile), its script
    run (``fragment``: ``#case-ID`` opens that case)."""
    assert CHROMIUM is not None
    proc = subprocess.run(
        [
            CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
            "--no-first-run", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--disable-dev-shm-usage", f"--user-data-dir={profile}",
            "--dump-dom", page.as_uri() + fragment,
        ],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "<body" in proc.stdout, proc.stderr[-2000:]
    return proc.stdout


def _eval_run(db: Path, label: str) -> str:
    with Store.open(db) as store:
        [row] = store.query_dicts("SELECT eval_run_id FROM eval_runs WHERE label = ?", [label])
    return str(row["eval_run_id"])


@pytest.fixture(scope="module")
def replay_dom(pipeline_db: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Node, str]:
    out = tmp_path_factory.mktemp("report") / "report.html"
    proc = tracereplay(pipeline_db, "report", "-o", str(out))  # the latest: v3, replay
    assert proc.returncode == 0, proc.stderr
    assert "eval run" in proc.stdout and "0/6 passed" in proc.stdout
    raw = out.read_text(encoding="utf-8")
    dom = render_in_chromium(out, tmp_path_factory.mktemp("chromium-profile"))
    return parse(dom), raw


def test_the_file_is_self_contained(replay_dom: tuple[Node, str]) -> None:
    dom, raw = replay_dom
    for node in dom.iter():
        for attr in ("src", "href", "srcset", "data"):
            value = node.attrs.get(attr, "")
            assert not value or value.startswith("#"), (
                f"<{node.tag} {attr}={value}> loads something"
            )
    assert not dom.find_all("link") and not dom.find_all("img")
    assert "@import" not in raw and "url(" not in raw
    assert len(dom.find_all("style")) == 1
    # one script, the report's own, allowed by its hash; anything else is data
    code = [s for s in dom.find_all("script") if s.attrs.get("type") != "application/json"]
    assert len(code) == 1 and not code[0].attrs
    csp = dom.find("meta", http_equiv="Content-Security-Policy").attrs["content"]
    assert csp.startswith("default-src 'none';") and f"script-src {script_hash()}" in csp
    assert script_hash(code[0].text) == script_hash()


def test_markup_in_a_response_is_shown_as_text(replay_dom: tuple[Node, str]) -> None:
    dom, _ = replay_dom
    title = dom.find("title").text
    assert title.startswith("weather · eval run ") and "pwned" not in title
    responses = [p.text for p in dom.find_all("pre", "response")]
    assert any(HOSTILE_TEXT in r for r in responses)
    assert not dom.find_all("img") and "pwned" not in dom.find("title").text


def test_summary_cards(replay_dom: tuple[Node, str]) -> None:
    dom, _ = replay_dom
    cards = {
        c.attrs["data-metric"]: c.find(cls="value").text
        for c in dom.find("section", id="summary").find_all("div", "card")
    }
    assert cards == {
        "pass rate": "0.0%", "passed": "0 / 6", "failed": "6", "errored": "0",
        "aggregate score": "0.76", "checks passed": "26 / 38", "flaky": "5",
    }  # fmt: skip


def test_trend_chart_has_every_eval_run_of_the_suite(replay_dom: tuple[Node, str]) -> None:
    dom, _ = replay_dom
    svg = dom.find("section", id="trend").find("svg")
    dots = svg.find_all("circle", "trc-c0")  # the pass rate's (the score's are trc-c1)
    assert len(dots) == 3
    assert ["trc-current" in d.classes() for d in dots] == [False, False, True]
    assert [float(d.attrs["cy"]) for d in dots][0] < float(dots[2].attrs["cy"])  # 100% above 0%
    assert "pass rate 100.0% (6/6)" in dots[0].find("title").text
    labels = [t.text for t in svg.find_all("text") if t.text.startswith("v")]
    assert labels == ["v1", "v2", "v3"]


def test_diff_against_the_previous_eval_run(replay_dom: tuple[Node, str]) -> None:
    dom, _ = replay_dom
    section = dom.find("section", id="diff")
    assert "(v2)" in section.find("p", "meta").text
    counts = {
        c.attrs["data-bucket"]: c.find(cls="value").text for c in section.find_all("div", "card")
    }
    assert counts == {"Regressed": "6", "Fixed": "0", "StillFailing": "0", "Added": "0",
                      "Removed": "0", "Unchanged": "0"}  # fmt: skip
    rows = section.find("table", "changes").find_all("tr", data_bucket="Regressed")
    assert [r.find("td", "num").text for r in rows] == ["#0", "#1", "#2", "#3", "#4", "#5"]
    assert "PASSED → FAILED" in rows[2].text


def _case(dom: Node, seq: int) -> Node:
    for case in dom.find_all("details", "case"):
        if f"#{seq} " in case.find("summary").text:
            return case
    raise AssertionError(f"no case #{seq}")


def test_each_case_shows_status_checks_query_response_and_trajectory(
    replay_dom: tuple[Node, str],
) -> None:
    dom, _ = replay_dom
    assert len(dom.find_all("details", "case")) == 6
    case = _case(dom, 0)
    assert case.attrs["data-status"] == "FAILED" and "open" in case.attrs
    summary = case.find("summary").text
    assert "regressed" in summary and "flaky" in summary
    assert case.find("pre", "query").text == "What's the weather and population in San Francisco?"
    first, second = case.find_all("div", "rep")
    assert first.find("h3").text.startswith("Repetition 1: PASSED")
    checks = {r.attrs["data-check"]: r.find("span", "badge").text for r in second.find_all("tr")
              if "data-check" in r.attrs}  # fmt: skip
    assert checks == {
        "status": "PASSED",
        "containsExpected": "FAILED",
        "toolCallArgsMatch": "FAILED",
    }
    # the faithful repetition: both calls the same as recorded
    assert [r.attrs["class"] for r in first.find("table", "trajectory").find_all("tr")[1:]] == [
        "match", "match"
    ]  # fmt: skip
    # the drifting one: get_weather's city differs, highlighted on both sides
    drift_row = second.find("table", "trajectory").find("tr", "drift")
    marks = drift_row.find_all("mark", "drift")
    assert [m.attrs["data-key"] for m in marks] == ["city", "city"]
    assert 'city: "San Francisco"' in marks[0].text and 'city: "san francisco"' in marks[1].text
    assert "argument drift (answered from the recording)" in drift_row.text
    assert "city: expected 'San Francisco', got 'san francisco'" in drift_row.text
    assert "population service timed out" in second.text  # the recorded failure, replayed


def test_a_case_with_nothing_recorded_shows_the_unanswered_calls(
    replay_dom: tuple[Node, str],
) -> None:
    dom, _ = replay_dom
    case = _case(dom, 2)
    assert case.attrs["data-status"] == "FAILED"  # it called tools the source run never did
    rows = case.find("table", "trajectory").find_all("tr", "no_recording")
    assert [r.find("strong").text for r in rows] == ["get_weather", "get_population"]
    assert "no recording for tool call get_weather" in case.find("p", "reason").text


def test_the_first_recorded_eval_run(pipeline_db: Path, tmp_path: Path) -> None:
    out = tmp_path / "v1.html"
    proc = tracereplay(pipeline_db, "report", _eval_run(pipeline_db, "v1")[:8], "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    page = parse(out.read_text(encoding="utf-8"))
    first = _case(page, 0)
    # a passed case: its details are in the page's JSON, shown when it is opened
    assert "open" not in first.attrs and "data-i" in first.attrs and not first.find_all("table")
    dom = parse(render_in_chromium(out, tmp_path / "profile", f"#{first.attrs['id']}"))
    assert "first eval run" in dom.find("section", id="diff").text
    case = _case(dom, 0)
    assert case.attrs["data-status"] == "PASSED" and "open" in case.attrs  # opened by the link
    assert not _case(dom, 1).find_all("table")  # the others stay closed and empty
    table = case.find("table", "trajectory")
    assert "tool call (recorded run)" in table.find("thead").text
    assert [r.find("strong").text for r in table.find("tbody").find_all("tr")] == [
        "get_weather", "get_population"
    ]  # fmt: skip
    assert len(dom.find("section", id="trend").find_all("circle", "trc-c0")) == 3  # pass rate
