"""Reads of sessions (conversations): a session's turns and a run's place among them.

A turn is a run of the session that no other run called (``parent_run_id`` is NULL: a
sub-agent's run is part of its caller's turn), of the same kind (a replay's runs are not turns
of the production conversation); turns are in start order, run id breaking ties. The caller
owns the transaction.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from tracereplay.models import Run
from tracereplay.store.db import Store

#: the columns of a turn row: what `runs --session`, `show`, promotion and the UI need
TURN_COLUMNS = (
    "run_id", "trace_id", "agent_name", "kind", "status", "query", "response", "started_at",
    "duration_ms", "tool_calls_count", "total_llm_calls", "input_tokens", "output_tokens",
    "error", "session_id",
)  # fmt: skip

_TURNS = (
    "FROM runs WHERE session_id = ? AND parent_run_id IS NULL AND kind IS NOT DISTINCT FROM ?"
    " ORDER BY started_at NULLS LAST, run_id"
)


@dataclass(frozen=True, slots=True)
class TurnPlace:
    """Where a run stands in its session: its 1-based turn ``number`` of ``count``, and the
    runs of the turns before and after it (None at either end)."""

    session_id: str
    number: int
    count: int
    previous: str | None
    next: str | None


def session_turns(store: Store, session_id: str, kind: str = "live") -> list[dict[str, Any]]:
    """The turns of ``session_id`` among runs of ``kind``, in order (``TURN_COLUMNS`` each)."""
    return store.query_dicts(f"SELECT {', '.join(TURN_COLUMNS)} {_TURNS}", [session_id, kind])


def turn_place(store: Store, run_id: str, run: Run | None = None) -> TurnPlace | None:
    """The place of run ``run_id`` among its session's turns; None when the run names no
    session or is no turn (a sub-agent's run: its caller's turn is). ``run``: the run, when
    the caller has read it already (its session, kind and caller are not read again)."""
    if run is not None:
        if run.session_id is None or run.parent_run_id is not None:
            return None
        session_id, kind = run.session_id, run.kind
    else:
        rows = store.query_dicts(
            "SELECT session_id, kind FROM runs WHERE run_id = ? AND parent_run_id IS NULL",
            [run_id],
        )
        if not rows or rows[0]["session_id"] is None:
            return None
        session_id, kind = rows[0]["session_id"], rows[0]["kind"]
    ids = [
        r[0] for r in store.con.execute(f"SELECT run_id {_TURNS}", [session_id, kind]).fetchall()
    ]
    return place_among(session_id, run_id, ids)


def place_among(session_id: str, run_id: str, ids: list[str]) -> TurnPlace | None:
    """The place of ``run_id`` among the run ids of its session's turns, in order; None when
    it is not one of them."""
    if run_id not in ids:
        return None
    i = ids.index(run_id)
    return TurnPlace(
        session_id,
        i + 1,
        len(ids),
        ids[i - 1] if i > 0 else None,
        ids[i + 1] if i + 1 < len(ids) else None,
    )


def earlier_turns(store: Store, run_id: str) -> list[dict[str, Any]]:
    """The turns of the run's session before it, in order (``TURN_COLUMNS`` each); empty when
    the run is no turn of a session."""
    place = turn_place(store, run_id)
    if place is None or place.number == 1:
        return []
    kind = store.query_dicts("SELECT kind FROM runs WHERE run_id = ?", [run_id])[0]["kind"]
    return session_turns(store, place.session_id, kind)[: place.number - 1]


def first_call_input(store: Store, run_id: str) -> list[dict[str, Any]]:
    """The input messages of the run's first LLM call, as recorded (GenAI shape; empty when it
    recorded none): what the agent sent the model with the question, earlier turns included."""
    rows = store.con.execute(
        "SELECT input_messages FROM llm_calls WHERE run_id = ? ORDER BY round LIMIT 1", [run_id]
    ).fetchall()
    if not rows or not rows[0][0]:
        return []
    value = orjson.loads(rows[0][0]) if isinstance(rows[0][0], str) else rows[0][0]
    return value if isinstance(value, list) else []
