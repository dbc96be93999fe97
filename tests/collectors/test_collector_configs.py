"""The Collector configurations in collectors/: they parse, their pipelines are complete, and
what they send or write is what ``tracereplay serve`` and ``tracereplay ingest`` accept.

otelcol-contrib itself is not available here; the checks stop at the boundary: the endpoint,
path, encoding, compression and headers the exporters use are exercised against a real
``tracereplay serve``, and the file exporter's line format against ``tracereplay ingest``.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import requests
import yaml

from tracereplay.otlp import iter_input_files, read_file
from tracereplay.serve.auth import TokenCheck
from tracereplay.serve.bodies import check_encoding
from tracereplay.serve.config import ServeConfig
from tracereplay.serve.http_receiver import ROUTES
from tracereplay.store import Store

ROOT = Path(__file__).parent.parent.parent
COLLECTORS = ROOT / "collectors"
FIXTURES = ROOT / "tests" / "fixtures" / "otlp"
CONFIGS = sorted(COLLECTORS.glob("*.yaml"))
_ENV = re.compile(r"\$\{env:([A-Z_]+)(?::-([^}]*))?\}")


def load(name: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """A config as the Collector sees it: ``${env:VAR:-default}`` resolved from ``env``."""
    text = (COLLECTORS / name).read_text()
    resolved = _ENV.sub(lambda m: (env or {}).get(m.group(1), m.group(2) or ""), text)
    return yaml.safe_load(resolved)


def test_there_are_three_configs() -> None:
    assert {p.name for p in CONFIGS} == {"gateway.yaml", "loadbalancer.yaml", "file-spool.yaml"}


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_pipelines_refer_to_defined_components(path: Path) -> None:
    config = load(path.name)
    service = config["service"]
    for extension in service.get("extensions", []):
        assert extension in config["extensions"]
    used: dict[str, set[str]] = {"receivers": set(), "processors": set(), "exporters": set()}
    for name, pipeline in service["pipelines"].items():
        assert name.split("/")[0] in ("traces", "logs")
        assert pipeline["receivers"] and pipeline["exporters"]
        for kind in used:
            for component in pipeline.get(kind, []):
                assert component in config[kind], f"{path.name}: {component} is not defined"
                used[kind].add(component)
        processors = pipeline.get("processors", [])
        assert processors and processors[0] == "memory_limiter"  # first, as the Collector advises
    for kind, names in used.items():
        assert set(config.get(kind, {})) == names, f"{path.name}: unused {kind}"
    otlp = config["receivers"]["otlp"]["protocols"]
    assert otlp["grpc"]["endpoint"].endswith(":4317") and otlp["http"]["endpoint"].endswith(":4318")


def test_gateway_keeps_genai_traces_and_events() -> None:
    config = load("gateway.yaml")
    policy = config["processors"]["tail_sampling/genai"]["policies"][0]
    conditions = " ".join(policy["ottl_condition"]["span"])
    for key in ("gen_ai.operation.name", "openinference.span.kind", "traceloop.span.kind"):
        assert key in conditions
    drop = config["processors"]["filter/genai-events"]["logs"]["log_record"][0]
    assert "gen_ai" in drop and drop.startswith("not ")
    assert config["processors"]["batch"]["send_batch_max_size"] <= 1024


def test_loadbalancer_routes_whole_traces_to_serve_grpc_ports() -> None:
    exporter = load("loadbalancer.yaml")["exporters"]["loadbalancing"]
    assert exporter["routing_key"] == "traceID"
    assert exporter["protocol"]["otlp"]["compression"] == "gzip"
    assert exporter["protocol"]["otlp"]["headers"]["authorization"].startswith("Bearer ")
    hostnames = exporter["resolver"]["static"]["hostnames"]
    assert len(hostnames) >= 2
    assert {h.rsplit(":", 1)[1] for h in hostnames} == {str(ServeConfig(db=Path("x")).grpc_port)}


def test_file_spool_writes_what_ingest_reads(tmp_path: Path) -> None:
    config = load("file-spool.yaml", {"TRACEREPLAY_SPOOL_DIR": str(tmp_path)})
    exporters = config["exporters"]
    for name in ("file/traces", "file/logs"):
        assert exporters[name]["format"] == "json"
        assert "compression" not in exporters[name]  # zstd would need Python 3.14 to read
        assert exporters[name]["rotation"]["max_megabytes"] > 0
        assert Path(exporters[name]["path"]).parent == tmp_path
    # What the file exporter leaves after a rotation: a complete backup, and the active file
    # still being written (its last line cut). The backups are what the README says to ingest.
    lines = (FIXTURES / "generated-collector-fileexporter-style.jsonl").read_bytes()
    active = Path(exporters["file/traces"]["path"])
    backup = active.with_name(f"{active.stem}-2026-11-30T10-00-00.000{active.suffix}")
    backup.write_bytes(lines)
    active.write_bytes(lines[: len(lines) // 2])
    logs_active = Path(exporters["file/logs"]["path"])
    logs_backup = logs_active.with_name(f"{logs_active.stem}-2026-11-30T10-00-00.000.jsonl")
    logs_line = json.dumps(
        json.loads((FIXTURES / "generated-otel-genai-v1.36-default__events.logs.json").read_text())
    )
    logs_backup.write_text(logs_line + "\n")

    assert len(read_file(backup).spans) == 16
    assert len(read_file(logs_backup).logs) == 9
    backups = sorted(tmp_path.glob("traces-*.jsonl")) + sorted(tmp_path.glob("logs-*.jsonl"))
    assert backups == [backup, logs_backup]
    assert set(backups) <= set(iter_input_files([tmp_path]))  # a directory walk finds them too

    db = tmp_path / "spool.duckdb"
    result = subprocess.run(
        [sys.executable, "-m", "tracereplay", "--db", str(db), "ingest", *map(str, backups)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    with Store.open(db) as store:
        assert store.count("spans") == 16
        assert store.count("logs") == 9
        assert store.count("runs") >= 1


@pytest.fixture(scope="module")
def serve(tmp_path_factory: pytest.TempPathFactory) -> Any:
    db = tmp_path_factory.mktemp("collectors") / "gw.duckdb"
    proc = subprocess.Popen(
        [
            sys.executable, "-m", "tracereplay", "--db", str(db), "serve",
            "--http-port", "0", "--no-grpc", "--token", "gw-token",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    port = 0
    for line in proc.stdout:
        if m := re.search(r"OTLP/HTTP\s+http://[^ ]+:(\d+)", line):
            port = int(m.group(1))
        if line.strip() == "ready":
            break
    yield port, db
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=60)


def test_gateway_exporter_requests_are_accepted_by_serve(serve: tuple[int, Path]) -> None:
    """Send what ``otlphttp/tracereplay`` sends, built from its configuration, to a real serve."""
    port, db = serve
    env = {"TRACEREPLAY_ENDPOINT": f"http://127.0.0.1:{port}", "TRACEREPLAY_TOKEN": "gw-token"}
    exporter = load("gateway.yaml", env)["exporters"]["otlphttp/tracereplay"]
    default = urlsplit(load("gateway.yaml")["exporters"]["otlphttp/tracereplay"]["endpoint"])
    assert default.hostname == "127.0.0.1" and default.path in ("", "/")
    assert exporter["encoding"] == "proto"
    assert check_encoding(exporter["compression"]) == "gzip"
    assert TokenCheck("gw-token").allows(exporter["headers"]["Authorization"])
    headers = {
        **exporter["headers"],
        "Content-Type": "application/x-protobuf",
        "Content-Encoding": exporter["compression"],
    }
    traces = (FIXTURES / "generated-otel-genai-latest__agent_tool_calls.pb").read_bytes()
    for signal_name, body in (("traces", traces),):
        path = f"/v1/{signal_name}"
        assert path in ROUTES
        reply = requests.post(
            exporter["endpoint"] + path, data=gzip.compress(body), headers=headers, timeout=30
        )
        assert reply.status_code == 200, reply.content
    logs = json.loads(
        (FIXTURES / "generated-otel-genai-v1.36-default__events.logs.json").read_text()
    )
    reply = requests.post(
        exporter["endpoint"] + "/v1/logs",
        data=gzip.compress(json.dumps(logs).encode()),
        headers={**headers, "Content-Type": "application/json"},
        timeout=30,
    )
    assert reply.status_code == 200
    deadline = time.monotonic() + 30
    while True:
        with Store.open(db) as store:
            if store.count("spans") == 5 and store.count("logs") == 9:
                break
        assert time.monotonic() < deadline
        time.sleep(0.2)


def test_otelcol_validates_each_config() -> None:
    """Where otelcol-contrib is installed, it must accept every configuration."""
    found = shutil.which("otelcol-contrib")
    if found is None:
        pytest.skip("otelcol-contrib is not installed: `otelcol-contrib validate` not run")
    for path in CONFIGS:
        result = subprocess.run(
            [found, "validate", "--config", str(path)],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "TRACEREPLAY_SPOOL_DIR": "/tmp"},
        )
        assert result.returncode == 0, result.stderr
