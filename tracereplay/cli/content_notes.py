"""The one line ``ingest`` and ``show`` print about runs recorded without content.

Candidates are read from the ``runs`` table (no question, no answer: ``store/runs.py``), confirmed on the whole run
(``convert.content.records_no_content``), and the instrumentation that traced them is read from
their traces' span scopes (``convert.content.content_setting`` names what records content).
"""

from __future__ import annotations

from datetime import datetime

from tracereplay.convert.content import (
    conversion_gap_note,
    no_content_note,
    records_no_content,
    unread_content,
)
from tracereplay.models.run import Run
from tracereplay.store.db import Store
from tracereplay.store.runs import live_runs_without_text, span_scopes

__all__ = ["ingested_note", "run_note"]

#: at most this many candidate runs are loaded whole to confirm them (the note counts them)
_CONFIRM = 200


def ingested_note(store: Store, since: datetime) -> str | None:
    """The note for the runs converted since ``since`` that hold no content, or None."""
    rows = live_runs_without_text(store, since, _CONFIRM)
    empty = [r for r in rows if records_no_content(store.get_run(r["run_id"]))]
    if not empty:
        return None
    return _note(store, len(empty), sorted({r["trace_id"] for r in empty}))


def _note(store: Store, runs: int, trace_ids: list[str]) -> str:
    """A conversion gap when the traces' spans hold content the converter did not read, else
    the recorded-without-content note."""
    unread = unread_content(store.load_spans(trace_ids))
    if unread:
        return conversion_gap_note(runs, unread)
    return no_content_note(runs, span_scopes(store, trace_ids))


def run_note(store: Store, run: Run) -> str | None:
    """The note for one run, or None when it holds content."""
    if not records_no_content(run):
        return None
    return _note(store, 1, [run.trace_id])
