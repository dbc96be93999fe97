"""Ingest with worker processes (files cut in parts, the spool drained a few batches ahead)
stores exactly what the one-process path stores."""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path
from typing import Any

import pytest
import synth  # noqa: E402
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from tracereplay.convert import convert_trace
from tracereplay.convert.messages import parse_history, parse_messages
from tracereplay.errors import IngestError
from tracereplay.ingest import drain, workers
from tracereplay.ingest import files as files_module
from tracereplay.ingest.files import FileReport, ingest_files
from tracereplay.ingest.pipeline import ingest_batch
from tracereplay.ingest.workers import worker_pool
from tracereplay.otlp import read_file
from tracereplay.otlp.files import frame_ranges
from tracereplay.spans import LogRecord
from tracereplay.store import SpoolWriter, Store, spool_dir
from tracereplay.store.open import open_store
from tracereplay.store.rows import _result_json
from tracereplay.store.spool import KIND_TRACES_PB, list_segments

TABLES = {
    "spans": "trace_id, span_id",
    "runs": "run_id",
    "tool_calls": "run_id, position",
    "llm_calls": "run_id, round",
}
VOLATILE = {"ingested_at", "converted_at"}


def _frames(requests: list[ExportTraceServiceRequest]) -> bytes:
    out = b""
    for req in requests:
        blob = req.SerializeToString()
        out += struct.pack(">I", len(blob)) + blob
    return out


def _split_traces(n_traces: int, seed: int) -> list[ExportTraceServiceRequest]:
    """Requests of 5 spans each, so every trace is cut across two messages."""
    spans = [
        s
        for req in synth.requests(n_traces, seed=seed)
        for rs in req.resource_spans
        for ss in rs.scope_spans
        for s in ss.spans
    ]
    out = []
    for i in range(0, len(spans), 5):
        req = ExportTraceServiceRequest()
        ss = req.resource_spans.add().scope_spans.add()
        ss.spans.extend(spans[i : i + 5])
        out.append(req)
    return out


def _dump(db: Path) -> dict[str, list[dict[str, Any]]]:
    with Store.open(db) as store:
        out = {}
        for table, order in TABLES.items():
            rows = store.query_dicts(f"SELECT * FROM {table} ORDER BY {order}")
            out[table] = [{k: v for k, v in r.items() if k not in VOLATILE} for r in rows]
        return out


def _serial(db: Path, paths: list[Path]) -> None:
    with Store.open(db) as store, store.transaction():
        for path in paths:
            decoded = read_file(path)
            ingest_batch(store, decoded.spans, decoded.logs)


def test_frame_ranges_cut_whole_messages(tmp_path: Path) -> None:
    path = tmp_path / "t.pb"
    path.write_bytes(_frames(list(synth.requests(40, traces_per_request=4))))
    ranges = frame_ranges(path, 20_000)
    assert ranges is not None and len(ranges) > 2
    assert ranges[0][0] == 0 and ranges[-1][1] == path.stat().st_size
    assert all(a[1] == b[0] for a, b in zip(ranges, ranges[1:]))
    assert frame_ranges(path, 10**9) is None  # one part: read whole
    (tmp_path / "j.json").write_bytes(b'{"resourceSpans": []}' + b" " * 30_000)
    assert frame_ranges(tmp_path / "j.json", 1000) is None


@pytest.mark.parametrize("write_spans", [1, 10_000])  # each part written alone; all merged
@pytest.mark.parametrize("workers", [0, 2])
def test_files_in_parts_store_what_one_process_stores(
    tmp_path: Path, workers: int, write_spans: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(files_module, "WRITE_SPANS", write_spans)
    big = tmp_path / "big.pb"
    big.write_bytes(_frames(_split_traces(30, seed=3)))
    small = tmp_path / "small.pb"
    small.write_bytes(_frames(list(synth.requests(3, seed=4))))
    again = tmp_path / "again.pb"  # the same spans again: nothing new, runs unchanged
    again.write_bytes(_frames(list(synth.requests(3, seed=4))))
    paths = [big, small, again]
    _serial(tmp_path / "serial.duckdb", paths)
    reports: list[FileReport] = []
    with worker_pool(workers) as pool, Store.open(tmp_path / "par.duckdb") as store:
        stats = ingest_files(store, paths, pool, reports.append, part_bytes=8_000)
    assert [r.path for r in reports] == paths and all(r.error is None for r in reports)
    assert stats.spans == 36 * synth.SPANS_PER_TRACE
    assert stats.new_spans == 33 * synth.SPANS_PER_TRACE
    assert _dump(tmp_path / "par.duckdb") == _dump(tmp_path / "serial.duckdb")


def test_a_file_that_fails_in_a_late_part_leaves_nothing(tmp_path: Path) -> None:
    good = _frames(list(synth.requests(20, traces_per_request=2)))
    bad = tmp_path / "bad.pb"
    bad.write_bytes(good + struct.pack(">I", 5) + b"\xff\xff\xff\xff\xff")
    with pytest.raises(Exception) as expected:
        read_file(bad)
    ok = tmp_path / "ok.pb"
    ok.write_bytes(_frames(list(synth.requests(2, seed=9))))
    reports: list[FileReport] = []
    with worker_pool(2) as pool, Store.open(tmp_path / "t.duckdb") as store:
        stats = ingest_files(store, [ok, bad], pool, reports.append, part_bytes=5_000)
        assert store.count("spans") == 2 * synth.SPANS_PER_TRACE
        assert store.count("runs") == 2
    assert reports[0].error is None
    assert reports[1].error == str(expected.value)  # same words as reading the file whole
    assert stats.runs == 2


def _dies_after_the_first_part(part: Any) -> Any:
    """A worker job (given by name) whose worker dies on any part but a file's first."""
    if part.range is not None and part.range[0] > 0:
        os._exit(1)
    return files_module._prepare_in_worker(part)


def _broken(part: Any) -> Any:
    raise ValueError("boom")


def test_a_dead_worker_stops_ingest_with_one_clear_error_and_nothing_half_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(files_module, "_prepare_in_worker", _dies_after_the_first_part)
    big = tmp_path / "big.pb"
    big.write_bytes(_frames(list(synth.requests(40, traces_per_request=2))))
    with worker_pool(2) as pool, Store.open(tmp_path / "t.duckdb") as store:
        with pytest.raises(IngestError, match="a worker process died; run it again") as died:
            ingest_files(store, [big], pool, part_bytes=5_000)
        assert "\n" not in str(died.value)
        assert store.count("spans") == 0 and store.count("runs") == 0  # the file is one transaction


def test_an_exception_in_a_worker_stops_ingest_with_its_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(files_module, "_prepare_in_worker", _broken)  # the worker gets it by name
    path = tmp_path / "t.pb"
    path.write_bytes(_frames(list(synth.requests(4))))
    with worker_pool(1) as pool, Store.open(tmp_path / "t.duckdb") as store:
        with pytest.raises(IngestError, match=r"failed \(ValueError: boom\)") as failed:
            ingest_files(store, [path], pool)
        assert "\n" not in str(failed.value)
        assert store.count("spans") == 0


def test_handoff_files_are_gone_after_ingest(tmp_path: Path) -> None:
    path = tmp_path / "big.pb"
    path.write_bytes(_frames(list(synth.requests(20, traces_per_request=2))))
    with worker_pool(2) as pool, Store.open(tmp_path / "t.duckdb") as store:
        assert pool is not None
        ingest_files(store, [path], pool, part_bytes=5_000)
        assert list(pool.directory.iterdir()) == []
        assert store.count("runs") == 20
    assert not pool.directory.exists()


def test_late_spans_and_logs_are_converted_from_the_store(tmp_path: Path) -> None:
    requests = _split_traces(4, seed=5)
    first, second = tmp_path / "a.pb", tmp_path / "b.pb"
    first.write_bytes(_frames(requests[: len(requests) // 2 + 1]))
    second.write_bytes(_frames(requests[len(requests) // 2 + 1 :]))
    _serial(tmp_path / "serial.duckdb", [first, second])
    with Store.open(tmp_path / "par.duckdb") as store:
        ingest_files(store, [first], None)
        ingest_files(store, [second], None)
    assert _dump(tmp_path / "par.duckdb") == _dump(tmp_path / "serial.duckdb")
    # a log record for a stored trace: the trace is converted again with it
    trace_id = _dump(tmp_path / "par.duckdb")["runs"][0]["trace_id"]
    record = LogRecord(trace_id=trace_id, span_id="", time_ns=1, event_name="x", body="hi")
    with Store.open(tmp_path / "par.duckdb") as store, store.transaction():
        stats = ingest_batch(store, [], [record])
    assert stats.runs == 1 and stats.new_logs == 1


def test_spool_drained_by_workers_matches_one_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    payloads = [r.SerializeToString() for r in _split_traces(40, seed=6)]
    for name, parallel in (("one", False), ("par", True)):
        db = tmp_path / f"{name}.duckdb"
        writer = SpoolWriter(spool_dir(db))
        for payload in payloads:
            writer.append(KIND_TRACES_PB, payload)
        writer.close()
        if parallel:
            monkeypatch.setattr(drain, "PARALLEL_BATCH_BYTES", 6_000)
            monkeypatch.setattr(drain, "PARALLEL_MIN_BYTES", 1)
            monkeypatch.setattr(drain, "PARALLEL_TX_BYTES", 20_000)  # several transactions
        with open_store(db) as store:
            assert store.count("runs") == 40
        monkeypatch.undo()
    assert workers._shared is not None  # the worker processes did the decoding
    assert list(workers._shared.directory.iterdir()) == []
    assert _dump(tmp_path / "par.duckdb") == _dump(tmp_path / "one.duckdb")


def _dies(records: Any, spool_directory: Any = None) -> Any:
    """A drain job (given by name) whose worker dies."""
    os._exit(1)


def test_a_dead_drain_worker_stops_the_drain_with_one_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "d.duckdb"
    writer = SpoolWriter(spool_dir(db))
    for payload in [r.SerializeToString() for r in _split_traces(40, seed=7)]:
        writer.append(KIND_TRACES_PB, payload)
    writer.close()
    monkeypatch.setattr(drain, "PARALLEL_BATCH_BYTES", 6_000)
    monkeypatch.setattr(drain, "PARALLEL_MIN_BYTES", 1)
    monkeypatch.setattr(drain, "_decode_records", _dies)
    opened = open_store(db)
    with pytest.raises(IngestError, match="a worker process died; run it again") as died, opened:
        pass
    assert "\n" not in str(died.value)
    with Store.open(db) as store:  # nothing stored, the spool kept whole
        assert store.count("spans") == 0
    monkeypatch.undo()
    with open_store(db) as store:  # a new pool takes over
        assert store.count("runs") == 40
    assert list_segments(spool_dir(db)) == []


def test_result_json_is_the_models_json(tmp_path: Path) -> None:
    for req in synth.requests(3, seed=2):
        decoded_spans = read_file(_write(tmp_path, _frames([req]))).spans
        by_trace: dict[str, list] = {}
        for span in decoded_spans:
            by_trace.setdefault(span.trace_id, []).append(span)
        for spans in by_trace.values():
            (run,) = convert_trace(sorted(spans, key=lambda s: s.start_ns))
            assert _result_json(run.result) == run.result.to_json().decode()


def _write(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "one.pb"
    path.write_bytes(data)
    return path


_part = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "content": st.text(max_size=8)}),
    st.fixed_dictionaries(
        {
            "type": st.just("tool_call"),
            "id": st.text(max_size=4),
            "name": st.text(max_size=4),
            "arguments": st.one_of(
                st.text(max_size=6), st.dictionaries(st.text(max_size=3), st.integers())
            ),
        }
    ),
    st.fixed_dictionaries({"type": st.just("tool_call_response"), "id": st.text(max_size=4)}),
    st.text(max_size=5),
)
_message = st.one_of(
    st.fixed_dictionaries(
        {
            "role": st.sampled_from(["user", "assistant", "tool", ""]),
            "parts": st.lists(_part, max_size=3),
        },
        optional={"finish_reason": st.sampled_from(["stop", "tool_calls", 3])},
    ),
    st.fixed_dictionaries({"role": st.just("user"), "content": st.text(max_size=6)}),
    st.text(max_size=5),
    st.integers(),
)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.lists(_message, max_size=4), min_size=1, max_size=4),
    st.sampled_from([(", ", ": "), (",", ":"), (" , ", " : ")]),
    st.sampled_from(["", " ", "]", ",", "x"]),
)
def test_parse_history_is_parse_messages(
    steps: list[list[Any]], separators: tuple[str, str], junk: str
) -> None:
    history: list[Any] = []
    for added in steps:
        history = history + added
        text = json.dumps(history, separators=separators)
        for value in (text, text + junk):
            assert parse_history(value, "user") == parse_messages(value, "user")


def test_handoff_skips_a_small_dev_shm(monkeypatch: pytest.MonkeyPatch) -> None:
    from tracereplay.ingest import handoff

    monkeypatch.setattr(handoff, "SHM_MIN_FREE", 1 << 62)  # more than any /dev/shm has
    directory = handoff.new_directory()
    try:
        assert not str(directory).startswith("/dev/shm")
        assert directory.is_dir()
    finally:
        handoff.remove_directory(directory)
    assert not directory.exists()
