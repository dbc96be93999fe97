"""``tracereplay prune``: drop old traffic, keep what suites and evals refer to, shrink the file.

What goes is whole traces: a trace whose every span started before the cutoff (and a run
before it whose trace has no spans), with its logs, runs, tool calls and LLM calls; log records
with no trace go by their own time. What stays, however old: every trace holding a run that a
case was promoted from (``eval_cases.source_run_id``) or that an eval run refers to
(``case_results.run_id`` and ``source_run_id``, replays included) or that a person labelled
(``labels``), and every suite, case, eval result and label. On PostgreSQL, spans are partitioned by day: a day entirely before the cutoff
whose spans all belong to traces that go is dropped whole (``DROP TABLE`` of the partition:
no row-by-row delete, the space back at once), the others lose their rows by ``DELETE``
(``engines.pg_partitions.prune_spans``). Deleting rows does not shrink a DuckDB file
(``CHECKPOINT`` reuses the freed blocks but leaves the file as big), so ``compact`` copies the store into a new file
(``COPY FROM DATABASE``, same row group size and compression, rows in their order: the time
zone maps stay useful) and renames it over the old one, holding the store's lock throughout:
every other process (``serve``'s drainer, any command) waits for it, none sees half of it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb

from tracereplay.store.db import Store
from tracereplay.store.engines.duckdb import ROW_GROUP_SIZE
from tracereplay.store.lock import file_lock
from tracereplay.store.paths import lock_path

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_PROTECTED_RUNS = """
    SELECT source_run_id FROM eval_cases WHERE source_run_id IS NOT NULL
    UNION SELECT run_id FROM case_results WHERE run_id IS NOT NULL
    UNION SELECT source_run_id FROM case_results WHERE source_run_id IS NOT NULL
    UNION SELECT run_id FROM labels
"""


@dataclass
class PruneCounts:
    traces: int = 0
    spans: int = 0
    logs: int = 0
    runs: int = 0
    tool_calls: int = 0
    llm_calls: int = 0
    kept_runs: int = 0  # old runs kept because a case, an eval run or a label refers to them
    partitions: int = 0  # PostgreSQL: spans partitions (days) dropped whole


def _select_old_traces(store: Store, cutoff: datetime) -> None:
    """Fill the temporary table ``_prune_traces`` with the trace ids to remove."""
    store.con.execute("DROP TABLE IF EXISTS _prune_traces")
    store.con.execute(
        f"""
        CREATE TEMP TABLE _prune_traces AS
        WITH old AS (
            SELECT trace_id FROM spans GROUP BY trace_id HAVING max(start_time) < $cutoff
            UNION
            SELECT r.trace_id FROM runs AS r WHERE r.started_at < $cutoff
              AND NOT EXISTS (SELECT 1 FROM spans AS s WHERE s.trace_id = r.trace_id)
        ),
        kept AS (SELECT DISTINCT trace_id FROM runs WHERE run_id IN ({_PROTECTED_RUNS}))
        SELECT trace_id FROM old WHERE trace_id NOT IN (SELECT trace_id FROM kept)
        """,
        {"cutoff": cutoff},
    )


def _count(store: Store, sql: str, params: dict | None = None) -> int:
    return int(store.con.execute(sql, params or {}).fetchall()[0][0])


def prune(store: Store, cutoff: datetime, *, dry_run: bool = False) -> PruneCounts:
    """Remove what is older than ``cutoff`` (see the module doc), in one transaction; with
    ``dry_run``, only count it. Call ``compact`` afterwards to give the space back."""
    with store.transaction() as tx:
        _select_old_traces(store, cutoff)
        doomed_runs = (
            "SELECT run_id FROM runs WHERE trace_id IN (SELECT trace_id FROM _prune_traces)"
        )
        loose_logs = "(trace_id IS NULL OR trace_id = '') AND time < $cutoff"
        counts = PruneCounts(
            traces=_count(store, "SELECT count(*) FROM _prune_traces"),
            spans=_count(
                store,
                "SELECT count(*) FROM spans WHERE trace_id IN (SELECT trace_id FROM _prune_traces)",
            ),
            logs=_count(
                store,
                "SELECT count(*) FROM logs WHERE trace_id IN (SELECT trace_id FROM _prune_traces)"
                f" OR ({loose_logs})",
                {"cutoff": cutoff},
            ),
            runs=_count(store, f"SELECT count(*) FROM ({doomed_runs}) AS d"),
            tool_calls=_count(
                store, f"SELECT count(*) FROM tool_calls WHERE run_id IN ({doomed_runs})"
            ),
            llm_calls=_count(
                store, f"SELECT count(*) FROM llm_calls WHERE run_id IN ({doomed_runs})"
            ),
            kept_runs=_count(
                store,
                f"SELECT count(*) FROM runs WHERE started_at < $cutoff"
                f" AND run_id IN ({_PROTECTED_RUNS})",
                {"cutoff": cutoff},
            ),
        )
        if dry_run:
            tx.rollback()
            return counts
        for table in ("tool_calls", "llm_calls"):
            store.con.execute(f"DELETE FROM {table} WHERE run_id IN ({doomed_runs})")
        store.con.execute("DELETE FROM runs WHERE trace_id IN (SELECT trace_id FROM _prune_traces)")
        store.con.execute(
            "DELETE FROM logs WHERE trace_id IN (SELECT trace_id FROM _prune_traces)"
            f" OR ({loose_logs})",
            {"cutoff": cutoff},
        )
        if store.engine == "postgres":  # last: a dropped partition locks spans until commit
            from tracereplay.store.engines import pg_partitions

            at = cutoff if cutoff.tzinfo else cutoff.replace(tzinfo=UTC)
            cutoff_ns = (at - _EPOCH) // timedelta(microseconds=1) * 1000  # exact, as stored
            dropped = pg_partitions.prune_spans(store.con, cutoff_ns, "_prune_traces")  # type: ignore[arg-type]
            counts.partitions = len(dropped)
        else:
            store.con.execute(
                "DELETE FROM spans WHERE trace_id IN (SELECT trace_id FROM _prune_traces)"
            )
    store.con.execute("DROP TABLE IF EXISTS _prune_traces")
    return counts


def compact(path: Path, timeout: float = 600.0) -> tuple[int, int]:
    """Rewrite the store file without its free space; returns its size before and after.

    Needs room for the new file beside the old one until the rename. A crash midway leaves the
    old file whole (and a ``.compacting`` file, replaced by the next compaction)."""
    target = path.with_name(path.name + ".compacting")
    before = path.stat().st_size
    with file_lock(lock_path(path), timeout=timeout):
        target.unlink(missing_ok=True)
        con = duckdb.connect()
        try:
            con.execute("SET force_compression = 'zstd'")
            con.execute("SET TimeZone = 'UTC'")
            source = str(path).replace("'", "''")
            dest = str(target).replace("'", "''")
            con.execute(f"ATTACH '{source}' AS _tr_source")
            con.execute(f"ATTACH '{dest}' AS _tr_compact (ROW_GROUP_SIZE {ROW_GROUP_SIZE})")
            con.execute("COPY FROM DATABASE _tr_source TO _tr_compact")
            con.execute("DETACH _tr_compact")
            con.execute("DETACH _tr_source")
        except BaseException:
            con.close()
            target.unlink(missing_ok=True)
            raise
        con.close()
        with open(target, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(target, path)
        fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    return before, path.stat().st_size
