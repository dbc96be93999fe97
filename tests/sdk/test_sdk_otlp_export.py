"""``configure(endpoint=...)`` and the OTEL_* variables: real OTLP exporters to loopback receivers."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from otlp_receivers import grpc_receiver, http_receiver

import tracereplay
from tracereplay.sdk import SdkConfigError, stats

EXPECTED = ["execute_tool echo", "invoke_agent echo_agent"]
REPO = Path(__file__).resolve().parents[2]


@tracereplay.tool
def echo(text: str) -> str:
    return text


def run_agent() -> None:
    with tracereplay.agent_run("echo_agent", "say hi") as run:
        run.set_response(echo("hi"))


def provider() -> TracerProvider:
    return TracerProvider(resource=Resource.create({"service.name": "otlp-test"}))


@pytest.fixture(autouse=True)
def _no_otel_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in list(os.environ):
        if var.startswith("OTEL_"):
            monkeypatch.delenv(var)


@pytest.mark.parametrize("protocol", ["http/protobuf", "grpc"])
def test_endpoint_sends_otlp_with_headers(protocol: str) -> None:
    receiver = http_receiver if protocol == "http/protobuf" else grpc_receiver
    with receiver() as (url, received):
        setup = tracereplay.configure(
            endpoint=url,
            protocol=protocol,
            headers={"authorization": "Bearer s3cret"},
            tracer_provider=provider(),
        )
        assert (setup.destination, setup.protocol) == ("otlp", protocol)
        run_agent()
        assert tracereplay.flush()
    assert sorted(received.span_names()) == EXPECTED
    assert received.service_names() == {"otlp-test"}
    assert all(h.get("authorization") == "Bearer s3cret" for h in received.headers)
    if protocol == "http/protobuf":
        assert set(received.paths) == {"/v1/traces"}
    assert stats().spans_exported == 2


@pytest.mark.parametrize("protocol", ["http/protobuf", "grpc"])
def test_standard_otel_variables_choose_endpoint_protocol_headers_and_service(
    protocol: str,
) -> None:
    """A fresh process: configure() with no endpoint, everything from OTEL_*, flushed at exit."""
    receiver = http_receiver if protocol == "http/protobuf" else grpc_receiver
    script = textwrap.dedent(
        """
        import tracereplay
        setup = tracereplay.configure(service_name="name-in-code")
        assert setup.destination == "otlp", setup
        @tracereplay.tool
        def echo(text):
            return text
        with tracereplay.agent_run("echo_agent", "say hi") as run:
            run.set_response(echo("hi"))
        """
    )
    with receiver() as (url, received):
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("OTEL_")},
            "OTEL_SERVICE_NAME": "name-from-env",
            "OTEL_EXPORTER_OTLP_ENDPOINT": url,
            "OTEL_EXPORTER_OTLP_PROTOCOL": protocol,
            "OTEL_EXPORTER_OTLP_HEADERS": "x-team=agents",
            "PYTHONPATH": str(REPO),
        }
        out = subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60
        )
        assert out.returncode == 0, out.stderr
    assert sorted(received.span_names()) == EXPECTED  # exported at interpreter exit
    assert received.service_names() == {"name-from-env"}
    assert all(h.get("x-team") == "agents" for h in received.headers)


def test_an_explicit_db_wins_over_the_otlp_variables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")
    setup = tracereplay.configure(db=tmp_path / "t.duckdb", tracer_provider=provider())
    assert setup.destination == "spool"


def test_unknown_protocol_is_a_one_line_error(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(SdkConfigError, match="unsupported OTLP protocol 'http/json'"):
        tracereplay.configure(endpoint="http://127.0.0.1:4318", protocol="http/json")  # type: ignore[arg-type]
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "carrier-pigeon")
    with pytest.raises(SdkConfigError, match="carrier-pigeon"):
        tracereplay.configure(endpoint="http://127.0.0.1:4318")
