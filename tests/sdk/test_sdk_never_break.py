"""Never break the agent: storage and export errors are counted and logged once, never raised;
a full buffer drops spans (counted) instead of blocking."""

from __future__ import annotations

import logging
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider
from sdk_helpers import Recorded

import tracereplay
from tracereplay.sdk import stats
from tracereplay.sdk.exporter import SpoolSpanExporter
from tracereplay.store.open import open_store


@tracereplay.tool
def add(a: int, b: int) -> int:
    return a + b


def agent(query: str, tools: int = 1) -> str:
    with tracereplay.agent_run("calc", query) as run:
        total = sum(add(i, 1) for i in range(tools))
        run.set_response(str(total))
        return str(total)


def sdk_warnings(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [
        r for r in caplog.records if r.name == "tracereplay.sdk" and r.levelno >= logging.WARNING
    ]


def test_unwritable_spool_is_logged_once_and_counted(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "a-regular-file"
    blocker.write_text("not a directory")
    tracereplay.configure(db=blocker / "sub" / "t.duckdb", tracer_provider=TracerProvider())
    caplog.set_level(logging.DEBUG, logger="tracereplay.sdk")
    for i in range(3):
        assert agent(f"q{i}", tools=2) == "3"
        tracereplay.flush()  # three separate failed exports
    s = stats()
    assert s.spans_failed == 9 and s.spans_exported == 0
    assert s.export_errors == 3
    assert "a-regular-file" in (s.last_error or "")
    [warning] = sdk_warnings(caplog)
    assert "could not export" in warning.getMessage()


def test_full_buffer_drops_and_counts_instead_of_blocking(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_BSP_MAX_QUEUE_SIZE", "8")
    monkeypatch.setenv("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "4")
    db = tmp_path / "t.duckdb"
    setup = tracereplay.configure(db=db, tracer_provider=TracerProvider())
    assert isinstance(setup.exporter, SpoolSpanExporter)
    stalled = setup.exporter._writer._lock  # a disk that stops answering
    stalled.acquire()
    try:
        agent("q0", tools=5)  # 6 spans: the export thread takes a batch of 4 and hangs
        deadline = time.monotonic() + 30
        while setup.processor.queued != 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert setup.processor.queued == 2, "the export thread took its first batch"
        for i in range(1, 10):
            agent(f"q{i}", tools=5)  # 54 more spans into a queue of 8: the agent never waits
        assert stats().spans_dropped == 54 - 6
    finally:
        stalled.release()
    assert tracereplay.flush()
    s = stats()
    assert s.spans_exported + s.spans_dropped == 60
    with open_store(db) as store:
        assert store.count("spans") == s.spans_exported


def test_unreachable_endpoint_never_reaches_the_agent(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as sock:  # a loopback port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "1")
    tracereplay.configure(endpoint=f"http://127.0.0.1:{port}", tracer_provider=TracerProvider())
    assert agent("q", tools=2) == "3"
    assert tracereplay.flush() in (True, False)
    s = stats()
    assert s.spans_failed == 3 and s.export_errors >= 1


def test_instrumentation_errors_are_swallowed(recorded: Recorded) -> None:
    class Unprintable:
        def __str__(self) -> str:
            raise RuntimeError("cannot print me")

        __repr__ = __str__

    @tracereplay.tool
    def consume(value: object) -> str:
        return "consumed"

    with tracereplay.agent_run("a", "q") as run:
        assert consume(Unprintable()) == "consumed"
        run.set_response(Unprintable())
    assert stats().instrumentation_errors >= 2
    tool = recorded.one("execute_tool consume")
    assert "gen_ai.tool.call.arguments" not in tool.attributes
    assert tool.attributes["gen_ai.tool.call.result"] == "consumed"
    assert recorded.one("invoke_agent a").status.status_code.name == "UNSET"


def test_without_configure_the_sdk_is_a_no_op() -> None:
    script = textwrap.dedent(
        """
        import tracereplay
        @tracereplay.tool
        def t(x):
            return x * 2
        with tracereplay.agent_run("a", "q") as run:
            assert t(2) == 4
            run.set_response("4")
        assert tracereplay.flush()
        print("ok")
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
