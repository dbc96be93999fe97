"""The read-only guard of ``tracereplay sql``: which statements may run without ``--write``.

DuckDB parses the text (``extract_statements``) and each statement's type decides: only
queries (``SELECT``, ``WITH``, ``FROM``, ``VALUES``, ``DESCRIBE``, ``SHOW``, ``SUMMARIZE``,
``UNPIVOT``, ``PIVOT ... IN (...)``) and ``EXPLAIN`` of such a query are read-only. A ``PIVOT``
without an ``IN`` list first creates an enum type, so it counts as a write. Everything else
(``INSERT``, ``UPDATE``, ``DELETE``, ``CREATE``, ``DROP``, ``ALTER``, ``COPY``, ``EXPORT``,
``ATTACH``, ``DETACH``, ``PRAGMA``, ``SET``, ``CALL``, ``INSTALL``/``LOAD``, transactions, ...)
is refused. The statements then run inside a ``READ ONLY`` transaction that is rolled back, so
the store cannot change even through a path the parser check does not foresee.
"""

from __future__ import annotations

import re

import duckdb

from tracereplay.errors import TraceReplayError, one_line

_READ_ONLY = {duckdb.StatementType.SELECT}
_EXPLAIN = re.compile(r"^\s*EXPLAIN(\s+ANALY[SZ]E)?\b", re.IGNORECASE)

_KEYWORD = re.compile(r"^\s*(?:(?:--[^\n]*\n|/\*.*?\*/)\s*)*([A-Za-z]+)", re.DOTALL)


class SqlError(TraceReplayError):
    """DuckDB rejected the SQL (parse, bind or run time): its message on one line."""


class ReadOnlyError(TraceReplayError):
    """A statement that can change the store (or the session) was given without ``--write``."""


def split_statements(con: duckdb.DuckDBPyConnection, sql: str) -> list[duckdb.Statement]:
    """The statements of ``sql`` as DuckDB parses them; a parse error becomes ``SqlError``."""
    try:
        statements = con.extract_statements(sql)
    except duckdb.Error as exc:
        raise SqlError(one_line(exc)) from None
    except ValueError as exc:  # a statement type the Python client does not know
        raise ReadOnlyError(f"cannot tell whether this statement only reads ({exc})") from None
    if not statements:
        raise SqlError("the SQL holds no statement")
    return statements


def _describe(statement: duckdb.Statement) -> str:
    """The statement's leading keyword (``INSERT``, ``SET``, ``EXPLAIN``...)."""
    match = _KEYWORD.match(statement.query)
    return match.group(1).upper() if match else statement.type.name


def _is_read_only(con: duckdb.DuckDBPyConnection, statement: duckdb.Statement) -> bool:
    if statement.type in _READ_ONLY:
        return True
    if statement.type is duckdb.StatementType.EXPLAIN:
        match = _EXPLAIN.match(statement.query)
        if not match:
            return False
        inner = statement.query[match.end() :]
        try:
            parsed = con.extract_statements(inner)
        except (duckdb.Error, ValueError):
            return False
        return len(parsed) == 1 and parsed[0].type in _READ_ONLY
    return False


def check_read_only(con: duckdb.DuckDBPyConnection, statements: list[duckdb.Statement]) -> None:
    """Raise ``ReadOnlyError`` naming the first statement that is not a plain query."""
    for statement in statements:
        if not _is_read_only(con, statement):
            raise ReadOnlyError(
                f"refused: {_describe(statement)} is not a read-only statement "
                "(tracereplay sql only reads unless --write is given)"
            )
