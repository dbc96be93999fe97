"""The store every command shares: opening it on its engine, transactions, and the typed
reads and writes (SQL in DuckDB's dialect; each engine runs it, ``store/engines/``)."""

from __future__ import annotations

import hashlib
import importlib
import uuid
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from tracereplay.errors import (
    AmbiguousIdError,
    BadParameterError,
    NotFoundError,
    StoreError,
    one_line,
)
from tracereplay.lazy import LazyModule
from tracereplay.models import AgentResult, Document, LlmCall, Run
from tracereplay.spans import (
    KIND_BY_NAME,
    STATUS_BY_NAME,
    LogRecord,
    Span,
)
from tracereplay.store import schema
from tracereplay.store.engines import engine_of
from tracereplay.store.errors import StatementError
from tracereplay.store.labels import COLUMNS as LABEL_COLUMNS
from tracereplay.store.labels import Label, default_author, verdict_of
from tracereplay.store.paths import resolve_db_path, spool_dir
from tracereplay.store.rows import (
    RunTables,
    json_text,
    ns_timestamp,
    run_tables,
    spans_table,
    utc,
)

if TYPE_CHECKING:
    import pyarrow as pa

    from tracereplay.store.engines.base import Engine
else:  # loaded by the first Arrow table built: opening the store, or a query, needs none
    pa = LazyModule("pyarrow")


#: each engine's module (``engines/base.py`` says what one holds), imported when it opens a store
_ENGINE_MODULES = {
    "duckdb": "tracereplay.store.engines.duckdb",
    "postgres": "tracereplay.store.engines.postgres",
}


def _loads(value: str | None, default: Any) -> Any:
    return default if value is None else orjson.loads(value)


@dataclass(frozen=True)
class TimeWindow:
    """The start times (ns) a batch's traces can have stored rows at: the batch's own span
    times widened by ``LATE_WINDOW_NS`` either way.

    The tables have no index (see ``append_new``), so finding a trace's stored rows by id
    alone reads the trace ids of the whole table: a cost that grows with the store. Rows are appended roughly in time order and DuckDB keeps
    each row group's min and max start time, so a condition on the start time skips every row
    group outside the window unread: the lookup reads the last ``LATE_WINDOW_NS`` or so of
    traffic, however big the store is. A trace's spans all start within its own duration of
    each other, so for any trace shorter than ``LATE_WINDOW_NS`` the window holds all of them:
    a repeated span (an exporter's retry) has its original's start time, always inside.
    """

    lo_ns: int
    hi_ns: int

    @classmethod
    def around(cls, lo_ns: int, hi_ns: int) -> TimeWindow:
        return cls(max(0, lo_ns - LATE_WINDOW_NS), hi_ns + LATE_WINDOW_NS)

    def spans(self, alias: str = "") -> str:
        """The condition on a spans row (``alias.`` prefix, or none)."""
        return f"{alias}start_time_unix_nano BETWEEN {int(self.lo_ns)} AND {int(self.hi_ns)}"

    def started_at(self, column: str = "started_at") -> str:
        """The condition on a start time (runs and llm_calls ``started_at``, tool_calls
        ``run_started_at``: a run and its calls start within their trace)."""
        lo, hi = int(self.lo_ns) // 1000, int(self.hi_ns) // 1000
        return f"{column} BETWEEN make_timestamptz({lo}) AND make_timestamptz({hi})"


#: how far apart (start times) the spans of one trace may be and still be found together
LATE_WINDOW_NS = 24 * 3600 * 10**9


class Transaction:
    """What ``with store.transaction() as tx:`` gives: the block's handle on its transaction.

    A long job that should make its work durable as it goes (a drain, an ingest of many files)
    runs in one block and calls ``commit()`` at its checkpoints, or ``rollback()`` to drop what
    it did since the last one; either way the block carries on in a new transaction. Only the
    outermost block of a write transaction can.
    """

    def __init__(self, store: Store, read_only: bool, *, nested: bool = False) -> None:
        self.read_only = read_only
        #: an exception left a block nested in this one: the transaction must not commit
        self.failed = False
        self._store = store
        self._nested = nested

    def commit(self) -> None:
        """Commit what the block has done so far; the block goes on in a new transaction."""
        self._check("commit")
        if self.failed:
            raise StoreError("a nested transaction failed: its outer transaction cannot commit")
        self._store._restart(commit=True)

    def rollback(self) -> None:
        """Drop what the block has done since it began or last committed; the block goes on
        in a new transaction."""
        self._check("roll back")
        self._store._restart(commit=False)
        self.failed = False

    def _check(self, verb: str) -> None:
        if self._nested or self.read_only:
            which = "a nested" if self._nested else "a read-only"
            raise StoreError(f"{which} transaction cannot {verb} part of its work")


class Store:
    """An open tracereplay store. Get one with ``Store.open(target)``.

    This class is the engine-neutral interface every command calls: its reads and writes
    are SQL in DuckDB's dialect sent through ``con``, its transactions nest here, and what a
    database does its own way (opening, bulk inserts, locks, settings) is a call on its
    engine (``store/engines/base.py``: ``engines/duckdb.py`` for a file,
    ``engines/postgres.py`` for a server URL)."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self.con = engine.con
        self.path = engine.path
        self._tx: Transaction | None = None  # the outermost open ``transaction()`` block

    @property
    def engine(self) -> str:
        """Which engine holds the store ("duckdb", "postgres")."""
        return self._engine.name

    # ------------------------------------------------------------------ opening
    @classmethod
    @contextmanager
    def open(
        cls,
        db: str | Path | None = None,
        *,
        timeout: float = 60.0,
        create: bool = True,
        damaged_ok: bool = False,
    ) -> Iterator[Store]:
        """Open (a file: lock) and migrate the store; closes (unlocks) on exit.

        A store known to be damaged (see ``store/damage.py``), or cut short, is refused with
        ``DamagedStoreError`` unless ``damaged_ok`` (``tracereplay check``), which also skips
        the migrations: nothing is written into a file that may be damaged.

        The engine is the target's (``engines.engine_of``): a DuckDB file, or a server URL
        (``postgresql://...``, see ``paths.StoreUrl``: no file lock, the server keeps
        writers apart); its module is imported now, so a file never loads psycopg."""
        target = resolve_db_path(db)
        module = importlib.import_module(_ENGINE_MODULES[engine_of(target)])
        opened = module.open_engine(target, timeout=timeout, create=create, damaged_ok=damaged_ok)
        with opened as engine:
            store = cls(engine)
            try:
                if not damaged_ok:
                    schema.migrate(store)
            except StatementError as exc:
                failure = engine.failure(exc)
                if failure is not None:
                    raise failure from None
                raise StoreError(f"cannot upgrade {engine.shown}: {one_line(exc)}") from None
            engine.configure()
            yield store

    @property
    def spool_dir(self) -> Path:
        return spool_dir(self.path)

    def failure(self, exc: BaseException) -> StoreError | None:
        """What a failed statement says about the store itself (a full disk, a damaged file),
        as a one-line ``StoreError``; None when it is about the work (``Engine.failure``)."""
        return self._engine.failure(exc)

    def lock(self, keys: Collection[str]) -> None:
        """Hold ``keys`` (``trace:<id>``, ``suite:<id>``...) until the open transaction ends,
        so two writers touching the same ones go one after the other (outside a transaction:
        nothing to hold). A DuckDB store has one writer at a time already (the file lock)."""
        if keys and self._tx is not None:
            self._engine.lock(keys)

    def deny_host_access(self, *, lock: bool = True) -> None:
        """From now on, SQL on this store cannot reach anything but the store: no files of this
        machine (``read_csv``, ``read_text``, ``glob``, ``COPY``, ``ATTACH``...), no network, no
        extensions installed or loaded; with ``lock``, no setting can be changed either. It
        cannot be undone: open the store again for work that needs more."""
        self._engine.deny_host_access(lock=lock)

    @contextmanager
    def transaction(self, *, read_only: bool = False) -> Iterator[Transaction]:
        """A block whose writes land whole or not at all: the one way to a transaction.

        The outermost block begins a transaction and commits it at the end, or rolls it back
        when an exception leaves the block. A block inside it joins it; DuckDB has no
        savepoints, so an inner block cannot be rolled back on its own: an exception leaving
        it fails the whole transaction, which the outermost block rolls back (and, should the
        exception have been caught in between, reports with a ``StoreError`` rather than
        committing half of the work).

        ``read_only``: a ``READ ONLY`` transaction (DuckDB refuses every write in it), always
        rolled back at the end: for reading a consistent snapshot that nothing can change.
        It cannot be opened inside a write transaction (it would not be read only); a write
        block inside it joins it and its writes are refused.

        A long job commits as it goes with the handle's ``commit()`` (see ``Transaction``).
        """
        outer = self._tx
        if outer is not None:
            if read_only and not outer.read_only:
                raise StoreError(
                    "a read-only transaction cannot be opened inside a write transaction"
                )
            try:
                yield Transaction(self, outer.read_only, nested=True)
            except BaseException:
                outer.failed = True
                raise
            return
        self._engine.begin(read_only)
        tx = self._tx = Transaction(self, read_only)
        try:
            yield tx
        except BaseException:
            self._tx = None
            self._rollback()
            raise
        self._tx = None
        if read_only:
            self._rollback()
        elif tx.failed:
            self._rollback()
            raise StoreError(
                "a nested transaction failed, so its outer transaction was rolled back"
            )
        else:
            self._commit()

    def _commit(self) -> None:
        self._engine.commit()

    def _rollback(self) -> None:
        self._engine.rollback()

    def _restart(self, commit: bool) -> None:
        """End the open transaction (commit or roll it back) and begin the next one."""
        if commit:
            self._commit()
        else:
            self._rollback()
        self._engine.begin(False)

    # ------------------------------------------------------------------ spans and logs
    def insert_spans(self, spans: Sequence[Span]) -> int:
        """Insert spans columnar; a span already stored (same trace and span id) is skipped.
        Returns how many rows were new."""
        if not spans:
            return 0
        return self.insert_span_table(spans_table(spans))

    def insert_span_table(
        self,
        table: pa.Table,
        *,
        stored: Collection[str] | None = None,
        distinct: bool = False,
        window: TimeWindow | None = None,
    ) -> int:
        """Insert a ``spans_table`` (built anywhere, e.g. in a worker process); a span already
        stored (same trace and span id), or already earlier in ``table``, is skipped.

        ``stored``: which traces of ``table`` the store already has spans of, when the caller
        knows (else they are looked up); only their spans are compared. ``distinct``: no
        (trace id, span id) repeats within ``table``. ``window``: where their stored spans
        are (see ``TimeWindow``). Returns how many rows were new."""
        if not table.num_rows:
            return 0
        if stored is None:
            stored = self.stored_trace_ids(table["trace_id"].to_pylist(), window)
        return self.append_new(
            "spans",
            table,
            ("trace_id", "span_id"),
            stored,
            distinct=distinct,
            where=window.spans("s.") if window else "",
        )

    def insert_logs(
        self, logs: Sequence[LogRecord], *, stored: Collection[str] | None = None
    ) -> int:
        """Insert log records; the same record twice is stored once. ``stored``: which trace
        ids of ``logs`` (``""`` for records without a trace) the store already has log records
        of, when the caller knows (else they are looked up). Returns how many were new."""
        if not logs:
            return 0
        bodies = [json_text(r.body) for r in logs]
        ids = [
            hashlib.sha1(
                f"{r.trace_id}|{r.span_id}|{r.time_ns}|{r.event_name}|{b}".encode()
            ).hexdigest()
            for r, b in zip(logs, bodies)
        ]
        table = pa.table(
            {
                "log_id": ids,
                "trace_id": [r.trace_id for r in logs],
                "span_id": [r.span_id for r in logs],
                "time": pa.array([r.time_ns for r in logs], ns_timestamp()),
                "time_unix_nano": pa.array([r.time_ns for r in logs], pa.int64()),
                "event_name": [r.event_name for r in logs],
                "body": bodies,
                "attributes": [json_text(r.attributes) for r in logs],
                "severity_text": [r.severity_text for r in logs],
                "service_name": [r.service_name for r in logs],
                "scope_name": [r.scope_name for r in logs],
            }
        )
        # the id hashes the trace id: a record stored before is among its trace's records
        if stored is None:
            stored = self.log_trace_ids({r.trace_id for r in logs})
        return self.append_new("logs", table, ("log_id",), stored)

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
        """Insert the rows of ``data`` whose ``key`` is neither stored in ``table`` nor on an
        earlier row of ``data``; the stored rows compared are those of ``traces`` (trace ids:
        the data's traces the table has rows of) where ``where`` holds (on ``s.``, e.g. a
        ``TimeWindow``). ``distinct``: no key repeats within ``data``. Returns how many rows
        were inserted (``Engine.append_new``: a join on DuckDB, declared keys on PostgreSQL)."""
        return self._engine.append_new(table, data, key, traces, distinct=distinct, where=where)

    def insert_columns(self, table: str, columns: Mapping[str, Sequence[Any]]) -> None:
        """Insert rows given column by column (Python values, lists of one length) without
        Arrow: what ``suite import`` writes cases with (no pyarrow to import)."""
        self._engine.insert_columns(table, columns)

    def insert_row(self, table: str, columns: Sequence[str], values: Sequence[Any]) -> None:
        """Add one row: ``values`` in the order of ``columns``."""
        marks = ", ".join("?" * len(columns))
        self.con.execute(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})", values)

    def update_row(self, table: str, columns: Sequence[str], values: Sequence[Any]) -> None:
        """Write ``values`` over the row whose key (the first column) is ``values[0]``."""
        sets = ", ".join(f"{c} = ?" for c in columns[1:])
        self.con.execute(
            f"UPDATE {table} SET {sets} WHERE {columns[0]} = ?", [*values[1:], values[0]]
        )

    def query_dicts(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """Rows of ``sql`` as dicts keyed by column name."""
        cur = self.con.execute(sql, list(params))
        cols = [d[0] for d in cur.description]
        return [dict(zip(cols, row)) for row in cur.fetchall()]

    def count(self, table: str) -> int:
        return int(self.con.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0])

    def shared_prefixes(self, table: str, column: str, prefixes: Sequence[str]) -> set[str]:
        """Which of ``prefixes`` (all of one length) begin more than one ``column`` of
        ``table``: one columnar scan on DuckDB, index lookups on PostgreSQL (``short_ids``)."""
        return self._engine.shared_prefixes(table, column, prefixes)

    def stored_trace_ids(
        self, trace_ids: Iterable[str], window: TimeWindow | None = None
    ) -> set[str]:
        """Which of ``trace_ids`` already have spans in the store (within ``window``)."""
        ids = list(set(trace_ids))
        if not ids:
            return set()
        rows = self.con.execute(
            "SELECT DISTINCT trace_id FROM spans WHERE trace_id IN (SELECT unnest(?))"
            + (f" AND {window.spans()}" if window else ""),
            [ids],
        ).fetchall()
        return {r[0] for r in rows}

    def log_trace_ids(self, trace_ids: Iterable[str]) -> set[str]:
        """Which of ``trace_ids`` already have log records in the store."""
        ids = list(set(trace_ids))
        if not ids:
            return set()
        rows = self.con.execute(
            "SELECT DISTINCT trace_id FROM logs WHERE trace_id IN (SELECT unnest(?))", [ids]
        ).fetchall()
        return {r[0] for r in rows}

    def load_spans(self, trace_ids: Iterable[str], window: TimeWindow | None = None) -> list[Span]:
        ids = list(set(trace_ids))
        if not ids:
            return []
        rows = self.con.execute(
            "SELECT trace_id, span_id, parent_span_id, name, kind, start_time_unix_nano,"
            " end_time_unix_nano, status_code, status_message, attributes, events, links,"
            " service_name, scope_name, resource FROM spans"
            " WHERE trace_id IN (SELECT unnest(?))"
            + (f" AND {window.spans()}" if window else "")
            + " ORDER BY start_time_unix_nano",
            [ids],
        ).fetchall()
        return [
            Span(
                trace_id=r[0],
                span_id=r[1],
                parent_span_id=r[2] or "",
                name=r[3] or "",
                kind=KIND_BY_NAME.get(r[4], 0),
                start_ns=r[5] or 0,
                end_ns=r[6] or 0,
                status_code=STATUS_BY_NAME.get(r[7], 0),
                status_message=r[8] or "",
                attributes=_loads(r[9], {}),
                events=_loads(r[10], []),
                links=_loads(r[11], []),
                service_name=r[12] or "",
                scope_name=r[13] or "",
                resource=_loads(r[14], {}),
            )
            for r in rows
        ]

    def load_logs(self, trace_ids: Iterable[str]) -> list[LogRecord]:
        ids = list(set(trace_ids))
        if not ids:
            return []
        rows = self.con.execute(
            "SELECT trace_id, span_id, time_unix_nano, event_name, body, attributes,"
            " severity_text, service_name, scope_name FROM logs"
            " WHERE trace_id IN (SELECT unnest(?)) ORDER BY time_unix_nano",
            [ids],
        ).fetchall()
        return [
            LogRecord(
                trace_id=r[0] or "",
                span_id=r[1] or "",
                time_ns=r[2] or 0,
                event_name=r[3] or "",
                body=_loads(r[4], None),
                attributes=_loads(r[5], {}),
                severity_text=r[6] or "",
                service_name=r[7] or "",
                scope_name=r[8] or "",
            )
            for r in rows
        ]

    # ------------------------------------------------------------------ runs
    def replace_runs(
        self, trace_ids: Iterable[str], runs: Sequence[Run], window: TimeWindow | None = None
    ) -> None:
        """Make ``runs`` the runs of ``trace_ids``: the old runs of those traces are removed."""
        ids = set(trace_ids) | {r.trace_id for r in runs}
        self.replace_run_tables(ids, run_tables(runs), window)

    def replace_run_tables(
        self, trace_ids: Iterable[str], tables: RunTables, window: TimeWindow | None = None
    ) -> None:
        """``replace_runs`` for runs already laid out as ``run_tables`` (built anywhere, e.g.
        in a worker process): the stored runs of ``trace_ids`` are removed first, so the
        traces of ``tables`` must be among them unless the store holds no runs of those.
        ``window``: where their runs started (``TimeWindow``); the traces that have none
        there (a trace whose agent root has not arrived yet) cost no delete at all."""
        ids = list(set(trace_ids))
        if ids and window is not None:
            rows = self.con.execute(
                "SELECT DISTINCT trace_id FROM runs WHERE trace_id IN (SELECT unnest(?))"
                f" AND {window.started_at()}",
                [ids],
            ).fetchall()
            ids = [r[0] for r in rows]
        if ids:
            for table, column in (
                ("tool_calls", "run_started_at"),
                ("llm_calls", "started_at"),
                ("runs", "started_at"),
            ):
                within = f" AND {window.started_at(column)}" if window else ""
                self.con.execute(
                    f"DELETE FROM {table} WHERE trace_id IN (SELECT unnest(?)){within}", [ids]
                )
        if tables.runs is None or not tables.runs.num_rows:
            return
        self.append_table("runs", tables.runs)
        if tables.tool_calls is not None and tables.tool_calls.num_rows:
            self.append_table("tool_calls", tables.tool_calls)
        if tables.llm_calls is not None and tables.llm_calls.num_rows:
            self.append_table("llm_calls", tables.llm_calls)

    def append_table(
        self, table: str, data: pa.Table, *, where: str = "", params: Sequence[Any] = ()
    ) -> int:
        """Insert the rows of the Arrow table ``data`` into ``table`` (columns matched by name),
        in one statement; ``where``: only the rows (``b``) it holds for, with ``params``.
        Returns how many rows were inserted."""
        return self._engine.append_table(table, data, where=where, params=params)

    def settings(self, **values: str | int) -> AbstractContextManager[None]:
        """The engine's settings changed for the block (``store.settings(threads=1)``), then
        put back as they were: those of ``values`` the engine has (DuckDB's ``threads``,
        PostgreSQL's ``work_mem``); the others mean nothing to it."""
        return self._engine.settings(**values)

    def resolve_run_id(self, ident: str) -> str:
        """A run id from a unique prefix of one, or from a trace id whose trace holds one run."""
        ident = ident.strip()
        if not ident:
            raise NotFoundError("an empty run id matches nothing")
        rows = self.con.execute(
            "SELECT run_id FROM runs WHERE starts_with(run_id, ?) ORDER BY run_id LIMIT 6",
            [ident.lower()],
        ).fetchall()
        if len(rows) == 1:
            return rows[0][0]
        if len(rows) > 1:
            listed = ", ".join(r[0] for r in rows[:5])
            raise AmbiguousIdError(f"run id '{ident}' is ambiguous: it starts {listed}...")
        rows = self.con.execute(
            "SELECT run_id FROM runs WHERE trace_id = ? ORDER BY started_at", [ident.lower()]
        ).fetchall()
        if len(rows) == 1:
            return rows[0][0]
        if len(rows) > 1:
            raise AmbiguousIdError(
                f"trace '{ident}' holds {len(rows)} runs; give one of their run ids "
                f"({', '.join(r[0] for r in rows[:5])})"
            )
        raise NotFoundError(f"no run matches '{ident}' (neither a run id prefix nor a trace id)")

    def get_run(self, ident: str) -> Run:
        """The whole run (result, tool calls, LLM calls) for a run id, prefix or trace id."""
        # the run's row found with its id prefix: one scan of the run ids, not two (a whole id
        # is its own prefix); anything else (a trace id, no match, ambiguous) as resolve says
        prefix = ident.strip().lower()
        rows = (
            self.query_dicts(
                "SELECT * FROM runs WHERE starts_with(run_id, ?) ORDER BY run_id LIMIT 6", [prefix]
            )
            if prefix
            else []
        )
        if len(rows) == 1:
            row = rows[0]
        else:
            run_id = self.resolve_run_id(ident)
            row = self.query_dicts("SELECT * FROM runs WHERE run_id = ?", [run_id])[0]
        llm_calls = []
        for d in self._run_llm_calls(row):
            llm_calls.append(
                LlmCall(
                    round=d["round"],
                    span_id=d["span_id"] or "",
                    model=d["model"] or "",
                    provider=d["provider"] or "",
                    input_tokens=d["input_tokens"],
                    output_tokens=d["output_tokens"],
                    duration_ms=d["duration_ms"] or 0.0,
                    finish_reason=d["finish_reason"] or "",
                    started_at=d["started_at"],
                    input_messages=_loads(d["input_messages"], []),
                    output_messages=_loads(d["output_messages"], []),
                    source=d.get("source"),
                )
            )
        return Run(
            run_id=row["run_id"],
            trace_id=row["trace_id"],
            root_span_id=row["root_span_id"],
            parent_run_id=row["parent_run_id"],
            agent_name=row["agent_name"] or "",
            service_name=row["service_name"] or "",
            kind=row["kind"] or "live",
            convention=row["convention"] or "",
            query=row["query"] or "",
            context=[Document.from_dict(d) for d in _loads(row["context"], [])],
            parameters=_loads(row["parameters"], {}),
            models=_loads(row["models"], []),
            input_tokens=row["input_tokens"] or 0,
            output_tokens=row["output_tokens"] or 0,
            started_at=row["started_at"],
            duration_ms=row["duration_ms"] or 0.0,
            error=row["error"],
            eval_run_id=row["eval_run_id"],
            case_id=row["case_id"],
            session_id=row.get("session_id"),
            result=AgentResult.from_dict(_loads(row["result"], {})),
            llm_calls=llm_calls,
        )

    def _run_llm_calls(self, row: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The ``llm_calls`` rows of the run ``row``, by round. Looked up within the run's
        ``TimeWindow`` first (its calls start within its trace: DuckDB skips the row groups of
        other days); when that finds fewer than the run's ``total_llm_calls``, everywhere."""
        started, run_id = row["started_at"], row["run_id"]
        total = row.get("total_llm_calls")
        if started is not None and total is not None:
            start_ns = int(utc(started).timestamp() * 10**6) * 1000
            end_ns = start_ns + int((row.get("duration_ms") or 0) * 10**6)
            window = TimeWindow.around(start_ns, end_ns)
            calls = self.query_dicts(
                f"SELECT * FROM llm_calls WHERE run_id = ? AND {window.started_at()}"
                " ORDER BY round",
                [run_id],
            )
            if len(calls) == total:
                return calls
        return self.query_dicts("SELECT * FROM llm_calls WHERE run_id = ? ORDER BY round", [run_id])

    # ------------------------------------------------------------------ labels
    def add_label(
        self,
        run_ident: str,
        verdict: str,
        *,
        note: str | None = None,
        expected: str | None = None,
        author: str | None = None,
    ) -> Label:
        """Label a run (id, unique prefix, or a one-run trace id) ``good`` or ``bad``, by
        ``author`` (default: ``labels.default_author()``), with an optional note and corrected
        answer; returns the new label, which is now the run's latest."""
        try:
            verdict = verdict_of(verdict)
        except ValueError as exc:
            raise BadParameterError(str(exc)) from None
        run_id = self.resolve_run_id(run_ident)
        with self.transaction():
            self.lock([f"labels:{run_id}"])  # two labels of one run at once: one after the other
            rows = self.con.execute(
                "SELECT max(created_at) FROM labels WHERE run_id = ?", [run_id]
            ).fetchall()
            at = datetime.now(UTC)
            last = utc(rows[0][0]) if rows and rows[0][0] is not None else None
            if last is not None and at <= last:  # a clock step back: still the latest
                at = last + timedelta(microseconds=1)
            label = Label(
                label_id=str(uuid.uuid4()),
                run_id=run_id,
                verdict=verdict,
                note=note if note and note.strip() else None,
                expected=expected if expected is not None and expected != "" else None,
                author=(author or "").strip() or default_author(),
                created_at=at,
            )
            self.insert_row("labels", LABEL_COLUMNS, [getattr(label, c) for c in LABEL_COLUMNS])
        return label

    def list_labels(self, run_id: str) -> list[Label]:
        """The labels of a run (its exact id), newest first: the first is the run's label."""
        rows = self.query_dicts(
            "SELECT * FROM labels WHERE run_id = ? ORDER BY created_at DESC, label_id DESC",
            [run_id],
        )
        return [Label.from_row(r) for r in rows]

    def latest_labels(self, run_ids: Iterable[str]) -> dict[str, Label]:
        """The label of each of ``run_ids`` that has one (its latest), by run id."""
        ids = list(set(run_ids))
        if not ids:
            return {}
        rows = self.query_dicts(
            "SELECT * FROM latest_labels WHERE run_id IN (SELECT unnest(?))", [ids]
        )
        return {r["run_id"]: Label.from_row(r) for r in rows}

    # ------------------------------------------------------------------ spool bookkeeping
    def spool_offset(self, key: str) -> int:
        rows = self.con.execute(
            'SELECT "offset" FROM spool_offsets WHERE segment = ?', [self._engine.spool_key(key)]
        ).fetchall()
        return int(rows[0][0]) if rows else 0

    def set_spool_offset(self, key: str, offset: int) -> None:
        self.con.execute(
            'INSERT INTO spool_offsets (segment, "offset") VALUES (?, ?)'
            ' ON CONFLICT (segment) DO UPDATE SET "offset" = excluded."offset"',
            [self._engine.spool_key(key), offset],
        )

    def forget_spool_segment(self, key: str) -> None:
        self.con.execute(
            "DELETE FROM spool_offsets WHERE segment = ?", [self._engine.spool_key(key)]
        )


__all__ = [
    "Store",
    "TimeWindow",
    "Transaction",
]
