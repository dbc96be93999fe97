"""A session's turns on both engines (issue 54): in start order whatever order they arrived in,
a run's place among them, the turns before it; a run of no session is no turn."""

from __future__ import annotations

from conversation import SESSION, TURNS, conversation_spans, turn_run_ids

from tracereplay.ingest.pipeline import ingest_batch
from tracereplay.store import Store
from tracereplay.store.runs import list_runs
from tracereplay.store.sessions import earlier_turns, session_turns, turn_place


def test_turns_in_order_and_a_runs_place(store_target: str) -> None:
    spans = conversation_spans()
    others = conversation_spans(session=None, traces=3)
    with Store.open(store_target) as store:
        with store.transaction():
            ingest_batch(store, list(reversed(spans)) + others)
        first, second, third = turn_run_ids()
        turns = session_turns(store, SESSION)
        assert [t["run_id"] for t in turns] == [first, second, third]
        assert [(t["query"], t["response"]) for t in turns] == TURNS
        assert session_turns(store, SESSION, "replay") == []
        place = turn_place(store, second)
        assert place is not None
        assert (place.session_id, place.number, place.count) == (SESSION, 2, 3)
        assert (place.previous, place.next) == (first, third)
        assert turn_place(store, first).previous is None
        assert turn_place(store, third).next is None
        assert [t["run_id"] for t in earlier_turns(store, third)] == [first, second]
        assert earlier_turns(store, first) == []
        alone = store.query_dicts("SELECT run_id FROM runs WHERE session_id IS NULL")
        assert len(alone) == 3
        assert turn_place(store, alone[0]["run_id"]) is None
        assert earlier_turns(store, alone[0]["run_id"]) == []
        rows = list_runs(store, session=SESSION, limit=2)
        assert [r["run_id"] for r in rows] == [first, second]  # the first turns
