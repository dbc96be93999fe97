"""The PostgreSQL engine: a store on a database server, for many machines writing one history.

``PostgresEngine`` is the ``Engine`` (``engines/base.py``) of a server store; it talks to
PostgreSQL through psycopg 3:

- ``con`` is a ``PgConnection``: ``execute(sql, params)`` with the store's SQL carried over by
  ``pg_sql.to_postgres``; ``sql(query)`` gives the rows as an embedded DuckDB relation (built
  from Arrow), so the output formats, Parquet export and the columnar scorer read them as
  they read the DuckDB store's. psycopg's errors come out as the store's statement errors
  (``store/errors.py``, the message on one line), as DuckDB's do on the DuckDB engine.
- bulk inserts (``append_table``) ``COPY`` the Arrow rows into a session temporary table, then
  one ``INSERT ... SELECT`` (the same statement shape DuckDB runs over a registered table);
- rows that must be unique (spans, logs, runs, cases) have their key declared, and keyed
  inserts are ``ON CONFLICT DO NOTHING``: two writers inserting the same span store it once;
- ``spans`` is partitioned by day (``pg_partitions``): a write creates the partitions of its
  spans' days before it inserts them;
- ``lock(keys)``: transaction-scoped advisory locks (``pg_advisory_xact_lock``) taken in one
  order, so two writers touching the same trace, suite or case run one after the other and
  the second sees the first's committed rows (READ COMMITTED: each statement's snapshot);
- transactions are the same ``BEGIN``/``COMMIT`` the DuckDB engine issues (autocommit
  connection, explicit blocks); no file lock: the server keeps writers apart.

What stays local to each machine: the spool of agents recording on it and the locks of its
processes, under the URL's local anchor (``paths.StoreUrl``).
"""

from __future__ import annotations

import socket
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import duckdb
import pyarrow as pa

from tracereplay.errors import StoreError, one_line
from tracereplay.extras import require_extra
from tracereplay.store.engines import pg_partitions
from tracereplay.store.engines.base import not_stored
from tracereplay.store.engines.pg_sql import to_postgres
from tracereplay.store.errors import (
    ConstraintError,
    ConversionError,
    ReadOnlyTransactionError,
    SqlSyntaxError,
    StatementError,
    UnknownNameError,
)
from tracereplay.store.paths import StoreUrl
from tracereplay.store.rows import first_rows

MIGRATIONS = "postgres"
#: keys one write locks one by one at most (see ``PostgresEngine.lock``), and the key of all
MANY_KEYS = 256
ALL_KEYS = -0x7472616365726570  # "tracerep": outside what hashtextextended is likely to hit


def statement_error(exc: Exception) -> StatementError:
    """psycopg's error as the store's class for it (the message on one line)."""
    import psycopg.errors as pe

    message = one_line(exc)
    if isinstance(exc, pe.SyntaxError):
        return SqlSyntaxError(message)
    if isinstance(exc, (pe.UndefinedTable, pe.UndefinedColumn, pe.UndefinedFunction)):
        return UnknownNameError(message)
    if isinstance(exc, (pe.UniqueViolation, pe.IntegrityError)):
        return ConstraintError(message)
    if isinstance(exc, pe.ReadOnlySqlTransaction):
        return ReadOnlyTransactionError(message)
    if isinstance(exc, pe.DataError):
        return ConversionError(message)
    return StatementError(message)


class _Result:
    """A finished statement's rows (what DuckDB's cursor gives: ``fetchall``, ``description``)."""

    def __init__(
        self, rows: list[tuple[Any, ...]], description: list[tuple[Any, ...]] | None, rowcount: int
    ):
        self._rows = rows
        self.description = description
        self.rowcount = rowcount

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self._rows

    def fetchone(self) -> tuple[Any, ...] | None:
        return self._rows[0] if self._rows else None


class PgConnection:
    """The store's connection to PostgreSQL, shaped like the DuckDB connection it stands for."""

    def __init__(self, raw: Any) -> None:
        self.raw = raw
        self._local = duckdb.connect()  # parses statements, formats results

    def execute(self, sql: str, params: Sequence[Any] | Mapping[str, Any] | None = ()) -> _Result:
        """Run the store's SQL (DuckDB's dialect: ``?``, or ``$name`` with a dict of params)
        carried over to PostgreSQL (``pg_sql.to_postgres``)."""
        if isinstance(params, Mapping):
            return self.execute_native(to_postgres(sql, bool(params)), dict(params) or None)
        values = list(params or ())
        return self.execute_native(to_postgres(sql, bool(values)), values)

    def execute_native(
        self, sql: str, params: Sequence[Any] | dict[str, Any] | None = None
    ) -> _Result:
        """Run PostgreSQL SQL as it is (``%s`` parameters; none: the text is sent verbatim)."""
        import psycopg

        try:
            with self.raw.cursor() as cur:
                cur.execute(sql, params if params else None)
                if cur.description is None:
                    return _Result([], None, cur.rowcount)
                desc = [(c.name, c.type_code) for c in cur.description]
                return _Result(cur.fetchall(), desc, cur.rowcount)
        except psycopg.Error as exc:
            raise statement_error(exc) from None

    def sql(
        self, query: str, params: Sequence[Any] | None = None, *, native: bool = False
    ) -> duckdb.DuckDBPyRelation | None:
        """The rows of ``query`` as a DuckDB relation (None for a statement without rows)."""
        result = (
            self.execute_native(query, list(params) if params else None)
            if native
            else self.execute(query, params or ())
        )
        if result.description is None:
            return None
        table = rows_to_arrow([d[0] for d in result.description], result.fetchall())
        return self._local.from_arrow(table)

    def local_view(self, name: str, query: str) -> duckdb.DuckDBPyConnection:
        """The rows of ``query`` registered as ``name`` in the embedded DuckDB connection,
        which is returned (to write them out with DuckDB's ``COPY``)."""
        relation = self.sql(query)
        assert relation is not None
        self._local.register(name, relation.to_arrow_table())
        return self._local

    def extract_statements(self, sql: str) -> list[duckdb.Statement]:
        return self._local.extract_statements(sql)

    def close(self) -> None:
        self._local.close()
        self.raw.close()


def rows_to_arrow(names: list[str], rows: list[tuple[Any, ...]]) -> pa.Table:
    """Rows fetched from PostgreSQL as an Arrow table (types from the values)."""
    unique = []
    for n in names:
        name, i = n, 1
        while name in unique:
            name, i = f"{n}_{i}", i + 1
        unique.append(name)
    columns = list(zip(*rows)) if rows else [() for _ in names]
    arrays = []
    for values in columns:
        try:
            arrays.append(pa.array(list(values)))
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            arrays.append(pa.array([None if v is None else str(v) for v in values], pa.string()))
    return pa.table(dict(zip(unique, arrays))) if names else pa.table({})


def connect(url: str) -> Any:
    """A psycopg connection to ``url`` (autocommit: the store issues its own BEGIN/COMMIT;
    ``json`` columns read back as their text, as DuckDB gives them)."""
    require_extra("postgres", ["psycopg", "sqlglot"], "a PostgreSQL store")
    import psycopg
    from psycopg.adapt import Loader

    class _Text(Loader):
        def load(self, data: Any) -> str:
            return bytes(data).decode()

    class _Number(Loader):
        """``numeric`` (sums, averages of integers) as DuckDB gives them: an int when whole
        (a sum of counts), else a float, never a ``Decimal``."""

        def load(self, data: Any) -> int | float:
            text = bytes(data).decode()
            if "." in text or "e" in text.lower() or "n" in text.lower():
                return float(text)
            return int(text)

    try:
        raw = psycopg.connect(url, autocommit=True, connect_timeout=10)
    except psycopg.Error as exc:
        raise StoreError(f"cannot connect to {StoreUrl(url).shown}: {one_line(exc)}") from None
    for name in ("json", "jsonb"):
        raw.adapters.register_loader(name, _Text)
    raw.adapters.register_loader("numeric", _Number)
    raw.execute("SET TimeZone = 'UTC'")
    return raw


@contextmanager
def open_engine(
    url: StoreUrl, *, timeout: float = 60.0, create: bool = True, damaged_ok: bool = False
) -> Iterator[PostgresEngine]:
    """The server store connected; disconnected on exit. ``timeout``, ``create`` and
    ``damaged_ok`` are the file engine's: a server has no file lock to wait for, creates
    nothing but its schema (the migrations) and keeps its own data whole."""
    con = PgConnection(connect(str(url)))
    try:
        yield PostgresEngine(con, url)
    finally:
        con.close()


class PostgresEngine:
    """The ``Engine`` of a PostgreSQL store (see the module docstring)."""

    name = "postgres"

    def __init__(self, con: PgConnection, url: StoreUrl) -> None:
        self.con = con
        self.path = url
        self.shown = url.shown
        self._host = socket.gethostname()
        self._open = False  # a transaction is open (``begin`` ... ``commit``/``rollback``)
        self._days: set[int] | None = None  # the spans partitions' days this transaction saw

    def configure(self) -> None:
        """Nothing to set: ``connect`` set the session's time zone."""

    def failure(self, exc: BaseException) -> StoreError | None:
        """The server keeps its files: a failed statement is about the work."""
        return None

    def begin(self, read_only: bool) -> None:
        self.con.execute_native("BEGIN TRANSACTION READ ONLY" if read_only else "BEGIN TRANSACTION")
        self._open = True

    def commit(self) -> None:
        self._days = None
        try:
            self.con.execute_native("COMMIT")
        except BaseException:
            self.rollback()
            raise
        self._open = False

    def rollback(self) -> None:
        self._days = None
        self._open = False
        try:
            self.con.execute_native("ROLLBACK")
        except StatementError:
            pass

    def lock(self, keys: Collection[str]) -> None:
        """Advisory locks on ``keys`` (``trace:<id>``, ``suite:<id>``...) until the transaction
        ends, taken in hash order so two writers never wait on each other in a cycle.

        PostgreSQL's lock table is small (``max_locks_per_transaction`` x connections): a write
        touching more than ``MANY_KEYS`` keys (a big file ingested whole) takes one exclusive
        lock on every key at once instead (``ALL_KEYS``), which the others take shared."""
        if not keys or not self._open:
            return
        unique = sorted(set(keys))
        if len(unique) > MANY_KEYS:
            self.con.execute_native("SELECT pg_advisory_xact_lock(%s)", [ALL_KEYS])
            return
        self.con.execute_native(
            "SELECT pg_advisory_xact_lock_shared(%s), (SELECT count(pg_advisory_xact_lock(k))"
            " FROM (SELECT DISTINCT hashtextextended(x, 0) AS k FROM unnest(%s::text[]) AS x"
            " ORDER BY k) AS s)",
            [ALL_KEYS, unique],
        )

    def append_table(
        self,
        table: str,
        data: pa.Table,
        *,
        where: str = "",
        params: Sequence[Any] = (),
        conflict: str = "",
    ) -> int:
        """``data`` ``COPY``'d into a session temporary table, then one ``INSERT ... SELECT``
        from it (the statement DuckDB runs over a registered table); ``conflict``: an
        ``ON CONFLICT`` clause."""
        if not data.num_rows:
            return 0
        if table == "spans":
            self._ensure_partitions(data["start_time_unix_nano"])
        batch = self._load_batch(table, data)
        cols = ", ".join(f'"{c}"' for c in data.column_names)
        sql = (
            f"INSERT INTO {table} ({cols}) SELECT {cols} FROM {batch} AS b"
            + (f" WHERE {where}" if where else "")
            + conflict
        )
        return self.con.execute(sql, list(params)).rowcount

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
        """The table's declared key decides (``ON CONFLICT DO NOTHING``), so concurrent
        writers cannot store a row twice.

        The key of ``spans`` holds the start time (its partition key): a span of ``traces``
        stored with another start time is also looked for by its ids, in ``where`` (the
        batch's ``TimeWindow``: its days' partitions only), as on DuckDB."""
        if not distinct:
            data = first_rows(data, key)
        conflict = " ON CONFLICT DO NOTHING"
        if table != "spans" or not traces:
            return self.append_table(table, data, conflict=conflict)
        return self.append_table(
            table,
            data,
            where=not_stored(table, key, where),
            params=[list(traces)],
            conflict=conflict,
        )

    def insert_columns(self, table: str, columns: Mapping[str, Sequence[Any]]) -> None:
        """Rows given column by column, COPY'd in (as ``append_table``'s, without Arrow)."""
        if not columns or not len(next(iter(columns.values()))):
            return
        batch = self._copy_batch(table, list(columns), [list(v) for v in columns.values()])
        cols = ", ".join(f'"{c}"' for c in columns)
        self.con.execute(f"INSERT INTO {table} ({cols}) SELECT {cols} FROM {batch}")

    def shared_prefixes(self, table: str, column: str, prefixes: Sequence[str]) -> set[str]:
        """Each prefix looked up as a range of ``column``'s bytewise index (``<table>_id_c``,
        ``COLLATE "C"``: the rows a prefix begins are one range there, whatever the database's
        collation), two rows at most: ``runs`` costs what the rows it shows cost, not the
        store's size."""
        if not prefixes:
            return set()
        his = [p[:-1] + chr(ord(p[-1]) + 1) for p in prefixes]  # the first string past p...
        rows = self.con.execute_native(
            "SELECT lo FROM unnest(%s::text[], %s::text[]) AS b(lo, hi) WHERE (SELECT count(*)"
            f' FROM (SELECT 1 FROM {table} WHERE {column} COLLATE "C" >= b.lo'  # noqa: S608
            f' AND {column} COLLATE "C" < b.hi LIMIT 2) AS hits) > 1',
            [list(prefixes), his],
        ).fetchall()
        return {r[0] for r in rows}

    @contextmanager
    def settings(self, **values: str | int) -> Iterator[None]:
        """The server's settings among ``values`` (``work_mem``) for the block, this session's
        only (``set_config``; within a transaction, that transaction's), then put back as they
        were. Names the server has not (DuckDB's threads, checkpoints) mean nothing to it."""
        rows = self.con.execute_native(
            "SELECT name, current_setting(name) FROM pg_settings WHERE name = ANY(%s)",
            [list(values)],
        ).fetchall()

        def put(pairs: Iterable[tuple[str, str]]) -> None:
            for name, value in pairs:
                self.con.execute_native("SELECT set_config(%s, %s, %s)", [name, value, self._open])

        put((name, str(values[name])) for name, _ in rows)
        try:
            yield
        finally:
            put(rows)

    def deny_host_access(self, *, lock: bool = True) -> None:
        """The server's own privileges govern what SQL reaches: nothing on this machine is
        reachable from SQL run on the server (give ``tracereplay sql`` users a role without
        ``pg_read_server_files``)."""

    def spool_key(self, key: str) -> str:
        """``<host>:<segment>``: each machine drains its own spool into the shared store."""
        return f"{self._host}:{key}"

    def _ensure_partitions(self, start_ns: pa.ChunkedArray) -> None:
        """Attach the spans partitions of the days of ``start_ns`` that do not exist yet, in
        the open transaction or, outside one, in a transaction of their own.

        The days known are read from the catalog once per transaction (a partition another
        process created or dropped since is seen at the next one)."""
        days = pg_partitions.days_of(start_ns)
        if self._days is None or not days <= self._days:
            self._days = {
                p.lo_ns // pg_partitions.DAY_NS for p in pg_partitions.partitions(self.con)
            }
        missing = days - self._days
        if not missing:
            return
        if self._open:
            self._days |= pg_partitions.create(self.con, missing)
            return
        self.begin(read_only=False)  # the commit forgets the days (``_days``): none to add
        try:
            pg_partitions.create(self.con, missing)
        except BaseException:
            self.rollback()
            raise
        self.commit()

    def _load_batch(self, table: str, data: pa.Table) -> str:
        """``data`` COPY'd into the session's temporary table for ``table`` (emptied first)."""
        columns = []
        for column in data.columns:
            if pa.types.is_timestamp(column.type) and column.type.unit == "ns":
                column = column.cast(pa.timestamp("us", tz=column.type.tz), safe=False)
            columns.append(column.to_pylist())
        return self._copy_batch(table, data.column_names, columns)

    def _copy_batch(self, table: str, names: Sequence[str], columns: list[list[Any]]) -> str:
        """The rows of ``columns`` COPY'd into the session's temporary table for ``table``
        (emptied first); its name."""
        name = f"_tr_{table}_batch"
        cols = ", ".join(f'"{c}"' for c in names)
        raw = self.con.raw
        import psycopg

        try:
            raw.execute(f"CREATE TEMP TABLE IF NOT EXISTS {name} (LIKE {table})")
            raw.execute(f"TRUNCATE {name}")
            with raw.cursor() as cur, cur.copy(f"COPY {name} ({cols}) FROM STDIN") as copy:
                for row in zip(*columns):
                    copy.write_row(row)
        except psycopg.Error as exc:
            raise statement_error(exc) from None
        return name
