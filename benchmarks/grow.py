"""Grow a store to N spans fast and honestly: its ingested history replicated inside the database.

A base batch goes through the real pipeline (``tracereplay ingest``); ``grow`` then copies
every row the pipeline wrote for it (spans, logs, runs, tool calls, LLM calls) ``k`` times with
``INSERT ... SELECT``: fresh trace, run and log ids (an md5 of the old id and ``k``, in the old
ids' shapes), every time column shifted back by ``k`` times the base's own time span, so the
store holds a longer history of the same traffic, older than the base. The rows are the rows
the pipeline writes (same columns, same values but ids and times), in the same tables, with
the same keys and indexes; on PostgreSQL the replicas' days get their partitions as a writer
would make them (``pg_partitions.create``), then ``VACUUM ANALYZE`` stands for what autovacuum
does after bulk inserts; DuckDB ends with a ``CHECKPOINT``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime

DAY_NS = 86_400 * 10**9

#: per table: the columns rewritten, as (column, kind); kind: trace id, run id, other id, time
_REWRITES: dict[str, dict[str, str]] = {
    "spans": {
        "trace_id": "trace",
        "start_time": "ts",
        "end_time": "ts",
        "start_time_unix_nano": "ns",
        "end_time_unix_nano": "ns",
    },
    "logs": {"log_id": "hex", "trace_id": "trace", "time": "ts", "time_unix_nano": "ns"},
    "runs": {"run_id": "uuid", "trace_id": "trace", "parent_run_id": "uuid", "started_at": "ts"},
    "tool_calls": {"run_id": "uuid", "trace_id": "trace", "run_started_at": "ts"},
    "llm_calls": {"run_id": "uuid", "trace_id": "trace", "started_at": "ts"},
}
#: the column each table's base rows are told apart by (the base is the newest history)
_TIME = {
    "spans": "start_time_unix_nano",
    "logs": "time_unix_nano",
    "runs": "started_at",
    "tool_calls": "run_started_at",
    "llm_calls": "started_at",
}


def _expr(column: str, kind: str, engine: str, shift_s: str) -> str:
    quoted = f'"{column}"'
    salted = f"md5({quoted} || ':' || CAST(g.k AS VARCHAR))"
    if kind == "trace":
        return f"substr({salted}, 1, 32)"
    if kind == "hex":
        return salted
    if kind == "uuid":
        h = salted
        parts = " || '-' || ".join(
            f"substr({h}, {a}, {n})" for a, n in ((1, 8), (9, 4), (13, 4), (17, 4), (21, 12))
        )
        return f"CASE WHEN {quoted} IS NULL THEN NULL ELSE {parts} END"
    if kind == "ns":
        return f"{quoted} - g.k * {shift_s} * 1000000000"
    if engine == "postgres":
        return f"{quoted} - make_interval(secs => g.k * {shift_s})"
    return f"{quoted} - to_seconds(g.k * {shift_s})"


def _ts(ns: int) -> str:
    return f"CAST('{datetime.fromtimestamp(ns / 1e9, UTC).isoformat()}' AS TIMESTAMPTZ)"


def _columns(execute: Callable[[str], list[tuple]], table: str, schema: str) -> list[str]:
    rows = execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = "
        f"'{table}' AND table_schema = '{schema}' ORDER BY ordinal_position"
    )
    return [r[0] for r in rows]


def _all_visible(
    execute: Callable[[str], list[tuple]], tables: list[str], log: Callable[[str], None]
) -> None:
    """VACUUM again, a few times, the tables whose pages the last pass did not all mark
    all-visible, as autovacuum leaves a table written long ago: a pass cannot mark rows whose
    commit's WAL is not flushed yet (the benchmark's server commits asynchronously) or that an
    older snapshot may not see, and the first pass after the copies left most of runs' pages
    unmarked (at 1M spans 2,000 or 12,000 of 20,000), so an index-only scan (the dashboard's,
    migration 0018) read the table's rows."""
    names = ", ".join(f"'{t}'" for t in tables)
    for _ in range(20):
        behind = execute(
            "SELECT relname FROM pg_class WHERE relkind = 'r' AND relpages > relallvisible"
            f" AND (relname IN ({names}) OR relispartition)"
        )
        if not behind:
            return
        names_behind = [name for (name,) in behind]
        log(f"  postgres: not all-visible after VACUUM, again: {', '.join(names_behind)}")
        time.sleep(1)
        execute("VACUUM " + ", ".join(names_behind))


def grow(
    store: str,
    target_spans: int,
    base_ns: tuple[int, int],
    *,
    chunk: int = 5,
    log: Callable[[str], None] = print,
) -> int:
    """Replicate the base (the traces that started within ``base_ns``, ingested, not eval
    runs) until the store holds about ``target_spans`` spans; returns the spans it holds."""
    if "://" in store:
        import psycopg

        con = psycopg.connect(store, autocommit=True)
        engine, schema = "postgres", "public"

        def execute(sql: str) -> list[tuple]:
            cur = con.execute(sql)
            return cur.fetchall() if cur.description else []
    else:
        import duckdb

        con = duckdb.connect(store)
        con.execute("SET TimeZone = 'UTC'")
        engine, schema = "duckdb", "main"

        def execute(sql: str) -> list[tuple]:
            return con.execute(sql).fetchall()

    try:
        lo, hi = base_ns
        in_base = f"start_time_unix_nano BETWEEN {lo} AND {hi}"
        [(base, older, last_ns, total)] = execute(
            f"SELECT count(*) FILTER (WHERE {in_base}), count(*) FILTER (WHERE"
            f" start_time_unix_nano < {lo}), max(start_time_unix_nano) FILTER (WHERE {in_base}),"
            " count(*) FROM spans"
        )
        if older:
            raise SystemExit("grow: the store holds rows older than the base; grow it once")
        copies = max(0, round((target_spans - total) / base)) if base else 0
        hi = last_ns  # the base's last span start
        shift_s = (hi - lo) // 10**9 + 3600  # each copy an hour clear of the next
        columns = {t: _columns(execute, t, schema) for t in _REWRITES}
        window = {
            t: (lo, hi + 3600 * 10**9)
            if t in ("spans", "logs")
            else (_ts(lo), _ts(hi + 3600 * 10**9))
            for t in _REWRITES
        }
        for first in range(1, copies + 1, chunk):
            last = min(copies, first + chunk - 1)
            t = time.perf_counter()
            if engine == "postgres":
                days = {
                    d
                    for k in range(first, last + 1)
                    for d in range(
                        (lo - k * shift_s * 10**9) // DAY_NS,
                        (hi - k * shift_s * 10**9) // DAY_NS + 1,
                    )
                }
                from tracereplay.store import Store
                from tracereplay.store.engines import pg_partitions

                with Store.open(store) as s, s.transaction():
                    pg_partitions.create(s.con, days)  # type: ignore[arg-type]
            execute("BEGIN")
            for table, rewrites in _REWRITES.items():
                lo_t, hi_t = window[table]
                select = ", ".join(
                    _expr(c, rewrites[c], engine, str(shift_s)) if c in rewrites else f'"{c}"'
                    for c in columns[table]
                )
                time_col = _TIME[table]
                ingested = " AND eval_run_id IS NULL" if table == "runs" else ""
                execute(
                    f"INSERT INTO {table} SELECT {select} FROM {table},"
                    f" (SELECT * FROM generate_series(CAST({first} AS BIGINT), {last}) AS s(k)) AS g"
                    f" WHERE {time_col} BETWEEN {lo_t} AND {hi_t}{ingested}"
                )
            execute("COMMIT")
            log(f"  {engine}: copies {first}-{last} of {copies} in {time.perf_counter() - t:.1f} s")
        if engine == "postgres":
            execute("VACUUM ANALYZE")
            _all_visible(execute, [t for t in _REWRITES if t != "spans"], log)
        else:
            execute("CHECKPOINT")
        counts = {t: int(execute(f"SELECT count(*) FROM {t}")[0][0]) for t in _REWRITES}
        log(f"  {engine}: " + ", ".join(f"{n} {t}" for t, n in counts.items()))
        return counts["spans"]
    finally:
        con.close()
