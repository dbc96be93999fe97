"""One bad record never blocks the store: far-future times from an agent's bad clock, a record
nothing can store, files whose spans are all invalid."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

import tracereplay.ingest.pipeline as pipeline
from tracereplay.sdk.exporter import SpoolSpanExporter
from tracereplay.store import SpoolWriter, spool_dir
from tracereplay.store.open import open_store
from tracereplay.store.spool import KIND_TRACES_JSON, REJECTED_DIR, list_segments, read_records

GOOD = {
    "traceId": "0af7651916cd43dd8448eb211c80319c",
    "spanId": "b7ad6b7169203331",
    "name": "invoke_agent a",
    "startTimeUnixNano": "1790000000000000000",
    "endTimeUnixNano": "1790000001000000000",
    "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "invoke_agent"}}],
}
YEAR_9999_NS = "253402300799000000000"


def _request(*spans: dict[str, object]) -> bytes:
    return json.dumps(
        {"resourceSpans": [{"resource": {}, "scopeSpans": [{"spans": list(spans)}]}]}
    ).encode()


def _span(trace: str, **fields: object) -> dict[str, object]:
    return {**GOOD, "traceId": trace * 32, **fields}


def test_an_agent_with_a_bad_clock_blocks_nothing(tmp_path: Path) -> None:
    db = tmp_path / "clock.duckdb"
    exporter = SpoolSpanExporter(db)
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("bad-clock")
    tracer.start_span("from the far future", start_time=2**64 - 1).end(end_time=2**64 - 1)
    tracer.start_span("past 2262", start_time=2**63).end(end_time=2**63 + 5)
    with tracer.start_as_current_span("invoke_agent fine") as span:
        span.set_attribute("gen_ai.operation.name", "invoke_agent")
    provider.shutdown()
    for _ in range(2):  # every later command works as well
        with open_store(db) as store:
            names = [r[0] for r in store.con.execute("SELECT name FROM spans").fetchall()]
            assert names == ["invoke_agent fine"]
            assert store.count("runs") == 1
    assert list_segments(spool_dir(db)) == []  # drained to the end


def test_bad_times_in_a_spool_record_skip_only_their_spans(tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    writer = SpoolWriter(spool_dir(db))
    writer.append(
        KIND_TRACES_JSON, _request(_span("a", startTimeUnixNano=YEAR_9999_NS), _span("b"))
    )
    writer.append(KIND_TRACES_JSON, _request(_span("c", endTimeUnixNano="-1")))
    writer.append(KIND_TRACES_JSON, _request(_span("d")))
    writer.close()
    with open_store(db) as store:
        rows = store.con.execute("SELECT trace_id FROM spans ORDER BY 1").fetchall()
        assert [r[0][0] for r in rows] == ["b", "d"]


def test_a_record_nothing_can_store_is_set_aside_and_the_rest_is_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A record that fails past decoding (a converter bug, say) is kept aside whole, never
    blocks the records after it, and is never lost."""
    real = pipeline.convert_trace

    def convert(spans, logs=()):  # type: ignore[no-untyped-def]
        if spans and spans[0].trace_id.startswith("e"):
            raise OverflowError("Python int too large to convert to C long")
        return real(spans, logs)

    monkeypatch.setattr(pipeline, "convert_trace", convert)
    db = tmp_path / "t.duckdb"
    writer = SpoolWriter(spool_dir(db))
    for trace in "fef":
        writer.append(KIND_TRACES_JSON, _request(_span(trace, spanId=f"{ord(trace):016x}")))
    writer.append(KIND_TRACES_JSON, _request(_span("a")))
    writer.close()
    with open_store(db) as store:
        rows = store.con.execute("SELECT DISTINCT trace_id FROM spans ORDER BY 1").fetchall()
        assert [r[0][0] for r in rows] == ["a", "f"]
    aside = list((spool_dir(db) / REJECTED_DIR).glob("*.rejected"))
    assert len(aside) == 1
    from tracereplay.store.spool import Segment

    kept = read_records(Segment(aside[0], aside[0].stem, 0, True), 0).records
    assert [
        json.loads(p)["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"][0]
        for _, p in kept
    ] == ["e"]
    assert "OverflowError" in aside[0].with_suffix(".why").read_text()
    assert list_segments(spool_dir(db)) == []


def _ingest(db: Path, *files: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tracereplay", "--db", str(db), "ingest", *map(str, files)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_ingest_exit_codes_tell_the_truth(tmp_path: Path) -> None:
    db = tmp_path / "i.duckdb"
    mixed = tmp_path / "mixed.json"
    mixed.write_bytes(_request(_span("a"), _span("b", startTimeUnixNano=YEAR_9999_NS)))
    all_bad = tmp_path / "all_bad.json"
    all_bad.write_bytes(
        _request(_span("c", startTimeUnixNano=YEAR_9999_NS), _span("d", spanId="00"))
    )
    result = _ingest(db, mixed)
    assert result.returncode == 0, result.stderr
    # one warning (the run's spans also carry no content: a note may follow, ingest_cmd says so)
    [line] = [x for x in result.stderr.splitlines() if not x.startswith("note: ")]
    assert line.startswith(f"warning: {mixed}: skipped 1 invalid spans")
    result = _ingest(db, all_bad)
    assert result.returncode == 1
    assert result.stderr.splitlines()[0].startswith(
        f"error: {all_bad}: nothing valid to store: 2 invalid spans"
    )
    assert "internal error" not in result.stderr
