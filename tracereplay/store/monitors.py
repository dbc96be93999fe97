"""Writes and small reads of the monitors' tables (``monitors``, ``monitor_results``,
``monitor_judge_calls``) that need no monitor model: the results of a round, replacing what
the same monitors had of the same runs, and whether any monitor exists. ``monitor/records.py``
keeps the ``monitors`` rows as ``Monitor`` models (a type of the layer above)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from tracereplay.lazy import LazyModule
from tracereplay.store.db import Store

if TYPE_CHECKING:
    import pyarrow as pa
else:  # only a round that judged something builds a table
    pa = LazyModule("pyarrow")


def _result_types() -> dict[str, pa.DataType]:
    ts = pa.timestamp("us", tz="UTC")
    return {
        "monitor": pa.string(), "run_id": pa.string(), "trace_id": pa.string(),
        "agent_name": pa.string(), "check_name": pa.string(), "check_kind": pa.string(),
        "status": pa.string(), "passed": pa.bool_(), "score": pa.float64(),
        "reason": pa.string(), "details": pa.string(), "run_started_at": ts,
        "run_converted_at": ts,
    }  # fmt: skip


def _call_types() -> dict[str, pa.DataType]:
    return {
        "monitor": pa.string(), "run_id": pa.string(), "check_name": pa.string(),
        "model": pa.string(), "endpoint": pa.string(), "input_tokens": pa.int64(),
        "output_tokens": pa.int64(), "duration_ms": pa.float64(), "error": pa.string(),
        "started_at": pa.timestamp("us", tz="UTC"),
    }  # fmt: skip


def _table(rows: Sequence[dict[str, Any]], types: dict[str, pa.DataType]) -> pa.Table:
    return pa.table({k: pa.array([r[k] for r in rows], t) for k, t in types.items()})


def replace_results(
    store: Store,
    judged: Sequence[tuple[str, str]],
    results: Sequence[dict[str, Any]],
    calls: Sequence[dict[str, Any]],
) -> None:
    """In one transaction: the ``monitor_results`` of each ``(monitor, run_id)`` of ``judged``
    replaced by ``results`` (rows keyed by column, ``details`` as JSON text), and ``calls``
    added to ``monitor_judge_calls`` (a call made is a cost, whatever came of it)."""
    # keyed by monitor and run joined with a character neither holds (chr(1): PostgreSQL's
    # text cannot hold chr(0))
    keys = sorted({f"{monitor}\x01{run_id}" for monitor, run_id in judged})
    with store.transaction():
        store.con.execute(
            "DELETE FROM monitor_results WHERE monitor || chr(1) || run_id IN (SELECT unnest(?))",
            [keys],
        )
        if results:
            store.append_table("monitor_results", _table(results, _result_types()))
        if calls:
            store.append_table("monitor_judge_calls", _table(calls, _call_types()))


def has_monitors(store: Store) -> bool:
    """Whether the store has any monitor."""
    return bool(store.con.execute("SELECT count(*) FROM monitors").fetchall()[0][0])
