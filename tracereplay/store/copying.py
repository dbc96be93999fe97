"""``tracereplay store copy --to URL``: a store's whole history moved into another store.

Every table of the source is read in chunks of rows (as Arrow) and appended into the same
table of the target, in one transaction of the target: the copy lands whole or not at all, and
a target that already holds rows is refused (nothing merged by accident). The target's schema
is its own engine's (``schema.migrate`` at open); columns are matched by name. The views are
not copied: the target has its own.
"""

from __future__ import annotations

from dataclasses import dataclass

from tracereplay.errors import StoreError
from tracereplay.store.db import Store

#: the tables a store holds, in an order where nothing refers to a table not copied yet
TABLES = (
    "spans", "logs", "runs", "tool_calls", "llm_calls", "eval_suites", "eval_cases",
    "eval_runs", "case_results", "check_results", "monitors", "monitor_results",
    "monitor_judge_calls", "labels",
)  # fmt: skip
CHUNK_ROWS = 20_000


@dataclass(frozen=True)
class Copied:
    table: str
    rows: int


def copy_store(source: Store, target: Store) -> list[Copied]:
    """Copy every table of ``source`` into the empty ``target``; returns the rows per table."""
    full = [t for t in TABLES if target.count(t)]
    if full:
        raise StoreError(
            f"the target store already holds rows ({full[0]}...): copy into an empty store"
        )
    done = []
    with source.transaction(read_only=True), target.transaction():
        for table in TABLES:
            total = source.count(table)
            for offset in range(0, total, CHUNK_ROWS):
                chunk = source.con.sql(
                    f"SELECT * FROM {table} LIMIT {CHUNK_ROWS} OFFSET {offset}"
                ).to_arrow_table()
                target.append_table(table, chunk)
            done.append(Copied(table, total))
    return done
