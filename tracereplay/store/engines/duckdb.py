"""The DuckDB engine: a store in one file on this machine, the embedded default.

- opening holds the file lock (``<db>.lock``) for as long as the store is open: one process
  at a time has the file, so ``lock(keys)`` has nothing to do; a file known damaged (the note
  of ``store/damage.py``) or cut short is refused before anything is written into it;
- the file is ATTACHed with ``ROW_GROUP_SIZE`` rows per row group (see there);
- ``con`` is DuckDB's connection behind ``DuckDBConnection``, which raises the store's
  statement errors (``store/errors.py``) instead of DuckDB's, the message kept;
- bulk inserts register the Arrow table and run one ``INSERT ... SELECT`` over it; rows that
  must not repeat are filtered by a join on the stored rows of their traces only: the tables
  have no key index on purpose (DuckDB loads a key's whole index to insert a row, so memory
  would grow with the store);
- a statement failing on a full disk or a damaged file becomes a one-line ``StoreError``
  (``store_failure``) wherever the command was.
"""

from __future__ import annotations

import re
import time
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

from tracereplay.errors import StoreBusyError, StoreError, one_line
from tracereplay.store import damage
from tracereplay.store.engines.base import not_stored
from tracereplay.store.errors import (
    ConstraintError,
    ConversionError,
    ReadOnlyTransactionError,
    SqlSyntaxError,
    StatementError,
    UnknownNameError,
)
from tracereplay.store.lock import file_lock
from tracereplay.store.paths import lock_path
from tracereplay.store.rows import first_rows

if TYPE_CHECKING:
    import pyarrow as pa

#: rows per DuckDB row group (DuckDB's default is 122,880). A big transaction writes its full
#: row groups to the file as it goes and the rest at COMMIT; smaller groups move most of that
#: work from the COMMIT, where nothing else can happen, to the inserts, which overlap the
#: worker processes decoding the next parts.
ROW_GROUP_SIZE = 16_384
#: DuckDB before 2.0 could fail on a file whose last row group is bigger than the size it was
#: attached with (duckdb/duckdb#22109): older versions keep DuckDB's defaults
_SMALL_ROW_GROUPS = int(duckdb.__version__.split(".")[0]) >= 2


def statement_error(exc: duckdb.Error) -> StatementError:
    """DuckDB's error as the store's class for it (its message kept whole)."""
    message = str(exc)
    if isinstance(exc, duckdb.ParserException):
        return SqlSyntaxError(message)
    if isinstance(exc, duckdb.CatalogException):
        return UnknownNameError(message)
    if isinstance(exc, duckdb.ConstraintException):
        return ConstraintError(message)
    if isinstance(exc, duckdb.ConversionException):
        return ConversionError(message)
    if isinstance(exc, duckdb.TransactionException) and "read-only" in message:
        return ReadOnlyTransactionError(message)
    return StatementError(message)


class DuckDBConnection:
    """DuckDB's connection with the store's errors: ``execute`` gives DuckDB's own result
    (``fetchall``, ``fetch_arrow_table``...); anything else is DuckDB's connection's."""

    __slots__ = ("raw",)

    def __init__(self, raw: duckdb.DuckDBPyConnection) -> None:
        self.raw = raw

    def execute(
        self, sql: str, params: Sequence[Any] | Mapping[str, Any] | None = None
    ) -> duckdb.DuckDBPyConnection:
        try:
            return self.raw.execute(sql, params)
        except duckdb.Error as exc:
            raise statement_error(exc) from exc

    execute_native = execute  # the store's dialect is DuckDB's

    def sql(
        self, query: str, params: Sequence[Any] | None = None, *, native: bool = False
    ) -> duckdb.DuckDBPyRelation | None:
        """The relation of ``query``: read lazily, so an error while reading its rows is
        DuckDB's own (as on every engine: rows come to the output formats as relations)."""
        try:
            return self.raw.sql(query, params=params)
        except duckdb.Error as exc:
            raise statement_error(exc) from exc

    def extract_statements(self, sql: str) -> list[duckdb.Statement]:
        return self.raw.extract_statements(sql)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.raw, name)


def _attach(path: Path) -> duckdb.DuckDBPyConnection:
    """A connection to the store file, attached under its usual name (the file's stem, as
    ``duckdb.connect(path)`` would name it) with ``ROW_GROUP_SIZE``, and in use."""
    if not _SMALL_ROW_GROUPS:
        return duckdb.connect(str(path))
    con = duckdb.connect()
    try:
        alias = '"' + path.stem.replace('"', '""') + '"'
        target = str(path).replace("'", "''")
        con.execute(f"ATTACH '{target}' AS {alias} (ROW_GROUP_SIZE {ROW_GROUP_SIZE})")
        con.execute(f"USE {alias}")
    except BaseException:
        con.close()
        raise
    return con


def _connect(path: Path, timeout: float) -> duckdb.DuckDBPyConnection:
    deadline = time.monotonic() + timeout
    while True:
        try:
            return _attach(path)
        except duckdb.IOException as exc:
            # Another (non-tracereplay) process holds DuckDB's own lock: wait for it.
            if "lock" in str(exc).lower() and time.monotonic() < deadline:
                time.sleep(0.05)
                continue
            if "lock" in str(exc).lower():
                raise StoreBusyError(f"{path} is locked by another process") from None
            failure = _opening_failure(path, exc)
            if failure is not None:
                raise failure from None
            raise StoreError(f"cannot open {path}: {one_line(exc)}") from None
        except duckdb.Error as exc:
            failure = _opening_failure(path, exc)
            if failure is not None:
                raise failure from None
            raise StoreError(f"cannot open {path}: {one_line(exc)}") from None


@contextmanager
def open_engine(
    path: Path, *, timeout: float = 60.0, create: bool = True, damaged_ok: bool = False
) -> Iterator[DuckDBEngine]:
    """The store file locked and attached; unlocked and closed on exit. A failure about the
    file (full disk, damage) met while the caller works comes out as ``store_failure``'s."""
    if not create and not path.exists():
        raise StoreError(f"no tracereplay store at {path}")
    if path.exists() and path.is_dir():
        raise StoreError(f"{path} is a directory, not a DuckDB file")
    path.parent.mkdir(parents=True, exist_ok=True)
    with file_lock(lock_path(path), timeout=timeout):
        if not damaged_ok:
            damage.refuse_if_recorded(path)
        # a write-ahead log replayed at attach may use blocks not written to the file yet
        judge_size = not damaged_ok and not path.with_name(path.name + ".wal").exists()
        con = DuckDBConnection(_connect(path, timeout))
        try:
            if judge_size and (cut := damage.truncation(con, path)) is not None:
                damage.record(path, cut)
                raise damage.damaged(path, cut)
            try:
                yield DuckDBEngine(con, path)
            except (duckdb.Error, StatementError) as exc:
                failure = store_failure(path, exc)
                if failure is None:
                    raise
                raise failure from None
        finally:
            con.close()


class DuckDBEngine:
    """The ``Engine`` of a DuckDB file (see the module docstring)."""

    name = "duckdb"

    def __init__(self, con: DuckDBConnection, path: Path) -> None:
        self.con = con
        self.path = path
        self.shown = str(path)

    def configure(self) -> None:
        self.con.execute("SET TimeZone = 'UTC'")
        # spans and runs are mostly JSON text: zstd makes commits (checkpoints) much
        # cheaper and the file much smaller than DuckDB's default dictionary/FSST picks
        self.con.execute("SET force_compression = 'zstd'")
        # a big transaction writes each row group to the file as soon as it is full
        # (DuckDB's default buffers five): see ROW_GROUP_SIZE
        if _SMALL_ROW_GROUPS:
            self.con.execute("SET write_buffer_row_group_count = 1")

    def failure(self, exc: BaseException) -> StoreError | None:
        return store_failure(self.path, exc)

    def begin(self, read_only: bool) -> None:
        self.con.execute("BEGIN TRANSACTION READ ONLY" if read_only else "BEGIN TRANSACTION")

    def commit(self) -> None:
        try:
            self.con.execute("COMMIT")
        except BaseException:
            self.rollback()
            raise

    def rollback(self) -> None:
        try:  # a failed COMMIT (a full disk) ends the transaction itself
            self.con.execute("ROLLBACK")
        except StatementError:
            pass

    def lock(self, keys: Collection[str]) -> None:
        """Nothing to do: the file lock already keeps every other writer out."""

    def append_table(
        self, table: str, data: pa.Table, *, where: str = "", params: Sequence[Any] = ()
    ) -> int:
        cols = ", ".join(f'"{c}"' for c in data.column_names)
        name = f"_tr_{table}_batch"
        raw = self.con.raw
        raw.register(name, data)
        try:
            rows = self.con.execute(
                f"INSERT INTO {table} ({cols}) SELECT {cols} FROM {name} AS b"
                + (f" WHERE {where}" if where else ""),
                list(params),
            ).fetchall()
        except BaseException:
            try:  # in a transaction the failure aborted: the failure is what to report
                raw.unregister(name)
            except duckdb.Error:
                pass
            raise
        raw.unregister(name)
        return int(rows[0][0]) if rows else 0

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
        """No key index (see the module docstring): the join holds only the data and the
        stored rows of ``traces``."""
        if not distinct:
            data = first_rows(data, key)
        if not traces:
            return self.append_table(table, data)
        return self.append_table(
            table, data, where=not_stored(table, key, where), params=[list(traces)]
        )

    def insert_columns(self, table: str, columns: Mapping[str, Sequence[Any]]) -> None:
        """One statement: DuckDB zips the ``unnest`` of each list, typed by its values (a
        suite import needs no pyarrow, a fifth of a second to import with numpy)."""
        names = ", ".join(f'"{c}"' for c in columns)
        values = ", ".join("unnest(?)" for _ in columns)
        self.con.execute(
            f"INSERT INTO {table} ({names}) SELECT {values}", [list(v) for v in columns.values()]
        )

    def shared_prefixes(self, table: str, column: str, prefixes: Sequence[str]) -> set[str]:
        """One columnar scan of ``column`` (no index to look prefixes up in)."""
        length = len(prefixes[0]) if prefixes else 0
        rows = self.con.execute(
            f"SELECT substr({column}, 1, ?) AS p FROM {table}"  # noqa: S608 (fixed names)
            f" WHERE substr({column}, 1, ?) IN (SELECT unnest(?)) GROUP BY p HAVING count(*) > 1",
            [length, length, list(prefixes)],
        ).fetchall()
        return {r[0] for r in rows}

    @contextmanager
    def settings(self, **values: str | int) -> Iterator[None]:
        """DuckDB's settings among ``values`` (``threads=1``) for the block, then put back as
        they were. Names DuckDB has not (a server's ``work_mem``) mean nothing to it."""
        rows = self.con.execute(
            "SELECT name, value FROM duckdb_settings() WHERE list_contains(?, name)",
            [list(values)],
        ).fetchall()
        for name, _ in rows:
            self.con.execute(f"SET {name} = '{values[name]}'")
        try:
            yield
        finally:
            for name, old in rows:
                self.con.execute(f"SET {name} = '{old}'")

    def deny_host_access(self, *, lock: bool = True) -> None:
        """No files of this machine (``read_csv``, ``read_text``, ``glob``, ``COPY``,
        ``ATTACH``...), no network, no extensions installed or loaded from now on."""
        settings = [
            "autoinstall_known_extensions = false",
            "autoload_known_extensions = false",
            "enable_external_access = false",
        ]
        if lock:
            settings.append("lock_configuration = true")
        for setting in settings:
            self.con.execute(f"SET {setting}")

    def spool_key(self, key: str) -> str:
        return key  # the file is this machine's: so is every segment it stores


_DISK_FULL = re.compile(r"no space left|disk (is )?full|quota exceeded|file too large", re.I)
_DAMAGED = re.compile(
    r"could not read enough bytes|corrupt|checksum|not a valid duckdb|failed to load metadata"
    r"|invalid (block|pointer|metadata)|serialization error",
    re.I,
)


def _opening_failure(path: Path, exc: BaseException) -> StoreError | None:
    """``store_failure`` for a file DuckDB could not attach; one that is no DuckDB file at all
    is not a damaged store but the wrong file ("cannot open")."""
    if "not a valid duckdb" in str(exc).lower():
        return None
    return store_failure(path, exc)


def store_failure(path: Path, exc: BaseException) -> StoreError | None:
    """A one-line ``StoreError`` for a DuckDB failure that is about the file, not the work:
    a full disk, or a damaged (cut short, overwritten) file. ``None`` for anything else."""
    message = one_line(exc)
    if _DISK_FULL.search(message):
        return StoreError(
            f"the disk holding {path} is full ({message[:160]}); nothing of the interrupted "
            "work was stored and the store is as it was: free some space and run the command "
            "again"
        )
    if _DAMAGED.search(message):
        damage.record(path, message)
        return damage.damaged(path, message)
    return None
