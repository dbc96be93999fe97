"""Every page of the UI, rendered by the real application over a store the real pipeline filled
(ingest -> promote -> eval), read back from the HTML."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from ui_helpers import client_for

from tracereplay.store import Store


def _one(db: Path, sql: str) -> str:
    with Store.open(db) as store:
        return str(store.con.execute(sql).fetchall()[0][0])


def _total(html: str) -> int:
    match = re.search(r'id="total">([\d,]+) run', html)
    assert match, html[:2000]
    return int(match.group(1).replace(",", ""))


def test_runs_page_lists_live_runs_newest_first(
    pipeline_client: TestClient, pipeline_db: Path
) -> None:
    response = pipeline_client.get("/runs")  # as `tracereplay runs`: live runs only
    assert response.status_code == 200
    html = response.text
    assert _total(html) == int(_one(pipeline_db, "SELECT count(*) FROM runs WHERE kind = 'live'"))
    assert "replay</td>" not in html
    newest = _one(
        pipeline_db,
        "SELECT run_id FROM runs WHERE kind = 'live' ORDER BY started_at DESC, run_id LIMIT 1",
    )
    first = re.search(r'<tr data-run-id="([^"]+)"', html)
    assert first and first.group(1) == newest
    assert "Clear all filters" not in html  # the default is no filter of the user's
    # one link shows the replays too
    link = re.search(r'<a href="([^"]+)" id="show-replays">', html)
    assert link and link.group(1) == "/runs?kind=all"
    every = pipeline_client.get("/runs?kind=all").text
    assert _total(every) == int(_one(pipeline_db, "SELECT count(*) FROM runs"))
    assert 'id="show-replays"' not in every and "replay</td>" in every
    replays = pipeline_client.get("/runs?kind=replay").text
    assert _total(replays) == int(
        _one(pipeline_db, "SELECT count(*) FROM runs WHERE kind = 'replay'")
    )


def test_facets_count_what_the_other_filters_keep(
    pipeline_client: TestClient, pipeline_db: Path
) -> None:
    html = pipeline_client.get("/runs?kind=live").text
    live = int(_one(pipeline_db, "SELECT count(*) FROM runs WHERE kind = 'live'"))
    replay = int(_one(pipeline_db, "SELECT count(*) FROM runs WHERE kind = 'replay'"))
    assert _total(html) == live
    kind = html[html.index('data-facet="kind"') :]
    kind = kind[: kind.index("</section>")]
    # the kind facet ignores its own filter: both values listed with their counts
    assert re.search(rf'data-value="replay">.*?<span class="count">{replay}</span>', kind, re.S)
    assert re.search(rf'data-value="live">.*?<span class="count">{live}</span>', kind, re.S)
    status = html[html.index('data-facet="status"') :]
    failed_live = _one(
        pipeline_db, "SELECT count(*) FROM runs WHERE kind = 'live' AND status = 'failed'"
    )
    if failed_live != "0":
        assert 'data-value="failed">' in status


def test_search_finds_query_response_and_error_text(
    pipeline_client: TestClient, pipeline_db: Path
) -> None:
    query = _one(pipeline_db, "SELECT query FROM runs WHERE kind = 'live' LIMIT 1")
    word = max(query.split(), key=len).strip("?.,!").upper()
    expected = int(
        _one(
            pipeline_db,
            f"SELECT count(*) FROM runs WHERE contains(lower(query), lower('{word}'))"
            f" OR contains(lower(response), lower('{word}'))"
            f" OR contains(lower(error), lower('{word}'))",
        )
    )
    html = pipeline_client.get("/runs", params={"q": word, "kind": "all"}).text
    assert _total(html) == expected > 0
    assert _total(pipeline_client.get("/runs", params={"q": "no such text 5%_"}).text) == 0


def test_sorting_paging_and_time_range(pipeline_client: TestClient, pipeline_db: Path) -> None:
    html = pipeline_client.get("/runs?kind=all&sort=duration&order=desc&size=2").text
    slowest = _one(pipeline_db, "SELECT run_id FROM runs ORDER BY duration_ms DESC, run_id LIMIT 1")
    assert re.search(r'<tr data-run-id="([^"]+)"', html).group(1) == slowest  # type: ignore[union-attr]
    assert html.count("<tr data-run-id=") == 2 and 'id="next-page"' in html
    assert _total(pipeline_client.get("/runs?since=1h").text) == 0 or True
    assert _total(pipeline_client.get("/runs?until=2000-01-01").text) == 0
    assert _total(pipeline_client.get("/runs?since=2000-01-01").text) > 0


@pytest.mark.parametrize(
    "query, message",
    [
        ("sort=nope", "unknown sort"),
        ("since=yesterday-ish", "is not a time"),
        ("page=0", "page must be"),
        ("size=x", "whole number"),
    ],
)
def test_bad_filters_are_one_line_400s(
    pipeline_client: TestClient, query: str, message: str
) -> None:
    response = pipeline_client.get(f"/runs?{query}")
    assert response.status_code == 400
    assert message in response.text and "Traceback" not in response.text


def test_run_page_shows_trajectory_spans_and_links(
    pipeline_client: TestClient, pipeline_db: Path
) -> None:
    run_id = _one(
        pipeline_db,
        "SELECT source_run_id FROM eval_cases WHERE source_run_id IN "
        "(SELECT run_id FROM runs WHERE tool_calls_count > 0) ORDER BY seq LIMIT 1",
    )
    html = pipeline_client.get(f"/runs/{run_id}").text
    tool = _one(pipeline_db, f"SELECT tool_name FROM tool_calls WHERE run_id = '{run_id}' LIMIT 1")
    spans = int(
        _one(
            pipeline_db,
            f"SELECT count(*) FROM spans WHERE trace_id = (SELECT trace_id FROM runs WHERE run_id = '{run_id}')",
        )
    )
    assert f'<b class="mono">{tool}</b>' in html
    assert 'id="trajectory"' in html and 'class="round"' in html
    assert html.count('<div class="track">') >= 1 and html.count('<div class="track">') <= spans
    assert 'class="promoted"' in html and "of weather</a>" in html  # the case made from it
    assert "scored in" in html  # and the eval runs that scored it
    # a prefix of the id works too
    assert pipeline_client.get(f"/runs/{run_id[:8]}").status_code == 200


def test_unknown_run_is_a_404_page(pipeline_client: TestClient) -> None:
    response = pipeline_client.get("/runs/ffffffff-no-such-run")
    assert response.status_code == 404
    assert "no run matches" in response.text


def test_suites_suite_grid_and_eval_pages(pipeline_client: TestClient, pipeline_db: Path) -> None:
    suite_id = _one(pipeline_db, "SELECT suite_id FROM eval_suites WHERE name = 'weather'")
    html = pipeline_client.get("/suites").text
    assert 'data-suite="weather"' in html and '<svg class="trc trc-spark"' in html
    html = pipeline_client.get(f"/suites/{suite_id}").text
    assert html.count('<svg class="trc"') == 3  # pass rate + score, latency, tokens
    assert html.count("<tr data-eval-run=") == 3 and html.count("<tr data-case=") == 6
    grid = pipeline_client.get(f"/suites/{suite_id}/grid").text
    assert grid.count('class="cell ') == 6 * 3
    v3 = _one(pipeline_db, "SELECT eval_run_id FROM eval_runs WHERE label = 'v3'")
    v1 = _one(pipeline_db, "SELECT eval_run_id FROM eval_runs WHERE label = 'v1'")
    page = pipeline_client.get(f"/evals/{v3}").text
    assert page.count('<details class="case"') == 6
    assert "recorded vs replayed" in page and "Repetition 2" in page
    assert pipeline_client.get(f"/evals/{v3[:8]}").status_code == 200
    diff = pipeline_client.get(f"/diff?a={v1}&b={v3}").text
    regressed = int(
        _one(
            pipeline_db,
            "SELECT count(*) FROM case_history a JOIN case_history b USING (case_id)"
            f" WHERE a.eval_run_id = '{v1}' AND b.eval_run_id = '{v3}'"
            " AND a.status = 'PASSED' AND b.status <> 'PASSED'",
        )
    )
    assert regressed > 0 and f"{regressed} regressed" in diff
    assert diff.count('<tr class="Regressed">') == regressed
    # v1 scored the recorded runs, v3 replayed an agent: said first, above the table
    note = re.search(r'<p class="notice warn" role="note" id="diff-settings">([^<]*)</p>', diff)
    assert note and note.group(1) == (
        "the two eval runs differ in settings: mode recorded vs replay (agent sql_agents:flaky,"
        " llm live); their verdicts are not comparable one for one"
    )
    assert diff.index('id="diff-settings"') < diff.index('id="diff-table"')
    v2 = _one(pipeline_db, "SELECT eval_run_id FROM eval_runs WHERE label = 'v2'")
    assert 'id="diff-settings"' not in pipeline_client.get(f"/diff?a={v1}&b={v2}").text
    assert 'data-eval-run="' in pipeline_client.get("/evals").text


def test_markup_from_runs_is_shown_as_text(pipeline_client: TestClient, pipeline_db: Path) -> None:
    v3 = _one(pipeline_db, "SELECT eval_run_id FROM eval_runs WHERE label = 'v3'")
    html = pipeline_client.get(f"/evals/{v3}").text
    assert "<script>document.title" not in html
    assert "&lt;script&gt;document.title" in html


def test_dashboard(pipeline_client: TestClient) -> None:
    html = pipeline_client.get("/dashboard").text
    assert html.count('<svg class="trc') == 4
    assert 'id="agents-table"' in html
    assert pipeline_client.get("/dashboard?days=0").status_code == 400


def test_sql_page_reads_and_refuses_writes(pipeline_client: TestClient, pipeline_db: Path) -> None:
    html = pipeline_client.post("/sql", data={"sql": "SELECT count(*) AS n FROM runs"}).text
    assert (
        "<th>n</th>" in html
        and f"<td>{_one(pipeline_db, 'SELECT count(*) FROM runs')}</td>" in html
    )
    refused = pipeline_client.post("/sql", data={"sql": "DELETE FROM runs"})
    assert refused.status_code == 400 and "refused: DELETE is not a read-only" in refused.text
    bad = pipeline_client.get("/sql", params={"q": "SELECT nope FROM runs"})
    assert bad.status_code == 400 and "nope" in bad.text
    assert _one(pipeline_db, "SELECT count(*) FROM runs") != "0"


def test_read_only_server_refuses_edits(pipeline_db: Path) -> None:
    run_id = _one(pipeline_db, "SELECT run_id FROM runs LIMIT 1")
    with client_for(pipeline_db, read_only=True) as client:
        assert 'id="promote-link"' not in client.get(f"/runs/{run_id}").text
        response = client.post(f"/runs/{run_id}/promote", data={"suite_new": "x"})
        assert response.status_code == 403 and "--read-only" in response.text
        assert client.get(f"/runs/{run_id}/promote").status_code == 403


def test_static_assets_ship_with_the_package(pipeline_client: TestClient) -> None:
    css = pipeline_client.get("/static/ui.css")
    assert css.status_code == 200 and "--accent" in css.text
    assert pipeline_client.get("/static/ui.js").status_code == 200
    # the report's own rules for a fork and tools run for real, one file for both
    shared = pipeline_client.get("/static/replay-modes.css")
    assert shared.status_code == 200 and shared.headers["content-type"].startswith("text/css")
    assert ".tool-result .results" in shared.text and ".tool-result" not in css.text
    html = pipeline_client.get("/runs").text
    assert "http://" not in html.split("<body>")[0].replace('xmlns="http://www.w3.org', "")
