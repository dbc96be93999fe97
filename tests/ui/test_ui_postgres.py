"""The UI on a PostgreSQL store: the pipeline store copied into PostgreSQL (``store copy``)
shows the same pages, with the same runs, suites, eval runs and cases linked, as on DuckDB; a
promotion from the browser lands there."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from postgres_server import pg_server, pg_url  # noqa: F401 (fixtures)
from ui_helpers import client_for

from tracereplay.store import Store
from tracereplay.store.paths import resolve_db_path

LINK = re.compile(r'href="(/(?:runs|suites|evals|cases)/[0-9a-f-]{8,})')


def _ids(store_target) -> dict[str, str]:
    with Store.open(store_target) as store:
        one = store.query_dicts
        return {
            "run": one("SELECT run_id FROM runs WHERE kind = 'live' ORDER BY run_id LIMIT 1")[0]["run_id"],
            "suite": one("SELECT suite_id FROM eval_suites ORDER BY name LIMIT 1")[0]["suite_id"],
            "eval": one("SELECT eval_run_id FROM eval_runs ORDER BY started_at LIMIT 1")[0]["eval_run_id"],
            "case": one("SELECT case_id FROM eval_cases ORDER BY case_id LIMIT 1")[0]["case_id"],
        }  # fmt: skip


def test_every_page_shows_the_same_on_postgres(pipeline_copy: Path, pg_url: str) -> None:  # noqa: F811
    labelled = _ids(pipeline_copy)["run"]
    with Store.open(pipeline_copy) as store:  # a labelled run: the label facet on both engines
        store.add_label(labelled, "bad", note="wrong city", author="dana")
    done = subprocess.run(
        [sys.executable, "-m", "tracereplay", "--db", str(pipeline_copy), "store", "copy", "--to", pg_url],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    ids = _ids(pipeline_copy)
    assert _ids(pg_url) == ids
    pages = [
        "/dashboard", "/runs", "/runs?status=success", "/runs?q=weather", f"/runs/{ids['run']}",
        "/runs?label=bad", "/runs?label=unlabelled&status=success",
        "/suites", f"/suites/{ids['suite']}", f"/suites/{ids['suite']}/grid", "/evals",
        f"/evals/{ids['eval']}", f"/cases/{ids['case']}", "/monitors",
        "/sql?q=SELECT+count(*)+AS+n+FROM+runs", "/sessions/conv-demo-1",
    ]  # fmt: skip
    with client_for(pipeline_copy) as on_duckdb, client_for(resolve_db_path(pg_url)) as on_pg:
        for page in pages:
            a, b = on_duckdb.get(page), on_pg.get(page)
            assert (page, b.status_code) == (page, a.status_code == 200 and 200)
            assert a.status_code == 200, page
            assert sorted(set(LINK.findall(b.text))) == sorted(set(LINK.findall(a.text))), page
        promoted = on_pg.post(
            f"/runs/{ids['run']}/promote",
            data={"suite": "from-the-browser"},
            headers={"Origin": "http://127.0.0.1:8765"},
        )
        assert promoted.status_code in (200, 303), promoted.text[:300]
    with Store.open(pg_url) as store:
        assert store.query_dicts(
            "SELECT count(*) AS n FROM eval_cases c JOIN eval_suites s USING (suite_id)"
            " WHERE s.name = 'from-the-browser'"
        ) == [{"n": 1}]
