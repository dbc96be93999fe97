"""Running user SQL against the store: read-only by default, DuckDB errors as one line."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, nullcontext

import duckdb

from tracereplay.query.guard import SqlError, check_read_only, one_line, split_statements
from tracereplay.query.sqltext import strip_terminator
from tracereplay.store.db import Store
from tracereplay.store.errors import StatementError


@contextmanager
def run_sql(
    store: Store, sql: str, *, write: bool = False
) -> Iterator[duckdb.DuckDBPyRelation | None]:
    """Run ``sql`` (one or more statements) and yield the last statement's result, or None when
    it returns nothing (``CREATE``, ``SET``...). Earlier statements' results are discarded.

    Without ``write`` every statement must be a query (see ``tracereplay.query.guard``) and all
    of them run in a ``READ ONLY`` transaction that is rolled back afterwards. With ``write``
    they run one by one, each committed as it completes, like DuckDB's own shell.

    A query's rows are produced while the caller reads them, so DuckDB errors raised then are
    turned into ``SqlError`` too. The caller must close what it reads before the block ends.
    """
    con = store.con
    statements = split_statements(con, sql)
    if not write:
        check_read_only(con, statements)
    with nullcontext() if write else store.transaction(read_only=True):
        try:
            result: duckdb.DuckDBPyRelation | None = None
            native = {"native": True} if store.engine != "duckdb" else {}
            for statement in statements:
                # a server store runs the user's SQL as written, in its own dialect
                result = con.sql(strip_terminator(statement.query), **native)
            yield result
        # a relation's rows are read lazily, by DuckDB on every engine: its errors are DuckDB's
        except (StatementError, duckdb.Error) as exc:
            # a damaged file or a full disk says so, not as SQL
            raise store.failure(exc) or SqlError(one_line(exc)) from None
