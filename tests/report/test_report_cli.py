"""`tracereplay report`: which eval run it reports, where it writes, and its one-line errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from sql_pipeline import tracereplay

pytestmark = pytest.mark.slow


def test_without_eval_runs_it_says_what_to_do(tmp_path: Path) -> None:
    from tracereplay.store import Store

    with Store.open(tmp_path / "empty.duckdb"):  # a store, with no eval run in it
        pass
    proc = tracereplay(
        tmp_path / "empty.duckdb", "report", "-o", str(tmp_path / "r.html"), check=False
    )
    assert proc.returncode == 2
    assert proc.stderr.strip() == "error: no eval run in the store (run tracereplay eval first)"
    assert not (tmp_path / "r.html").exists()


def test_an_unknown_eval_run_or_suite(pipeline_db: Path, tmp_path: Path) -> None:
    proc = tracereplay(pipeline_db, "report", "zzzz", "-o", str(tmp_path / "r.html"), check=False)
    assert (
        proc.returncode == 2 and proc.stderr.strip() == "error: no eval run id starts with 'zzzz'"
    )
    proc = tracereplay(pipeline_db, "report", "--suite", "nope", "-o", str(tmp_path / "r.html"),
                       check=False)  # fmt: skip
    assert proc.returncode == 2 and "no eval run of suite 'nope'" in proc.stderr


def test_default_file_and_suite_selection(pipeline_db: Path, tmp_path: Path) -> None:
    proc = tracereplay(pipeline_db, "report", "--suite", "weather", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    written = tmp_path / "report.html"  # the default, in the working directory
    assert "<h1>Suite weather</h1>" in written.read_text(encoding="utf-8")
    assert proc.stdout.startswith("wrote report.html: suite weather, eval run ")


def test_a_missing_directory_is_refused(pipeline_db: Path, tmp_path: Path) -> None:
    proc = tracereplay(pipeline_db, "report", "-o", str(tmp_path / "no" / "r.html"), check=False)
    assert proc.returncode == 2 and "does not exist" in proc.stderr


def test_without_a_store_it_says_so_and_creates_nothing(tmp_path: Path) -> None:
    proc = tracereplay(
        tmp_path / "typo.duckdb", "report", "-o", str(tmp_path / "r.html"), check=False
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: no tracereplay store at ")
    assert sorted(p.name for p in tmp_path.iterdir()) == []
