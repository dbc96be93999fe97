"""Converted runs go through the real ingest pipeline and DuckDB store unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest
from convert_helpers import WEATHER_ID, load_spans

from tracereplay.convert import convert_trace
from tracereplay.ingest.pipeline import ingest_batch
from tracereplay.store.db import Store


@pytest.mark.parametrize(
    "name",
    [
        "generated-otel-genai-latest__agent_tool_calls.json",
        "generated-openinference__agent_tool_calls.pb",
        "generated-openllmetry-0.54-legacy__agent_tool_calls.pb",
    ],
)
def test_stored_run_reads_back_as_converted(tmp_path: Path, name: str) -> None:
    spans = load_spans(name)
    (run,) = convert_trace(spans)
    with Store.open(tmp_path / "t.duckdb") as store:
        # a late batch: the trace is converted again from everything stored
        with store.transaction():
            ingest_batch(store, spans[:2])
        with store.transaction():
            ingest_batch(store, spans[2:])
        assert store.get_run(run.run_id).to_dict() == run.to_dict()
        rows = store.con.execute(
            "SELECT tool_call_id, round FROM tool_calls WHERE run_id = ? ORDER BY position",
            [run.run_id],
        ).fetchall()
        assert rows[0] == (WEATHER_ID, 1)
        assert store.count("runs") == 1
