"""Which live runs a monitor judges: its selector, its sample, and what it has judged already.

The sample is decided by a hash of the run id (the first 8 bytes of its SHA-256 as a fraction
of 2**64, below the rate), not by a random draw: a backfill, a re-score after a late span, and
every process agree on which runs are in, and a monitor at 10% never calls a judge for the
other 90%. ``--where`` goes through ``promote --where``'s own predicate handling (one SELECT, in
a read-only transaction, no host access).
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection
from datetime import datetime
from typing import Any

from tracereplay.monitor.definition import Monitor
from tracereplay.promote.where import matching_run_ids
from tracereplay.store.db import Store

_SPAN = float(1 << 64)


def sample_point(run_id: str) -> float:
    """Where ``run_id`` falls in [0, 1): the same number for the same id, everywhere."""
    digest = hashlib.sha256(run_id.encode()).digest()
    return int.from_bytes(digest[:8], "big") / _SPAN


def in_sample(run_id: str, rate: float) -> bool:
    """The run is among the ``rate`` share a monitor judges."""
    return rate >= 1.0 or sample_point(run_id) < rate


#: a run is pending for a monitor when no result of it was judged on its current conversion
_NOT_JUDGED = (
    "NOT EXISTS (SELECT 1 FROM monitor_results AS mr WHERE mr.monitor = ?"
    " AND mr.run_id = runs.run_id AND mr.run_converted_at IS NOT DISTINCT FROM runs.converted_at)"
)


def selected_run_ids(
    store: Store,
    monitor: Monitor,
    *,
    pending: bool = True,
    since: datetime | None = None,
    traces: Collection[str] | None = None,
) -> list[str]:
    """Ids of the live runs ``monitor`` selects and samples, oldest first: with ``pending`` only
    those it has not judged on their current conversion; ``since``: started since then;
    ``traces``: only runs of those traces (the ones a drain just stored)."""
    also: list[str] = ["kind = 'live'"]
    params: list[Any] = []
    if monitor.agent is not None:
        also.append("agent_name = ?")
        params.append(monitor.agent)
    if monitor.service is not None:
        also.append("service_name = ?")
        params.append(monitor.service)
    if since is not None:
        also.append("started_at >= ?")
        params.append(since)
    if traces is not None:
        also.append("trace_id IN (SELECT unnest(?))")
        params.append(list(traces))
    if pending:
        also.append(_NOT_JUDGED)
        params.append(monitor.name)
    ids = matching_run_ids(store, monitor.where or "true", also=" AND ".join(also), params=params)
    return [i for i in ids if in_sample(i, monitor.sample)]
