"""The PostgreSQL store's spans partitions: one per UTC day, made by the writer that needs it,
dropped whole by ``prune`` (migration ``postgres/0011_spans_by_day.sql`` partitions the table).

Creating one: ``CREATE TABLE`` of a plain table, then ``ALTER TABLE spans ATTACH PARTITION``,
inside the writer's own transaction. ``ATTACH`` takes only a SHARE UPDATE EXCLUSIVE lock on
``spans``, which conflicts with neither readers nor other writers' inserts (``CREATE TABLE ...
PARTITION OF`` would take ACCESS EXCLUSIVE: every reader blocked until the writer commits, and
two writers each holding their inserts' lock while waiting for the other's: a deadlock). The
lock does conflict with itself, so two writers creating a day's partition run one after the
other: the second, once the first commits, sees the partition in the catalog and creates
nothing. A partition created in a transaction that rolls back is gone with it; the writer's
cache of known days forgets it (``PostgresEngine.rollback``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

if TYPE_CHECKING:
    from tracereplay.store.engines.base import Connection

DAY_NS = 86_400 * 10**9
_FROM = re.compile(r"FROM \('?(-?\d+)'?\) TO \('?(-?\d+)'?\)")


@dataclass(frozen=True)
class Partition:
    """One attached partition of ``spans``: its name and its start times ``[lo_ns, hi_ns)``."""

    name: str
    lo_ns: int
    hi_ns: int


def partition_name(day: int) -> str:
    """``spans_pYYYYMMDD`` for the UTC day number ``day`` (days since 1970-01-01)."""
    return f"spans_p{datetime.fromtimestamp(day * 86_400, UTC):%Y%m%d}"


def days_of(start_ns: pa.ChunkedArray | pa.Array) -> set[int]:
    """The UTC day numbers of a column of start times (ns)."""
    if not len(start_ns):
        return set()
    low = pc.min(start_ns).as_py()
    if low is not None and low >= 0:  # integer division truncates: the floor when not negative
        return {int(d) for d in pc.unique(pc.divide(start_ns, DAY_NS)).to_pylist() if d is not None}
    return {int(v) // DAY_NS for v in start_ns.to_pylist() if v is not None}


def partitions(con: Connection) -> list[Partition]:
    """The partitions attached to ``spans``, oldest first (read from the catalog)."""
    rows = con.execute_native(
        "SELECT c.relname, pg_get_expr(c.relpartbound, c.oid) FROM pg_inherits AS i"
        " JOIN pg_class AS c ON c.oid = i.inhrelid WHERE i.inhparent = 'spans'::regclass"
    ).fetchall()
    found = []
    for name, bound in rows:
        m = _FROM.search(bound or "")
        if m:
            found.append(Partition(name, int(m.group(1)), int(m.group(2))))
    return sorted(found, key=lambda p: p.lo_ns)


def create(con: Connection, days: Iterable[int]) -> set[int]:
    """Attach a partition for each of ``days`` not attached yet; returns the days it created.
    Call it in a transaction: the lock taken first holds until it ends (see the module doc)."""
    con.execute_native("LOCK TABLE spans IN SHARE UPDATE EXCLUSIVE MODE")
    stored = {p.lo_ns // DAY_NS for p in partitions(con)}  # after the lock: others' committed
    created = set()
    for day in sorted(set(days) - stored):
        name = partition_name(day)
        con.execute_native(f"CREATE TABLE {name} (LIKE spans INCLUDING DEFAULTS)")
        con.execute_native(
            f"ALTER TABLE spans ATTACH PARTITION {name}"
            f" FOR VALUES FROM ({day * DAY_NS}) TO ({(day + 1) * DAY_NS})"
        )
        created.add(day)
    return created


def prune_spans(con: Connection, cutoff_ns: int, doomed: str) -> list[str]:
    """Remove the spans of the traces in the table ``doomed`` (``trace_id``; every span of
    each started before ``cutoff_ns``): a partition entirely before the cutoff that holds no
    other trace's span is dropped whole, the others (the boundary day, days holding a kept
    trace) lose those rows by ``DELETE``. Returns the names of the dropped partitions.

    The drops come last: ``DROP TABLE`` of a partition locks ``spans`` exclusively until the
    transaction ends, so the caller commits right after."""
    con.execute_native(f"ANALYZE {doomed}")
    dropped = []
    for part in partitions(con):
        if part.lo_ns >= cutoff_ns:
            break
        if part.hi_ns <= cutoff_ns:
            other = con.execute_native(
                f"SELECT 1 FROM {part.name} AS s WHERE NOT EXISTS"
                f" (SELECT 1 FROM {doomed} AS d WHERE d.trace_id = s.trace_id) LIMIT 1"
            ).fetchall()
            if not other:
                dropped.append(part.name)
                continue
        con.execute_native(
            f"DELETE FROM {part.name} WHERE trace_id IN (SELECT trace_id FROM {doomed})"
        )
    for name in dropped:
        con.execute_native(f"DROP TABLE {name}")
    return dropped
