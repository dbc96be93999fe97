"""A trace that arrives in pieces (one span per request, many files, in any order) ends as the
same runs as when it arrives whole, and the summaries count distinct traces and runs."""

from __future__ import annotations

import json
import random
from pathlib import Path

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from typer.testing import CliRunner

from tracereplay.cli.app import app

FIXTURES = Path(__file__).parent.parent / "fixtures" / "otlp"
WHOLE = [
    FIXTURES / "generated-otel-genai-latest__agent_tool_calls.pb",
    FIXTURES / "generated-openinference__agent_tool_calls.pb",
    FIXTURES / "generated-openllmetry-0.62__agent_tool_calls.pb",
]

runner = CliRunner()


def split_one_span_per_request(source: Path, out: Path, seed: int) -> int:
    """Write every span of ``source`` as a request of its own, in a shuffled order."""
    request = ExportTraceServiceRequest.FromString(source.read_bytes())
    pieces = []
    for resource_spans in request.resource_spans:
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                piece = ExportTraceServiceRequest()
                rs = piece.resource_spans.add()
                rs.resource.CopyFrom(resource_spans.resource)
                ss = rs.scope_spans.add()
                ss.scope.CopyFrom(scope_spans.scope)
                ss.spans.add().CopyFrom(span)
                pieces.append(piece.SerializeToString())
    random.Random(seed).shuffle(pieces)
    for i, data in enumerate(pieces):
        (out / f"{source.stem}-{i:03d}.pb").write_bytes(data)
    return len(pieces)


def runs_of(db: Path) -> list[dict]:
    result = runner.invoke(app, ["--db", str(db), "runs", "--format", "json", "--limit", "100"])
    assert result.exit_code == 0, result.output
    runs = json.loads(result.stdout)
    for run in runs:
        run.pop("converted_at", None)  # when, not what
    return sorted(runs, key=lambda r: r["run_id"])


def test_pieces_make_the_same_runs_and_the_summary_counts_distinct(tmp_path: Path) -> None:
    whole_db, pieces_db = tmp_path / "whole.duckdb", tmp_path / "pieces.duckdb"
    result = runner.invoke(app, ["--db", str(whole_db), "ingest", *map(str, WHOLE)])
    assert result.exit_code == 0, result.output
    assert "3 traces, 3 runs" in result.stdout, result.stdout

    pieces = tmp_path / "pieces"
    pieces.mkdir()
    count = sum(split_one_span_per_request(path, pieces, seed) for seed, path in enumerate(WHOLE))
    assert count > 10
    result = runner.invoke(app, ["--db", str(pieces_db), "ingest", str(pieces)])
    assert result.exit_code == 0, result.output
    assert f"read {count} file(s)" in result.stdout
    assert "3 traces, 3 runs" in result.stdout, result.stdout
    assert runs_of(pieces_db) == runs_of(whole_db)


def test_pieces_ingested_one_command_at_a_time_end_the_same(tmp_path: Path) -> None:
    whole_db, pieces_db = tmp_path / "whole.duckdb", tmp_path / "pieces.duckdb"
    assert runner.invoke(app, ["--db", str(whole_db), "ingest", str(WHOLE[0])]).exit_code == 0
    pieces = tmp_path / "pieces"
    pieces.mkdir()
    split_one_span_per_request(WHOLE[0], pieces, seed=7)
    for path in sorted(pieces.iterdir()):
        result = runner.invoke(app, ["--db", str(pieces_db), "ingest", str(path)])
        assert result.exit_code == 0, result.output
        assert "1 traces" in result.stdout
    assert runs_of(pieces_db) == runs_of(whole_db)
