"""Writing prepared batches: spans repeated within a batch or already stored are stored once, and
the runs of every trace stay those of all its spans."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracereplay.convert import convert_trace
from tracereplay.ingest import ingest_batch
from tracereplay.ingest.pipeline import merge_prepared, prepare_batch, store_prepared
from tracereplay.spans import Span
from tracereplay.store import Store

T0 = 1_790_000_000_000_000_000


def _agent(trace: str, span: str, parent: str = "", offset_ms: int = 0) -> Span:
    return Span(
        trace_id=trace,
        span_id=span,
        parent_span_id=parent,
        name="invoke_agent helper",
        kind=1,
        start_ns=T0 + offset_ms * 1_000_000,
        end_ns=T0 + (offset_ms + 5) * 1_000_000,
        attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "helper"},
    )


def _tool(trace: str, span: str, parent: str, offset_ms: int) -> Span:
    return Span(
        trace_id=trace,
        span_id=span,
        parent_span_id=parent,
        name="execute_tool lookup",
        kind=1,
        start_ns=T0 + offset_ms * 1_000_000,
        end_ns=T0 + (offset_ms + 1) * 1_000_000,
        attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup"},
    )


def _run_rows(store: Store) -> list[tuple]:
    return store.con.execute(
        "SELECT trace_id, root_span_id, tool_calls_count FROM runs ORDER BY trace_id"
    ).fetchall()


def test_a_span_repeated_within_a_batch_is_stored_once(tmp_path: Path) -> None:
    trace = "a1" * 16
    root = _agent(trace, "01" * 8)
    spans = [root, _tool(trace, "02" * 8, root.span_id, 1), replace(root)]
    assert not prepare_batch(spans).distinct_spans
    with Store.open(tmp_path / "t.duckdb") as store:
        with store.transaction():
            stats = ingest_batch(store, spans)
        assert (stats.spans, stats.new_spans) == (3, 2)
        assert store.count("spans") == 2
        assert len(_run_rows(store)) == len(convert_trace(spans[:2])) == 1


def test_batches_overlapping_stored_traces_store_new_spans_only(tmp_path: Path) -> None:
    old, new = "b2" * 16, "c3" * 16
    old_root, new_root = _agent(old, "01" * 8), _agent(new, "01" * 8)
    late_child = _tool(old, "02" * 8, old_root.span_id, 1)
    second = [late_child, new_root, _tool(new, "03" * 8, new_root.span_id, 2)]
    with Store.open(tmp_path / "t.duckdb") as store:
        with store.transaction():
            store_prepared(store, prepare_batch([old_root]))
        assert prepare_batch(second).distinct_spans
        with store.transaction():  # one trace already stored: the batch is not all new
            stats = store_prepared(store, prepare_batch(second))
        assert stats.new_spans == 3
        rows = _run_rows(store)
        assert rows == [(old, old_root.span_id, 1), (new, new_root.span_id, 1)]
        with store.transaction():  # everything again: nothing new, runs unchanged
            again = store_prepared(store, prepare_batch([old_root, *second]))
        assert again.new_spans == 0
        assert store.count("spans") == 4
        assert _run_rows(store) == rows


# a span is (trace, span id): few of each, so batches repeat and overlap each other
_ids = st.tuples(st.sampled_from(["a1", "b2", "c3"]), st.integers(1, 4))


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(st.lists(st.lists(_ids, min_size=1, max_size=6), min_size=1, max_size=4), st.booleans())
def test_any_overlapping_batches_store_each_span_once(
    tmp_path_factory, batches: list[list[tuple[str, int]]], merged: bool
) -> None:
    """Whatever repeats within and across batches (merged into one write or not), each span is
    stored once, as it first arrived, and the counts of new spans add up to the spans stored."""
    path = tmp_path_factory.mktemp("dedupe") / "t.duckdb"
    made = [
        [replace(_tool(t * 16, f"{n:016x}", "", n), name=f"batch {i}") for t, n in batch]
        for i, batch in enumerate(batches)
    ]
    first: dict[tuple[str, str], str] = {}
    for batch in made:
        for span in batch:
            first.setdefault((span.trace_id, span.span_id), span.name)
    with Store.open(path) as store:
        prepared = [prepare_batch(b) for b in made]
        writes = [merge_prepared(prepared)] if merged else prepared
        new = 0
        for write in writes:
            with store.transaction():
                new += store_prepared(store, write).new_spans
        rows = store.con.execute("SELECT trace_id, span_id, name FROM spans").fetchall()
    assert new == len(rows) == len(first)
    assert {(t, s): n for t, s, n in rows} == first
