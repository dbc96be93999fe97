"""The converter's output over every fixture payload is what ``golden_outputs.json`` holds.

The converter and the run rows were restructured for speed (issue 30: plain values inside,
pydantic at the edge, one pass per table); this test says that they still give exactly what
they gave before, over real payloads: every framework capture under ``tests/fixtures/
frameworks/``, every file of ``tests/fixtures/otlp/`` and the benchmarks' synthetic traces.
For each payload it digests the runs (``Run.to_dict``, in order) and the ``runs``,
``tool_calls`` and ``llm_calls`` rows ``run_tables`` lays out for the store.

A change that is meant to change the output (a new rule) updates the digests:
``.venv/bin/python tests/convert/test_convert_output_unchanged.py --update``, and says which
payloads changed and why in its commit.
"""

from __future__ import annotations

import gc
import hashlib
import sys
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from tracereplay.convert import convert_trace
from tracereplay.otlp.files import decode_file_content, iter_input_files, read_file
from tracereplay.spans import LogRecord, Span
from tracereplay.store.rows import RunRows, run_tables

TESTS = Path(__file__).resolve().parent.parent
FIXTURES = TESTS / "fixtures"
GOLDEN = Path(__file__).resolve().parent / "golden_outputs.json"
LOGS = "otlp/generated-otel-genai-v1.36-default__events.logs.json"
SYNTH_TRACES = 60


def _payloads() -> Iterator[tuple[str, list[Span], list[LogRecord]]]:
    """``(name, spans, logs)`` of every payload: a framework shape's folder, an OTLP fixture
    file (the GenAI 1.36 chat spans also with their log records), the synthetic traces."""
    for folder in sorted({p.parent for p in (FIXTURES / "frameworks").rglob("*-traces.*")}):
        spans: list[Span] = []
        logs: list[LogRecord] = []
        for path in iter_input_files([folder]):
            decoded = read_file(path)
            spans.extend(decoded.spans)
            logs.extend(decoded.logs)
        yield str(folder.relative_to(FIXTURES)), spans, logs
    for path in sorted((FIXTURES / "otlp").iterdir()):
        if path.suffix not in (".pb", ".json", ".jsonl") or path.name.endswith(".logs.json"):
            continue
        try:
            decoded = decode_file_content(path.read_bytes())
        except Exception:  # an attribute-map fixture, no OTLP file
            continue
        if decoded.spans:
            yield str(path.relative_to(FIXTURES)), decoded.spans, []
    chat = read_file(FIXTURES / "otlp/generated-otel-genai-v1.36-default__chat_spans.json")
    events = decode_file_content((FIXTURES / LOGS).read_bytes())
    yield "otlp/v1.36 chat spans with their log records", chat.spans, events.logs
    import synth  # benchmarks/ (on the test path): the ingest benchmark's traces

    spans = [s for req in synth.requests(SYNTH_TRACES) for s in _decoded(req)]
    yield "benchmarks/synth", spans, []


def _decoded(request) -> list[Span]:
    return decode_file_content(request.SerializeToString()).spans


def digest(spans: list[Span], logs: list[LogRecord]) -> str:
    """The runs of every trace (spans in start order, as ingest gives them) and their rows."""
    by_trace: dict[str, list[Span]] = defaultdict(list)
    for span in spans:
        by_trace[span.trace_id].append(span)
    logs_by_trace: dict[str, list[LogRecord]] = defaultdict(list)
    for record in logs:
        logs_by_trace[record.trace_id].append(record)
    runs = []
    for trace_id, group in by_trace.items():
        group.sort(key=lambda s: s.start_ns)
        runs.extend(convert_trace(group, logs_by_trace.get(trace_id, [])))
    h = hashlib.sha256(orjson.dumps([r.to_dict() for r in runs], option=orjson.OPT_SORT_KEYS))
    tables = run_tables(runs)
    for table in (tables.runs, tables.tool_calls, tables.llm_calls):
        rows = [] if table is None else table.to_pylist()
        h.update(orjson.dumps(rows, option=orjson.OPT_SORT_KEYS, default=str))
        h.update(b"" if table is None else str(table.schema).encode())
    return h.hexdigest()


def digests() -> dict[str, str]:
    return {name: digest(spans, logs) for name, spans, logs in _payloads()}


def test_the_output_over_every_fixture_is_unchanged() -> None:
    golden = orjson.loads(GOLDEN.read_bytes())
    now = digests()
    changed = sorted(name for name in now.keys() & golden.keys() if now[name] != golden[name])
    assert not changed, f"the converter's output changed for: {changed}"
    new = sorted(now.keys() - golden.keys())
    if new:
        pytest.skip(f"payloads without a digest yet (run this file with --update): {new}")


def test_rows_laid_out_trace_by_trace_are_the_rows_of_all_runs() -> None:
    """Ingest lays out each trace's runs as soon as it has them (``RunRows.add`` in
    ``prepare_batch``): the tables are the ones ``run_tables`` makes of all the runs at once."""
    for name, spans, logs in _payloads():
        by_trace: dict[str, list[Span]] = defaultdict(list)
        for span in spans:
            by_trace[span.trace_id].append(span)
        rows = RunRows()
        runs = []
        for trace_id, group in by_trace.items():
            group.sort(key=lambda s: s.start_ns)
            trace_logs = [r for r in logs if r.trace_id == trace_id]
            converted = convert_trace(group, trace_logs)
            rows.add(convert_trace(group, trace_logs))
            runs.extend(converted)
        one_by_one, at_once = rows.tables(), run_tables(runs)
        assert rows.count == len(runs), name
        for table in ("runs", "tool_calls", "llm_calls"):
            a, b = getattr(one_by_one, table), getattr(at_once, table)
            assert (a is None and b is None) or (a is not None and a.equals(b)), (name, table)


def test_conversion_leaves_no_reference_cycles() -> None:
    """Converting a trace leaves nothing for the cyclic collector (``tree.TracePlan.release``):
    ingest converts with the collector paused, and what a batch leaves in cycles (the nodes,
    and the spans they hold) is traversed by the first collection after it."""
    payloads = list(_payloads())
    enabled = gc.isenabled()
    gc.disable()
    gc.collect()
    gc.freeze()  # what exists now is not the conversion's: collections look at new objects only
    try:
        for name, spans, logs in payloads:
            digest(spans, logs)
            assert gc.collect() == 0, name
    finally:
        gc.unfreeze()
        if enabled:
            gc.enable()


if __name__ == "__main__":
    if sys.argv[1:] != ["--update"]:
        sys.exit("usage: test_convert_output_unchanged.py --update")
    sys.path.insert(0, str(TESTS.parent / "benchmarks"))
    GOLDEN.write_bytes(orjson.dumps(digests(), option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS))
    print(f"wrote {GOLDEN}")
