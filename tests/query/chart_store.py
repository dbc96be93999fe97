"""A store for the charts' browser tests, built once per test session through the CLI.

The broken-off replay store (``drift_store``) with two more eval runs of its suite (recorded,
then the unchanged agent replayed: pass rates 67%, 100%, 100%), and 14 days of synthetic live
runs (``benchmarks/synth.py``: OTLP protobuf ingested like any file) ending today, a different
number each day, so the Production charts have bars of many heights and days without runs.
"""

from __future__ import annotations

import os
import random
import shutil
import time
from pathlib import Path

from drift_store import SUITE, WEATHER, drift_store
from made_once import copy_made_once
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans
from sql_pipeline import tracereplay, tracereplay_here
from synth import _kv, trace_spans

from tracereplay.store.open import open_store

#: live runs on each of the 14 days, oldest first (0: a day without runs)
RUNS_PER_DAY = [3, 0, 5, 8, 2, 0, 0, 12, 7, 4, 9, 1, 6, 10]
DAY_NS = 86_400 * 10**9

_built: dict[str, tuple[Path, str]] = {}


def _synthetic_days(path: Path) -> None:
    rng = random.Random(11)
    today = time.time_ns() // DAY_NS * DAY_NS
    req = ExportTraceServiceRequest()
    rs = ResourceSpans()
    rs.resource.attributes.extend([_kv("service.name", "weather-agent-demo")])
    ss = rs.scope_spans.add()
    for d, count in enumerate(RUNS_PER_DAY):
        day = today - (len(RUNS_PER_DAY) - 1 - d) * DAY_NS
        for j in range(count):
            ss.spans.extend(trace_spans(rng, day + 3_600 * 10**9 + j * 60 * 10**9))
    req.resource_spans.append(rs)
    path.write_bytes(req.SerializeToString())


def build(directory: Path, source: Path) -> tuple[Path, str]:
    """``directory/charts.duckdb``; returns it and the suite's latest eval run id."""
    db = directory / "charts.duckdb"
    shutil.copyfile(source, db)
    path = os.pathsep.join([str(WEATHER), os.environ.get("PYTHONPATH", "")])
    tracereplay_here(db, "eval", SUITE, "--label", "recorded")
    tracereplay(db, "eval", SUITE, "--agent", "eval_agent:answer", "--label", "v1",
                env={"PYTHONPATH": path})  # fmt: skip
    _synthetic_days(directory / "days.pb")
    tracereplay_here(db, "ingest", str(directory / "days.pb"))
    with open_store(db) as store:
        [(latest,)] = store.con.execute(
            "SELECT eval_run_id FROM eval_runs ORDER BY started_at DESC LIMIT 1"
        ).fetchall()
    return db, latest


def chart_store(tmp_path_factory) -> tuple[Path, str]:  # noqa: ANN001 - pytest's TempPathFactory
    """The session's store (built once for every worker: ``made_once``; copied once per
    process) and the suite's latest eval run id."""
    if "db" not in _built:
        source, _ = drift_store(tmp_path_factory)
        folder = copy_made_once(tmp_path_factory, "charts", lambda into: build(into, source))
        db = folder / "charts.duckdb"
        with open_store(db) as store:
            [(latest,)] = store.con.execute(
                "SELECT eval_run_id FROM eval_runs ORDER BY started_at DESC LIMIT 1"
            ).fetchall()
        _built["db"] = (db, latest)
    return _built["db"]
