"""The embedded default: spans go to the spool beside the DuckDB file; reading commands drain it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

import tracereplay
from tracereplay.sdk import SpoolSpanExporter, stats
from tracereplay.store.open import open_store
from tracereplay.store.paths import spool_dir
from tracereplay.store.spool import list_segments


@tracereplay.tool
def get_weather(city: str) -> dict[str, object]:
    return {"city": city, "weather": "foggy", "temperature_c": 14}


@tracereplay.tool
def get_population(city: str) -> int:
    raise TimeoutError(f"population service timed out for {city}")


def weather_run(query: str = "What's the weather and population in San Francisco?") -> str:
    with tracereplay.agent_run(
        "weather_agent", query, context="SF is in California.", parameters={"max_rounds": 3}
    ) as run:
        with run.llm_call(model="gpt-4o-mini", messages=query, provider="openai") as llm:
            llm.set_output(
                tool_calls=[
                    {"id": "call_1", "name": "get_weather", "arguments": {"city": "SF"}},
                    {"id": "call_2", "name": "get_population", "arguments": {"city": "SF"}},
                ],
                finish_reason="tool_calls",
            )
            llm.set_usage(207, 46)
        get_weather("SF")
        try:
            get_population("SF")
        except TimeoutError:
            pass
        with run.llm_call(model="gpt-4o-mini", messages=query, provider="openai") as llm:
            llm.set_output("Foggy, 14 °C; population unknown.")
            llm.set_usage(301, 19)
        run.set_response("Foggy, 14 °C; population unknown.")
        return run.run_id


def provider(name: str = "spool-test") -> TracerProvider:
    return TracerProvider(resource=Resource.create({"service.name": name}))


def test_runs_reach_the_store_through_the_spool(tmp_path: Path) -> None:
    db = tmp_path / "agent.duckdb"
    setup = tracereplay.configure(db=db, tracer_provider=provider())
    assert (setup.destination, setup.db_path) == ("spool", db)
    run_id = weather_run()
    with (
        pytest.raises(ValueError),
        tracereplay.agent_run("weather_agent", "bad question") as run,
    ):
        failed_id = run.run_id
        raise ValueError("the model returned garbage")
    assert tracereplay.flush()
    assert list_segments(spool_dir(db)), "flush wrote a spool segment"
    assert not db.exists(), "the agent never opens the DuckDB file"
    assert stats().spans_exported == 6

    with open_store(db) as store:
        assert store.count("spans") == 6
        run = store.get_run(run_id)
        failed = store.get_run(failed_id)
    assert run.agent_name == "weather_agent" and run.service_name == "spool-test"
    assert run.status == "success"
    assert run.query == "What's the weather and population in San Francisco?"
    assert run.result.response == "Foggy, 14 °C; population unknown."
    assert [d.to_dict() for d in run.context] == [
        {"name": "context", "content": "SF is in California."}
    ]
    assert run.parameters == {"max_rounds": 3}
    assert run.result.total_llm_calls == 2 and run.result.total_rounds == 2
    assert (run.input_tokens, run.output_tokens) == (508, 65)
    calls = [(c.tool_name, c.tool_call_id, c.arguments, c.round) for c in run.result.tool_calls]
    assert calls == [
        ("get_weather", "call_1", {"city": "SF"}, 1),
        ("get_population", "call_2", {"city": "SF"}, 1),
    ]
    assert "timed out" in (run.result.tool_calls[1].error or "")
    assert failed.status == "failed" and "garbage" in (failed.error or "")


@tracereplay.tool
def get_forecast(city: str) -> dict[str, str]:
    # an escaped half of a surrogate pair, as a weather API's JSON may hold: a lone surrogate
    return {"text": json.loads('"sunny \\ud83d"'), "city": city}


def test_a_run_whose_text_holds_a_lone_surrogate_is_stored_whole(tmp_path: Path) -> None:
    """Such text has no UTF-8: the run reaches the store with U+FFFD in its place, not a
    failed export (the whole batch) or a Python repr for the response."""
    db = tmp_path / "agent.duckdb"
    tracereplay.configure(db=db, tracer_provider=provider())
    failed_before = stats().spans_failed
    with tracereplay.agent_run("weather_agent", "Forecast for Oslo?") as run:
        run.set_response("It is " + get_forecast("Oslo")["text"])
        run_id = run.run_id
    assert tracereplay.flush()
    assert stats().spans_failed == failed_before
    with open_store(db) as store:
        stored = store.get_run(run_id)
    assert stored.result.response == "It is sunny \ufffd"
    [call] = stored.result.tool_calls
    assert json.loads(call.result) == {"text": "sunny \ufffd", "city": "Oslo"}


def test_spool_exporter_plugs_into_any_tracer_provider(tmp_path: Path) -> None:
    db = tmp_path / "plain.duckdb"
    tp = provider("plain-otel")
    tp.add_span_processor(SimpleSpanProcessor(SpoolSpanExporter(db)))
    tracer = tp.get_tracer("my-app")
    with tracer.start_as_current_span("invoke_agent plain") as span:
        span.set_attribute("gen_ai.operation.name", "invoke_agent")
        span.set_attribute("gen_ai.agent.name", "plain")
    tp.shutdown()
    assert [s.done for s in list_segments(spool_dir(db))] == [True]  # closed at shutdown
    with open_store(db) as store:
        rows = store.query_dicts("SELECT agent_name, service_name FROM runs", [])
    assert rows == [{"agent_name": "plain", "service_name": "plain-otel"}]
    assert list_segments(spool_dir(db)) == []  # drained and retired


def test_db_defaults_like_the_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TRACEREPLAY_DB", raising=False)
    for var in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        monkeypatch.delenv(var, raising=False)
    assert (
        tracereplay.configure(tracer_provider=provider()).db_path == tmp_path / "tracereplay.duckdb"
    )
    monkeypatch.setenv("TRACEREPLAY_DB", str(tmp_path / "env.duckdb"))
    setup = tracereplay.configure(tracer_provider=provider())
    assert setup.db_path == tmp_path / "env.duckdb"
    weather_run()
    assert tracereplay.flush()
    with open_store(os.environ["TRACEREPLAY_DB"]) as store:
        assert store.count("runs") == 1


def test_configuring_again_replaces_the_destination(tmp_path: Path) -> None:
    tp = provider()
    tracereplay.configure(db=tmp_path / "first.duckdb", tracer_provider=tp)
    weather_run()
    tracereplay.configure(db=tmp_path / "second.duckdb", tracer_provider=tp)
    weather_run()
    assert tracereplay.flush()
    for name in ("first", "second"):
        with open_store(tmp_path / f"{name}.duckdb") as store:
            assert store.count("runs") == 1, name  # not exported twice


def test_configure_adds_to_the_provider_the_application_installed(tmp_path: Path) -> None:
    """A fresh process whose app already set up OpenTelemetry: its exporter keeps every span,
    and tracereplay's spool gets them too, under the app's resource."""
    db = tmp_path / "app.duckdb"
    script = textwrap.dedent(
        f"""
        from opentelemetry import trace
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
        import tracereplay

        app_exporter = InMemorySpanExporter()
        provider = TracerProvider(resource=Resource.create({{"service.name": "the-app"}}))
        provider.add_span_processor(SimpleSpanProcessor(app_exporter))
        trace.set_tracer_provider(provider)

        setup = tracereplay.configure(service_name="ignored", db={str(db)!r})
        assert setup.tracer_provider is provider
        with trace.get_tracer("app").start_as_current_span("http request"):
            with tracereplay.agent_run("app_agent", "hello") as run:
                run.set_response("hi")
        print(sorted(s.name for s in app_exporter.get_finished_spans()))
        """
    )
    out = _run_script(script)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "['http request', 'invoke_agent app_agent']"
    with open_store(db) as store:
        assert store.count("spans") == 2  # flushed at exit
        [row] = store.query_dicts("SELECT agent_name, service_name, parent_run_id FROM runs", [])
    assert row == {"agent_name": "app_agent", "service_name": "the-app", "parent_run_id": None}


def test_spans_are_spooled_as_otlp_json_and_ingested_as_the_protobuf_path_would(
    tmp_path: Path,
) -> None:
    # the exporter writes OTLP/JSON read from the spans directly (not the SDK's protobuf
    # encoder); the drain's JSON decoder gives back what the protobuf path gives
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from tracereplay.otlp import decode_traces_json, decode_traces_pb
    from tracereplay.store.spool import KIND_TRACES_JSON, KIND_TRACES_PB, read_records

    memory = InMemorySpanExporter()
    tp = provider()
    tp.add_span_processor(SimpleSpanProcessor(memory))
    tracer = tp.get_tracer("t")
    with tracer.start_as_current_span("root", attributes={"n": 3, "tags": ("a", "b")}):
        for name in ("a", "b", "c"):
            with tracer.start_as_current_span(name) as span:
                span.add_event("e", {"x": 1.5})
    spans = list(memory.get_finished_spans())  # a, b, c, root
    huge = tracer.start_span("huge", attributes={"big": 2**70})  # no OTLP int: protobuf path
    huge.end()
    db = tmp_path / "records.duckdb"
    exporter = SpoolSpanExporter(db)
    exporter.export(spans)
    exporter.export([huge])
    exporter.shutdown()
    records = [r for s in list_segments(spool_dir(db)) for r in read_records(s, 0).records]
    assert [kind for kind, _ in records] == [KIND_TRACES_JSON, KIND_TRACES_PB]
    via_pb = decode_traces_pb(encode_spans(spans).SerializeToString()).spans
    assert decode_traces_json(records[0][1]).spans == via_pb
    assert [s.name for s in via_pb] == ["a", "b", "c", "root"]
    assert decode_traces_pb(records[1][1]).spans[0].attributes == {}  # as the encoder drops it
    with open_store(db) as store:
        assert store.count("spans") == 5


def test_a_runs_session_reaches_the_store(tmp_path: Path) -> None:
    db = tmp_path / "agent.duckdb"
    tracereplay.configure(db=db, tracer_provider=provider())
    ids = []
    for turn in ("Weather in Paris?", "Should I take an umbrella then?"):
        with tracereplay.agent_run("chat", turn, session_id="conv-7") as run:
            run.set_response("yes")
            ids.append(run.run_id)
    with tracereplay.agent_run("chat", "alone") as run:
        alone = run.run_id
    assert tracereplay.flush()
    with open_store(db) as store:
        assert [store.get_run(i).session_id for i in ids] == ["conv-7", "conv-7"]
        assert store.get_run(alone).session_id is None


@pytest.mark.parametrize("app_logger_provider", [False, True])
def test_log_records_reach_the_store_beside_their_spans(
    tmp_path: Path, app_logger_provider: bool
) -> None:
    """Some instrumentations record the prompts and completions as OpenTelemetry log records
    (Semantic Kernel through a ``LoggingHandler``): with the spool, ``configure()`` sends them
    there too, on the ``LoggerProvider`` the application installed (its own exporter keeps
    them) or a new global one, so they are stored with the span they were emitted under."""
    db = tmp_path / "app.duckdb"
    app_setup = textwrap.dedent(
        """
        from opentelemetry._logs import set_logger_provider
        from opentelemetry.sdk._logs import LoggerProvider
        from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
        from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter
        app_exporter = InMemoryLogRecordExporter()
        app_provider = LoggerProvider()
        app_provider.add_log_record_processor(SimpleLogRecordProcessor(app_exporter))
        set_logger_provider(app_provider)
        """
    )
    script = textwrap.dedent(
        """
        import logging
        from opentelemetry._logs import get_logger_provider
        from opentelemetry.sdk._logs import LoggingHandler
        import tracereplay
        {app_setup}
        tracereplay.configure(service_name="chat", db={db!r})
        # the application's set-up, as its instrumentation's docs say
        handler = LoggingHandler(logger_provider=get_logger_provider())
        logging.getLogger("framework").addHandler(handler)
        logging.getLogger("framework").setLevel(logging.INFO)
        with tracereplay.agent_run("chat", "hello") as run:
            logging.getLogger("framework").info("the completion: hi")
            run.set_response("hi")
        tracereplay.flush()
        if {app!r}:
            print(len(app_exporter.get_finished_logs()))
        """
    ).format(
        app_setup=app_setup if app_logger_provider else "", db=str(db), app=app_logger_provider
    )
    out = _run_script(script)
    assert out.returncode == 0, out.stderr
    if app_logger_provider:
        assert out.stdout.strip() == "1"  # the application's exporter keeps its records
    with open_store(db) as store:
        [log] = store.query_dicts("SELECT trace_id, span_id, body FROM logs", [])
        [span] = store.query_dicts("SELECT trace_id, span_id FROM spans", [])
    assert json.loads(log["body"]) == "the completion: hi"
    assert (log["trace_id"], log["span_id"]) == (span["trace_id"], span["span_id"])


def test_log_records_go_nowhere_once_another_destination_is_configured(tmp_path: Path) -> None:
    from tracereplay.sdk import config

    db = tmp_path / "first.duckdb"
    tracereplay.configure(db=db, tracer_provider=provider())
    exporter = config._state.log_exporter
    assert exporter is not None and exporter.target is not None
    tracereplay.configure(tracer_provider=provider(), exporter=SpoolSpanExporter(tmp_path / "x"))
    assert exporter.target is None  # a custom span exporter: no spool for the log records
    tracereplay.configure(db=db, tracer_provider=provider())
    assert config._state.log_exporter is exporter and exporter.target is not None


def _run_script(script: str) -> subprocess.CompletedProcess[str]:
    """``script`` in a fresh interpreter, with no OpenTelemetry or tracereplay settings from
    this process's environment and this checkout's tracereplay importable."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "TRACEREPLAY_"))}
    return subprocess.run(
        [sys.executable, "-c", script],
        env={**env, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
        capture_output=True,
        text=True,
        timeout=60,
    )
