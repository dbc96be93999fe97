"""An eval's results reach the store in batches, and the last with the eval run's final row."""

from __future__ import annotations

from pathlib import Path

import pytest

from tracereplay.evaluate import evaluation
from tracereplay.evaluate.evaluation import EvalSettings, run_evaluation
from tracereplay.scoring.runner import RunnerOptions
from tracereplay.store import Store


def _eval_counting_openings(db: Path, monkeypatch: pytest.MonkeyPatch, batch: int) -> int:
    opened = []
    real = evaluation.open_store

    def counting(*args, **kwargs):
        opened.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(evaluation, "open_store", counting)
    monkeypatch.setattr(evaluation, "FLUSH_RESULTS", batch)
    # retries: the case-by-case path, whose results the writer batches
    run_evaluation(EvalSettings(suite="weather", db=db, runner=RunnerOptions(retries=1)))
    with Store.open(db) as store:
        [(results, status)] = store.con.execute(
            "SELECT (SELECT count(*) FROM case_results), status FROM eval_runs"
        ).fetchall()
    assert (results, status) == (3, "completed")
    return len(opened)


def test_a_batch_filled_by_the_last_result_is_written_with_the_eval_run(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the suite's 3 cases fill one batch: read the suite, then write the results and the run
    # row together (not the batch, then the run row in a store opened again)
    assert _eval_counting_openings(db, monkeypatch, batch=3) == 2


def test_results_past_a_batch_are_written_as_it_fills(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _eval_counting_openings(db, monkeypatch, batch=2) == 3  # 2 results, then 1 + the run
