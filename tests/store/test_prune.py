"""``tracereplay prune``: old traffic goes, what suites and evals refer to stays, the file
shrinks. Real store; prune and the commands that read the store after it (show, eval, check) in
their own processes, the ingests, promotion and eval that make its history in this one
(``tracereplay_here``: no interpreter to start for each)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
import synth
from sql_pipeline import tracereplay_here

from tracereplay.store import Store

pytestmark = pytest.mark.slow

DAY_NS = 86_400 * 10**9


def _cli(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tracereplay", "--db", str(db), *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture
def store_with_history(tmp_path: Path) -> tuple[Path, str]:
    """600 traces from 200 days ago, 100 from an hour ago; the oldest run promoted to a suite
    and evaluated. Returns the store and that run's id."""
    db = tmp_path / "history.duckdb"
    now = time.time_ns()
    for seed, count, t0 in ((1, 600, now - 200 * DAY_NS), (2, 100, now - 3600 * 10**9)):
        (request,) = synth.requests(count, count, seed=seed, t0=t0)
        path = tmp_path / f"{seed}.pb"
        path.write_bytes(request.SerializeToString())
        assert tracereplay_here(db, "ingest", str(path)).returncode == 0
    with Store.open(db) as store:
        [[run_id]] = store.con.execute(
            "SELECT run_id FROM runs ORDER BY started_at LIMIT 1"
        ).fetchall()
    assert tracereplay_here(db, "promote", run_id, "--suite", "kept").returncode == 0
    result = tracereplay_here(db, "eval", "kept")
    assert result.returncode in (0, 1), result.stderr
    return db, run_id


def _counts(db: Path) -> dict[str, int]:
    with Store.open(db) as store:
        return {
            t: store.count(t)
            for t in ("spans", "runs", "tool_calls", "llm_calls", "eval_cases", "case_results")
        }


def test_prune_keeps_what_suites_and_evals_refer_to_and_shrinks_the_file(
    store_with_history: tuple[Path, str],
) -> None:
    db, kept_run = store_with_history
    before = _counts(db)
    assert before["runs"] == 700 and before["spans"] == 7000
    dry = _cli(db, "prune", "--older-than", "90d", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "would remove 599 traces" in dry.stdout and "5990 spans" in dry.stdout
    assert "kept 1 older runs" in dry.stdout
    assert _counts(db) == before  # a dry run changes nothing
    size = db.stat().st_size

    result = _cli(db, "prune", "--older-than", "90d")
    assert result.returncode == 0, result.stderr
    after = _counts(db)
    assert after["runs"] == 101 and after["spans"] == 1010  # the new ones and the kept one
    assert after["eval_cases"] == before["eval_cases"]
    assert after["case_results"] == before["case_results"]
    assert after["tool_calls"] < before["tool_calls"] and after["llm_calls"] < before["llm_calls"]
    assert db.stat().st_size < size * 0.8  # the space is given back (blocks are 256 KiB)
    with Store.open(db) as store:
        assert store.query_dicts("SELECT count(*) AS n FROM runs WHERE run_id = ?", [kept_run]) == [
            {"n": 1}
        ]
        assert store.count("run_summary") == 101  # the views came along
    assert _cli(db, "show", kept_run).returncode == 0
    assert _cli(db, "eval", "kept").returncode in (0, 1)  # the suite still evaluates
    assert _cli(db, "check").returncode == 0


def test_a_bad_older_than_is_one_line(store_with_history: tuple[Path, str]) -> None:
    db, _ = store_with_history
    result = _cli(db, "prune", "--older-than", "ninety days")
    assert result.returncode == 2
    [line] = result.stderr.splitlines()
    assert line.startswith("error: --older-than 'ninety days' is neither a duration")
