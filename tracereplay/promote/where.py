"""Selecting runs with a user's SQL predicate, without letting it change anything."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import duckdb

from tracereplay.errors import TraceReplayError
from tracereplay.store.db import Store
from tracereplay.store.errors import StatementError

#: the runs a predicate reads when it names ``label``: every column of ``runs`` and the run's
#: latest label's verdict (``good``, ``bad``; NULL for a run nobody labelled)
LABELLED_RUNS = (
    "(SELECT r.*, l.verdict AS label FROM runs AS r"
    " LEFT JOIN latest_labels AS l ON l.run_id = r.run_id) AS runs"
)
_LABEL = re.compile(r"\blabel\b", re.I)


class BadPredicateError(TraceReplayError):
    """A ``--where`` predicate DuckDB rejects, or one that is more than a predicate."""


def matching_run_ids(
    store: Store,
    predicate: str,
    limit: int | None = None,
    *,
    also: str = "",
    params: Sequence[Any] = (),
) -> list[str]:
    """Ids of the recorded (non-replay) runs for which ``predicate`` holds, oldest first.

    The predicate is placed in ``SELECT run_id FROM runs WHERE (<predicate>)``, where ``runs``
    also has a ``label`` column (the run's latest label: ``good``, ``bad`` or NULL) when the
    predicate names it (``label = 'bad'``); the statement
    must parse as exactly one SELECT, and it runs in a read-only transaction (rolled back), so
    it can read (subqueries over other tables are fine) but never write. ``also`` is a
    condition of the caller's own (never user text), with ``params`` for its ``?``.
    """
    pred = predicate.strip()
    if not pred:
        raise BadPredicateError(
            "--where needs a SQL predicate over runs, e.g. \"status = 'failed'\""
        )
    if limit is not None and limit < 1:
        raise BadPredicateError(f"--limit must be at least 1, not {limit}")
    sql = (
        f"SELECT run_id FROM {LABELLED_RUNS if _LABEL.search(pred) else 'runs'} WHERE (\n{pred}\n) AND kind IS DISTINCT FROM 'replay'\n"
        + (f"AND ({also})\n" if also else "")
        + "ORDER BY started_at NULLS LAST, run_id"
        + (f" LIMIT {int(limit)}" if limit else "")
    )
    try:
        statements = store.con.extract_statements(sql)
    except duckdb.Error as exc:
        raise BadPredicateError(f"bad --where predicate: {duckdb_message(exc)}") from None
    if len(statements) != 1 or statements[0].type != duckdb.StatementType.SELECT:
        raise BadPredicateError(
            "bad --where predicate: it must be one SQL condition, not statements"
        )
    store.deny_host_access(lock=False)  # a predicate reads the store, never this machine
    with store.transaction(read_only=True):
        try:
            rows = store.con.execute(sql, list(params)).fetchall()
        except StatementError as exc:
            raise BadPredicateError(f"bad --where predicate: {duckdb_message(exc)}") from None
    return [r[0] for r in rows]


def duckdb_message(exc: BaseException) -> str:
    """DuckDB's error on one line, without the echoed query and caret lines."""
    text = str(exc).split("\nLINE ", 1)[0]
    return " ".join(text.split())
