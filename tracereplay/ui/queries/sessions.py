"""A conversation (session) for the UI: the run page's strip of turns and the conversation page
(every turn with its tools and answer), read by ``store/sessions.py`` and ``store/runs.py``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tracereplay.errors import NotFoundError
from tracereplay.models import Run
from tracereplay.store import runs as run_store
from tracereplay.store.db import Store
from tracereplay.store.sessions import TurnPlace, place_among, session_turns

#: turns the run page's strip shows around the run at most, each side
STRIP_SIDE = 10
#: turns the conversation page shows at most
MAX_TURNS = 500


@dataclass
class TurnStrip:
    """The run page's strip: the run's place and the turns shown around it."""

    place: TurnPlace
    turns: list[dict[str, Any]]
    #: turns left out before and after the ones shown
    hidden_before: int
    hidden_after: int


@dataclass
class SessionView:
    session_id: str
    kind: str
    #: ``(turn row, its Run)`` in order
    turns: list[tuple[dict[str, Any], Run]]
    total: int


def turn_strip(store: Store, run: Run) -> TurnStrip | None:
    """The turns around ``run``; None when it is no turn of a session."""
    if run.session_id is None or run.parent_run_id is not None:
        return None
    # the turns read once: the run's place is among their ids
    turns = session_turns(store, run.session_id, run.kind)
    place = place_among(run.session_id, run.run_id, [t["run_id"] for t in turns])
    if place is None:
        return None
    start = max(0, place.number - 1 - STRIP_SIDE)
    end = min(len(turns), place.number + STRIP_SIDE)
    for number, turn in enumerate(turns, 1):
        turn["number"] = number
    return TurnStrip(place, turns[start:end], start, len(turns) - end)


def session_view(store: Store, session_id: str, kind: str = "live") -> SessionView:
    """Every turn of a session (the first ``MAX_TURNS``) with its run (result and tool calls)."""
    turns = session_turns(store, session_id, kind)
    if not turns:
        raise NotFoundError(f"no {kind} run belongs to session '{session_id}'")
    shown = turns[:MAX_TURNS]
    runs = run_store.load_runs(store, [t["run_id"] for t in shown])
    for number, turn in enumerate(shown, 1):
        turn["number"] = number
    return SessionView(
        session_id, kind, [(t, runs[t["run_id"]]) for t in shown if t["run_id"] in runs], len(turns)
    )
