"""A replay that broke off half-way is shown the same everywhere, from the replay run it stored.

The replay (tests/query/drift_store.py) called ``get_weather`` twice, answered from the
recording, then ``get_forecast(days=5)``, which no recording answers, and stopped. The UI's
eval-run page, its case page and the HTML report pair those calls with the recording; none
lists the answered ``get_weather`` calls as recorded but not called.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from drift_store import BROKEN_QUERY, drift_store
from report_dom import Node, parse
from sql_pipeline import tracereplay
from ui_helpers import client_for

from tracereplay.store import Store

#: the broken case's trajectory as (what the row says, recorded tool, replayed tool)
EXPECTED = [
    ("match", "get_weather", "get_weather"),
    ("match", "get_weather", "get_weather"),
    ("drift", "get_forecast", "get_forecast"),
    ("unused", "convert_temperature", None),
    ("unused", "convert_temperature", None),
    ("unused", "convert_temperature", None),
]


@pytest.fixture(scope="module")
def drifted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    return drift_store(tmp_path_factory)


def _broken_case(db: Path) -> tuple[str, str]:
    with Store.open(db) as store:
        [(case_id, run_id)] = store.con.execute(
            "SELECT cr.case_id, cr.run_id FROM case_results cr JOIN eval_cases c USING (case_id)"
            " WHERE starts_with(c.query, ?)",
            [BROKEN_QUERY],
        ).fetchall()
    return case_id, run_id


def _tool(cell: Node) -> str | None:
    names = [n.text.strip() for n in cell.iter() if n.tag in ("b", "strong")]
    return names[0] if names else None


def _rows(table: Node, recorded_col: int, replayed_col: int) -> list[tuple[str, ...]]:
    out = []
    for tr in table.find("tbody").find_all("tr"):
        cells = tr.find_all("td")
        status = tr.attrs["class"]
        out.append((status, _tool(cells[recorded_col]), _tool(cells[replayed_col])))
    return out


def test_eval_run_page_pairs_the_replay_run_with_the_recording(drifted: tuple[Path, str]) -> None:
    db, eval_run_id = drifted
    case_id, run_id = _broken_case(db)
    with client_for(db) as client:
        html = client.get(f"/evals/{eval_run_id}").text
    case = parse(html).find("details", data_case=case_id)
    assert _rows(case.find("table", cls="trajectory"), 1, 2) == EXPECTED
    text = " ".join(case.text.split())
    assert "drift (not answered)" in text and "differs: days" in text
    assert f'href="/runs/{run_id}"' in html  # the replay run the rows come from


def test_case_page_links_each_result_to_its_replay_run(drifted: tuple[Path, str]) -> None:
    db, _ = drifted
    case_id, run_id = _broken_case(db)
    with client_for(db) as client:
        page = parse(client.get(f"/cases/{case_id}").text)
    history = page.find("table", id="case-history")
    assert [a.attrs["href"] for a in history.find_all("a") if "/runs/" in a.attrs["href"]] == [
        f"/runs/{run_id}"
    ]
    [steps] = [t for t in page.find_all("table", cls="trajectory")]
    assert _rows(steps, 1, 2) == EXPECTED


def test_report_pairs_the_replay_run_with_the_recording(
    drifted: tuple[Path, str], tmp_path: Path
) -> None:
    db, eval_run_id = drifted
    case_id, _ = _broken_case(db)
    out = tmp_path / "report.html"
    tracereplay(db, "report", eval_run_id, "-o", str(out))
    page = parse(out.read_text(encoding="utf-8"))
    case = page.find(id=f"case-{case_id}")
    rows = _rows(case.find("table", cls="trajectory"), 1, 2)
    assert rows == EXPECTED
    text = " ".join(case.text.split())
    assert "recorded, not called get_weather" not in text
    assert "2 answered from the recording" in text


def test_show_of_the_replay_run_has_the_same_calls(drifted: tuple[Path, str]) -> None:
    db, _ = drifted
    _, run_id = _broken_case(db)
    out = tracereplay(db, "show", run_id).stdout
    calls = [
        line.split("── tool ", 1)[1].split()[0] for line in out.splitlines() if "── tool " in line
    ]
    assert calls == [r[2] for r in EXPECTED if r[2]]
    assert "✗ the run failed here" in out


def test_failed_run_page_marks_where_it_failed(drifted: tuple[Path, str]) -> None:
    """As ``tracereplay show`` does: the tool call that raised and ended the run."""
    db, _ = drifted
    _, run_id = _broken_case(db)
    with client_for(db) as client:
        page = parse(client.get(f"/runs/{run_id}").text)
    marks = page.find_all(cls="failed-here")
    assert [" ".join(m.text.split()) for m in marks] == ["✗ the run failed here"]
    failed = [
        (r.attrs["data-round"], _tool(t))
        for r in page.find_all("div", cls="round")
        for t in r.find_all("div", cls="tool")
        if t.find_all(cls="failed-here")
    ]
    assert failed == [("2", "get_forecast")]


def test_diff_page_links_each_side_to_the_runs_it_scored(
    drifted: tuple[Path, str], tmp_path: Path
) -> None:
    """Diff the recorded eval with the replay: each case's B side links to its replay run."""
    db, eval_run_id = drifted
    case_id, run_id = _broken_case(db)
    with Store.open(db) as store:
        [(source,)] = store.con.execute(
            "SELECT source_run_id FROM case_results WHERE case_id = ?", [case_id]
        ).fetchall()
    copy = tmp_path / "copy.duckdb"
    copy.write_bytes(db.read_bytes())
    tracereplay(copy, "eval", "weather", "--label", "recorded")
    with Store.open(copy) as store:
        [(recorded,)] = store.con.execute(
            "SELECT eval_run_id FROM eval_runs WHERE label = 'recorded'"
        ).fetchall()
    with client_for(copy) as client:
        page = parse(client.get(f"/diff?a={recorded}&b={eval_run_id}").text)
    row = next(
        tr
        for tr in page.find("table", id="diff-table").find_all("tr")
        if any(a.attrs.get("href") == f"/cases/{case_id}" for a in tr.find_all("a"))
    )
    links = [a.attrs["href"] for a in row.find_all("a")]
    assert links == [f"/cases/{case_id}", f"/runs/{source}", f"/runs/{run_id}"]
