"""What a statement on the store raises, whichever engine runs it.

Each engine turns its driver's exceptions (``duckdb.Error``, ``psycopg.Error``) into these at
its connection (``engines/duckdb.py``, ``engines/postgres.py``), the driver's message kept, so
the code above the engines catches one set of classes and never imports a driver to do it.

They are not ``TraceReplayError``: a failed statement is not yet a message for the user; the
caller that knows what it meant (a bad ``--where``, user SQL, a full disk) makes it one.
"""

from __future__ import annotations


class StatementError(Exception):
    """A statement the engine refused or could not finish; ``str()`` is the engine's message."""


class SqlSyntaxError(StatementError):
    """The statement does not parse."""


class UnknownNameError(StatementError):
    """A table, column or function the store does not have (an old schema, a typo)."""


class ConstraintError(StatementError):
    """A key already stored, a ``NOT NULL`` column left empty."""


class ReadOnlyTransactionError(StatementError):
    """A write inside a read-only transaction (``store.transaction(read_only=True)``)."""


class ConversionError(StatementError):
    """A value that is not of its column's or operator's type."""


__all__ = [
    "ConstraintError",
    "ConversionError",
    "ReadOnlyTransactionError",
    "SqlSyntaxError",
    "StatementError",
    "UnknownNameError",
]
