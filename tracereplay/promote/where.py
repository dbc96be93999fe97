"""Selecting runs with a user's SQL predicate, without letting it change anything."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import duckdb

from tracereplay.errors import TraceReplayError
from tracereplay.store.db import Store


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

    The predicate is placed in ``SELECT run_id FROM runs WHERE (<predicate>)``; the statement
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
        f"SELECT run_id FROM runs WHERE (\n{pred}\n) AND kind IS DISTINCT FROM 'replay'\n"
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
        except duckdb.Error as exc:
            raise BadPredicateError(f"bad --where predicate: {duckdb_message(exc)}") from None
    return [r[0] for r in rows]


def duckdb_message(exc: BaseException) -> str:
    """DuckDB's error on one line, without the echoed query and caret lines."""
    text = str(exc).split("\nLINE ", 1)[0]
    return " ".join(text.split())
