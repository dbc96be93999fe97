"""What ``Store`` needs of an engine: the interface each module of ``store/engines/`` fills.

``Store`` (``store/db.py``) is engine-neutral: its reads and writes are SQL in DuckDB's
dialect sent through ``engine.con``, its transactions nest in Python, and everything a
database does its own way is a call on the engine below. An engine module holds one class
that satisfies ``Engine`` and a function ``open_engine(target, *, timeout, create,
damaged_ok)``, a context manager that yields the engine connected (and locked, where the
engine needs a lock) and closes it on exit. ``Store.open`` picks the module by the target
(``engines.engine_of``) and imports it then, so a DuckDB file never loads psycopg and no
engine imports ``store/db.py``: a third engine is one more module.

Failed statements raise the classes of ``store/errors.py`` on every engine (each engine's
connection turns its driver's exceptions into them): the code above catches one set.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import duckdb
    import pyarrow as pa

    from tracereplay.errors import StoreError


class Result(Protocol):
    """A finished statement: its rows (``fetchall``), its columns (``description``, pairs
    whose first item is the name) and how many rows it changed (``rowcount``, where known)."""

    description: Any
    rowcount: int

    def fetchall(self) -> list[tuple[Any, ...]]: ...

    def fetchone(self) -> tuple[Any, ...] | None: ...


class Connection(Protocol):
    """How the store's SQL reaches the engine: DuckDB's dialect in, rows out.

    Rows meant for the output formats (``tracereplay sql``, exports, the columnar scorer) come
    back as DuckDB relations on every engine (a server's rows through Arrow into an embedded
    DuckDB), so one writer of CSV, JSON and Parquet serves all engines; DuckDB's parser splits
    and classifies statements for the same reason (``extract_statements``)."""

    def execute(self, sql: str, params: Sequence[Any] | Mapping[str, Any] | None = None) -> Result:
        """Run ``sql`` (DuckDB's dialect; ``?`` or ``$name`` parameters), carried over to the
        engine's own dialect where it has another."""
        ...

    def execute_native(
        self, sql: str, params: Sequence[Any] | Mapping[str, Any] | None = None
    ) -> Result:
        """Run ``sql`` written in the engine's own dialect, as it is (migrations, the
        engine's own bookkeeping)."""
        ...

    def sql(
        self, query: str, params: Sequence[Any] | None = None, *, native: bool = False
    ) -> duckdb.DuckDBPyRelation | None:
        """The rows of ``query`` as a DuckDB relation (None for a statement without rows);
        ``native``: the query is in the engine's own dialect (a user's SQL)."""
        ...

    def extract_statements(self, sql: str) -> list[duckdb.Statement]:
        """The statements of ``sql`` as DuckDB parses them (raises ``duckdb.Error``: the
        parser is DuckDB's on every engine)."""
        ...


class Engine(Protocol):
    """One open store on one engine: what ``Store`` delegates (see the module docstring)."""

    #: the engine's name ("duckdb", "postgres"): migrations are under ``migrations/<name>``
    #: except DuckDB's, which are the folder itself
    name: str
    #: the store's file, or for a server the URL (``paths.StoreUrl``), whose path methods
    #: answer for its local anchor: where this machine's spool and locks are
    path: Path
    #: the store as messages name it (a server URL without its password)
    shown: str
    con: Connection

    def configure(self) -> None:
        """Set the session up for work, once the migrations have run."""
        ...

    def failure(self, exc: BaseException) -> StoreError | None:
        """What a failed statement says about the store itself (a full disk, a damaged
        file) as a one-line ``StoreError``; None when it is about the work."""
        ...

    def begin(self, read_only: bool) -> None:
        """Begin a transaction (``READ ONLY``: every write in it refused)."""
        ...

    def commit(self) -> None:
        """Commit the open transaction; on failure it is rolled back and the error raised."""
        ...

    def rollback(self) -> None:
        """Roll the open transaction back, if the engine still has one (a failed commit may
        have ended it): never raises, the error that led here is the one to report."""
        ...

    def lock(self, keys: Collection[str]) -> None:
        """Hold ``keys`` (``trace:<id>``...) until the open transaction ends, so writers
        touching the same ones go one after the other (a no-op where one writer holds the
        whole store)."""
        ...

    def append_table(
        self, table: str, data: pa.Table, *, where: str = "", params: Sequence[Any] = ()
    ) -> int:
        """Insert the rows of the Arrow table ``data`` (columns matched by name) in one
        statement ``INSERT ... SELECT ... FROM <batch> AS b``; ``where``: only the rows it
        holds for, with ``params``. Returns how many rows were inserted."""
        ...

    def append_new(
        self,
        table: str,
        data: pa.Table,
        key: Sequence[str],
        traces: Collection[str],
        *,
        distinct: bool = False,
        where: str = "",
    ) -> int:
        """Insert the rows of ``data`` whose ``key`` is neither stored nor on an earlier row
        of ``data`` (``distinct``: none repeats within it); the stored rows to compare are
        those of ``traces`` where ``where`` holds (on ``s.``). Returns how many were new."""
        ...

    def insert_columns(self, table: str, columns: Mapping[str, Sequence[Any]]) -> None:
        """Insert rows given column by column (Python values, lists of one length), without
        Arrow."""
        ...

    def shared_prefixes(self, table: str, column: str, prefixes: Sequence[str]) -> set[str]:
        """Which of ``prefixes`` (all of one length) begin more than one ``column``."""
        ...

    def settings(self, **values: str | int) -> AbstractContextManager[None]:
        """The engine's session settings changed for a block, then put back."""
        ...

    def deny_host_access(self, *, lock: bool = True) -> None:
        """From now on, SQL reaches nothing but the store (no files of this machine, no
        network); ``lock``: no setting can be changed either. Cannot be undone."""
        ...

    def spool_key(self, key: str) -> str:
        """The ``spool_offsets`` key of a local spool segment (machines sharing a server
        store each have their own spool)."""
        ...


def not_stored(table: str, key: Sequence[str], where: str = "") -> str:
    """The condition on a batch row ``b`` that no row of ``table`` has its ``key``, among the
    stored rows of the traces given as the statement's one parameter (where ``where`` holds
    on ``s.``): the shape both engines' ``append_new`` filter a batch with."""
    same = " AND ".join(f'b."{k}" = s."{k}"' for k in key)
    return (
        f"NOT EXISTS (SELECT 1 FROM {table} AS s WHERE {same}"
        " AND s.trace_id IN (SELECT unnest(?))" + (f" AND {where})" if where else ")")
    )
