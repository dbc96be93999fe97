"""``diff --format markdown`` and ``report --format markdown`` (issue 50, part 3): the summary a
pull request shows, rendered with a real Markdown parser (markdown-it-py, GitHub's table rules):
the suite and both eval runs, pass rate and mean score before and now, each case whose verdict
changed with its reason, links into the HTML report, whatever text the reasons hold."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from datetime import UTC, datetime
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from typer.testing import CliRunner

from tracereplay.cli.app import app
from tracereplay.evaluate.diff import CaseDiff
from tracereplay.models import Status
from tracereplay.report.markdown import CASES_LISTED, MAX_CHARS, REASON_CHARS, markdown_summary
from tracereplay.scoring.outcomes import EvalRunRecord

BIN = Path(sys.executable).parent
URL = "https://ci.example.com/runs/7/report.html"
CITIES = ["Paris", "Rome", "Oslo", "Lima"]
#: a case promoted after the first eval run: Added in the second; its query full of markup
ODD_QUERY = "What is the weather in Cairo? *now* | [x](y) <b>@octocat</b> `tick` #1 $5 &amp;"

AGENT = """
import re

import tracereplay


@tracereplay.tool
def get_weather(city: str) -> dict:
    return {"city": city, "temp": 21}


#: the cities each version gets wrong (its answer has a pipe and a newline in it)
BROKEN = {"answer": set(), "v1": {"Rome"}, "v2": {"Oslo", "Lima", "Cairo"}}


def _answer(query: str, version: str) -> str:
    city = re.search(r"in (\\w+)", query).group(1)
    weather = get_weather(city)
    if city in BROKEN[version]:
        return f"In {city} | it is\\n{weather['temp'] + 5} degrees."
    return f"In {city} it is {weather['temp']} degrees."


def answer(query: str) -> str:
    return _answer(query, "answer")


def answer_v1(query: str) -> str:
    return _answer(query, "v1")


def answer_v2(query: str) -> str:
    return _answer(query, "v2")
"""

RECORD = """
import sys

import tracereplay
from my_agent import answer

tracereplay.configure(service_name="weather", db="store.duckdb")
for query in sys.argv[1:]:
    with tracereplay.agent_run("weather_agent", query=query) as run:
        run.set_response(answer(query))
tracereplay.flush()
"""


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TRACEREPLAY_", "PYTEST_"))}
    env["PYTHONPATH"] = "."
    return env


def _run(work: Path, *args: str, code: int = 0) -> str:
    """A command as the user types it in ``work`` (its own process)."""
    done = subprocess.run(args, cwd=work, env=_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == code, (args, done.stdout, done.stderr)
    return done.stdout


def _tracereplay(work: Path, *args: str, code: int = 0) -> str:
    return _run(work, str(BIN / "tracereplay"), "--db", "store.duckdb", *args, code=code)


def _record(work: Path, *queries: str) -> None:
    _run(work, sys.executable, "-c", textwrap.dedent(RECORD), *queries)
    _tracereplay(work, "promote", "--where", "kind = 'live'", "--suite", "weather")


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project with the weather suite evaluated twice: v1 gets Rome wrong; then Cairo is
    promoted, and v2 gets Oslo, Lima and Cairo wrong (Rome fixed, Oslo and Lima regressed,
    Cairo added failing, Paris passed in both)."""
    root = tmp_path_factory.mktemp("project")
    (root / "my_agent.py").write_text(textwrap.dedent(AGENT))
    _record(root, *(f"What is the weather in {city}?" for city in CITIES))
    _tracereplay(root, "eval", "weather", "--agent", "my_agent:answer_v1", "--label", "v1", code=1)
    _record(root, ODD_QUERY)
    _tracereplay(root, "eval", "weather", "--agent", "my_agent:answer_v2", "--label", "v2", code=1)
    return root


def _cli(work: Path, *args: str) -> object:
    return CliRunner().invoke(
        app, ["--db", str(work / "store.duckdb"), *args], env={"TRACEREPLAY_DB": None}
    )


class _Tables(HTMLParser):
    """The rendered page's tables: rows of cells, each cell's text and the links in it."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: list[list[list[dict]]] = []
        self.headings: list[str] = []
        self.links: list[tuple[str, str]] = []
        self._cell: dict | None = None
        self._heading: list[str] | None = None
        self._link: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = {"text": "", "hrefs": []}
            self.tables[-1][-1].append(self._cell)
        elif tag == "a":
            href = dict(attrs)["href"] or ""
            if self._cell is not None:
                self._cell["hrefs"].append(href)
            self._link = [href, ""]
        elif tag in ("h1", "h2", "h3"):
            self._heading = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th"):
            self._cell = None
        elif tag == "a" and self._link is not None:
            self.links.append((self._link[1], self._link[0]))
            self._link = None
        elif tag in ("h1", "h2", "h3") and self._heading is not None:
            self.headings.append("".join(self._heading))
            self._heading = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell["text"] += data
        if self._heading is not None:
            self._heading.append(data)
        if self._link is not None:
            self._link[1] += data


def render(markdown: str) -> _Tables:
    """``markdown`` as GitHub renders it (CommonMark with GFM tables and strikethrough)."""
    html = MarkdownIt("commonmark").enable(["table", "strikethrough"]).render(markdown)
    page = _Tables()
    page.feed(html)
    return page


def _texts(row: list[dict]) -> list[str]:
    return [cell["text"].replace("\u2060", "") for cell in row]


def test_diff_last_writes_the_summary_a_pull_request_shows(work: Path) -> None:
    done = _cli(work, "diff", "--last", "weather", "--format", "markdown", "--report-url", URL)
    assert done.exit_code == 1, done.output  # as the table: a case regressed
    text = done.stdout
    assert len(text) < 5000 and "\x1b[" not in text  # short, and no terminal colours
    page = render(text)
    assert page.headings == ["tracereplay: suite weather"]
    assert "2 cases regressed" in text
    assert "label `v2`" in text and "label `v1`" in text and "`my_agent:answer_v2`" in text

    metrics, changes = page.tables
    assert _texts(metrics[0]) == ["", "before", "now", "change"]
    assert _texts(metrics[1]) == ["pass rate", "75.0% (3/4)", "40.0% (2/5)", "-35.0 pts"]
    assert _texts(metrics[2])[0] == "mean score"

    header, *rows = changes
    assert _texts(header) == [
        "change", "#", "case", "query", "before", "now", "score", "reason",
    ]  # fmt: skip
    assert all(len(row) == 8 for row in rows)  # no pipe of a reason or query split a cell
    by_query = {_texts(row)[3]: _texts(row) for row in rows}
    assert sorted(by_query) == sorted(
        [ODD_QUERY, *(f"What is the weather in {c}?" for c in ("Rome", "Oslo", "Lima"))]
    )
    oslo = by_query["What is the weather in Oslo?"]
    assert oslo[0] == "regressed" and oslo[4:7] == ["PASSED", "FAILED", "1.00 → 0.67"]
    assert "the response: 'In Oslo | it is 26 degrees.'" in oslo[7]  # the pipe, in its cell
    rome = by_query["What is the weather in Rome?"]
    assert rome[0] == "fixed" and rome[4:6] == ["FAILED", "PASSED"] and rome[7] == ""
    cairo = by_query[ODD_QUERY]
    assert cairo[0] == "added" and cairo[4:6] == ["–", "FAILED"]
    assert [r[0] for r in by_query.values()].count("regressed") == 2
    assert "@\u2060octocat" in text  # shown, but GitHub does not notify @octocat
    assert "Verdict unchanged: 1 PASSED." in text

    # each case links to its own section of the HTML report of the eval run B
    report = work / "report.html"
    made = _cli(work, "report", "-o", str(report))
    assert made.exit_code == 0, made.output
    html = report.read_text()
    for row in rows:
        [href] = row[2]["hrefs"]
        assert href.startswith(URL + "#case-") and row[2]["text"] in href
        assert f'id="{href.split("#")[1]}"' in html
    assert ("Full report", URL) in page.links


def test_report_format_markdown_summarizes_the_same_comparison(work: Path, tmp_path: Path) -> None:
    diff = _cli(work, "diff", "--last", "weather", "-f", "markdown", "--report-url", URL)
    report = _cli(work, "report", "-s", "weather", "-f", "markdown", "--report-url", URL)
    assert report.exit_code == 0, report.output  # report's exit codes: it was written
    assert report.stdout == diff.stdout
    out = tmp_path / "summary.md"
    written = _cli(work, "report", "--format", "markdown", "--output", str(out))
    assert written.exit_code == 0, written.output
    assert out.read_text() == _cli(work, "report", "-f", "markdown").stdout
    assert written.stdout.startswith(f"wrote {out}: suite weather")


def test_the_suites_first_eval_run_lists_what_did_not_pass(work: Path) -> None:
    first = _tracereplay(work, "sql", "SELECT eval_run_id FROM eval_runs WHERE label = 'v1'",
                         "--format", "csv").splitlines()[1]  # fmt: skip
    done = _cli(work, "report", first[:8], "--format", "markdown")
    assert done.exit_code == 0, done.output
    page = render(done.stdout)
    assert "**1 of 4 cases did not pass** in the suite's first eval run" in done.stdout
    metrics, failing = page.tables
    assert _texts(metrics[1]) == ["pass rate", "75.0% (3/4)"]
    [header, rome] = failing
    assert len(header) == len(rome) == 7
    assert _texts(rome)[3:5] == ["What is the weather in Rome?", "FAILED"]
    assert "Rome | it is 26 degrees" in _texts(rome)[6]


def test_report_url_goes_with_markdown(work: Path) -> None:
    for args in (["diff", "--last", "--report-url", URL], ["report", "--report-url", URL]):
        done = _cli(work, *args)
        assert done.exit_code == 2 and "--report-url goes with --format markdown" in done.stderr


# --- the renderer: many cases, long links, any text -------------------------------------------


def _record_of(run_id: str, label: str | None = None) -> EvalRunRecord:
    return EvalRunRecord(
        eval_run_id=run_id, suite_id="s1", suite_name="weather", mode="replay", label=label,
        started_at=datetime(2025, 5, 1, 12, 0, tzinfo=UTC), total_cases=3, passed=2,
        pass_rate=2 / 3, aggregate_score=0.5,
    )  # fmt: skip


def _case(n: int, query: str = "q", reason: str = "r", bucket: str = "Regressed") -> CaseDiff:
    before, now = {
        "Regressed": (Status.PASSED, Status.FAILED),
        "Removed": (Status.PASSED, None),
    }[bucket]
    return CaseDiff(
        case_id=f"{n:08d}-case", seq=n, query=query, bucket=bucket, status_a=before,
        status_b=now, score_a=1.0, score_b=0.0 if now else None, reason_b=reason,
    )  # fmt: skip


def test_at_most_fifty_cases_are_listed_and_the_rest_counted() -> None:
    cases = [_case(n) for n in range(CASES_LISTED + 20)]
    text = markdown_summary(
        _record_of("b"), _record_of("a"), cases, details="tracereplay diff a b", report_url=URL
    )
    [_, changes] = render(text).tables
    assert len(changes) == 1 + CASES_LISTED
    assert "…and 20 more cases: `tracereplay diff a b` lists them all." in text
    # a long report URL: fewer cases, and the summary still fits a GitHub comment
    long_url = URL + "?" + "x" * 2000
    longer = markdown_summary(_record_of("b"), _record_of("a"), cases, report_url=long_url)
    assert len(longer) <= MAX_CHARS and "more cases" in longer


def test_a_removed_case_links_to_the_reports_comparison() -> None:
    text = markdown_summary(
        _record_of("b"), _record_of("a"), [_case(1, bucket="Removed")], report_url=URL
    )
    [_, [_, row]] = render(text).tables
    assert row[2]["hrefs"] == [URL + "#diff"]
    assert _texts(row)[4:] == ["PASSED", "–", "1.00 → –", "not in this eval run"]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    query=st.text(max_size=70),
    reason=st.text(max_size=REASON_CHARS - 10),
    label=st.text(max_size=20),
)
def test_any_text_stays_in_its_table_cell(query: str, reason: str, label: str) -> None:
    text = markdown_summary(
        _record_of("b", label or None), _record_of("a"), [_case(1, query, reason)],
        report_url=URL,
    )  # fmt: skip
    page = render(text)
    [metrics, [header, row]] = page.tables
    assert len(metrics) == 3 and all(len(r) == 4 for r in metrics)
    assert len(header) == len(row) == 8
    texts = _texts(row)

    def shown(value: str) -> str:
        return " ".join(value.replace("\x00", "\ufffd").split())

    assert texts[3] == shown(query) and texts[7] == shown(reason)
    assert texts[:3] == ["regressed", "1", "00000001"] and row[2]["hrefs"] == [
        URL + "#case-00000001-case"
    ]
    assert page.headings == ["tracereplay: suite weather"]
