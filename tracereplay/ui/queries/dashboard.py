"""Production at a glance: live runs per day, failures, latency, tokens and tool errors (the
rows read by ``store/runs.py``, every day of the window filled in here)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from tracereplay.store import runs as run_store
from tracereplay.store.db import Store


def window(store: Store, days: int, agent: str | None) -> tuple[datetime | None, datetime | None]:
    """The ``days`` days up to the latest live run (a store whose runs are old still shows
    them)."""
    last = run_store.last_live_start(store, agent)
    if last is None:
        return None, None
    end = last.replace(hour=0, minute=0, second=0, microsecond=0) + timedelta(days=1)
    return end - timedelta(days=days), end


def daily_and_per_agent(
    store: Store, since: datetime, until: datetime, agent: str | None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """One row per day of the window (a day without runs too; of ``agent`` when given) and
    one per agent over the window (every agent)."""
    found, per_agent = run_store.live_window(store, since, until, agent)
    by_day = {row["day"]: row for row in found}
    rows = []
    day = since.date()
    while day < until.date():  # every day of the window, a day without runs too
        rows.append(by_day.get(day) or {
            "day": day, "runs": 0, "failures": 0, "p50_ms": None, "p95_ms": None,
            "tokens": 0, "tool_calls": 0, "tool_errors": 0,
        })  # fmt: skip
        day += timedelta(days=1)
    for row in rows:
        row["failure_rate"] = row["failures"] / row["runs"] if row["runs"] else None
        calls = row["tool_calls"] or 0
        row["tool_error_rate"] = row["tool_errors"] / calls if calls else None
    return rows, per_agent


def agents(store: Store) -> list[str]:
    return run_store.live_agents(store)
