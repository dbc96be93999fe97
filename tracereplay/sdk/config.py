"""``configure()``: set up OpenTelemetry so the SDK's spans reach a tracereplay store.

Destination, in order:

1. ``endpoint=`` given: OTLP (``protocol`` "http/protobuf" or "grpc") to ``tracereplay serve``
   or an OpenTelemetry Collector;
2. ``db=`` given: the embedded default, the spool beside that DuckDB file;
3. ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` / ``OTEL_EXPORTER_OTLP_ENDPOINT`` set: OTLP there;
4. otherwise the spool of ``$TRACEREPLAY_DB`` or ``./tracereplay.duckdb``.

With the spool, the process's OpenTelemetry log records go there too (``_spool_logs``): some
instrumentations record the prompts and completions as log records (GenAI message events), not
on their spans.
"""

from __future__ import annotations

import atexit
import os
import threading
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from opentelemetry import trace
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SpanExporter

from tracereplay.errors import TraceReplayError
from tracereplay.sdk.content import (
    DEFAULT_MAX_VALUE_CHARS,
    ContentPolicy,
    Redactor,
    compile_redactor,
    set_policy,
)
from tracereplay.sdk.exporter import GuardedSpanExporter, SpoolLogExporter, SpoolSpanExporter
from tracereplay.sdk.processor import CountingBatchSpanProcessor, ProcessorSlot

Protocol = Literal["http/protobuf", "grpc"]
PROTOCOLS: tuple[str, ...] = ("http/protobuf", "grpc")
TRACER_NAME = "tracereplay"


class SdkConfigError(TraceReplayError):
    """``configure()`` was given an option it cannot use."""


@dataclass(frozen=True)
class TraceReplaySetup:
    """What ``configure()`` set up: where spans go and through which provider."""

    tracer_provider: TracerProvider
    processor: CountingBatchSpanProcessor
    exporter: SpanExporter
    destination: str  # "spool", "otlp" or "custom"
    db_path: Path | None = None
    endpoint: str | None = None
    protocol: str | None = None


class _State:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.setup: TraceReplaySetup | None = None
        self.tracer: trace.Tracer | None = None
        self.slots: weakref.WeakKeyDictionary[TracerProvider, ProcessorSlot] = (
            weakref.WeakKeyDictionary()
        )
        self.atexit_registered = False
        #: the log exporter on the global SDK ``LoggerProvider`` (one, retargeted on each
        #: ``configure()``) and its processor
        self.log_exporter: SpoolLogExporter | None = None
        self.log_processor: object | None = None


_state = _State()
_default_tracer: trace.Tracer | None = None


def get_tracer() -> trace.Tracer:
    """The tracer the SDK records with: the configured provider's, else the global one's."""
    tracer = _state.tracer
    if tracer is not None:
        return tracer
    global _default_tracer
    if _default_tracer is None:
        _default_tracer = trace.get_tracer(TRACER_NAME, _version())
    return _default_tracer


def current_setup() -> TraceReplaySetup | None:
    """The last ``configure()`` result, or ``None``."""
    return _state.setup


def configure(
    service_name: str | None = None,
    db: str | os.PathLike[str] | None = None,
    endpoint: str | None = None,
    protocol: Protocol | None = None,
    headers: Mapping[str, str] | None = None,
    capture_content: bool = True,
    redact: Redactor | None = None,
    *,
    max_value_chars: int = DEFAULT_MAX_VALUE_CHARS,
    tracer_provider: TracerProvider | None = None,
    exporter: SpanExporter | None = None,
) -> TraceReplaySetup:
    """Send this process's agent runs to tracereplay. Call once at start-up.

    Adds a ``BatchSpanProcessor`` to ``tracer_provider``, else to the SDK ``TracerProvider`` the
    application already installed globally, else to a new one (made global) whose resource has
    ``service.name`` = ``$OTEL_SERVICE_NAME`` or ``service_name``. The destination is described
    in this module's docstring; ``exporter`` replaces it with any ``SpanExporter``.
    ``capture_content=False`` records no message text, arguments, results or documents;
    ``redact`` (a ``str -> str`` callable or a list of regexes) and the ``max_value_chars`` cap
    apply to every string recorded. Calling it again replaces the previous setup.
    """
    if max_value_chars < 1:
        raise SdkConfigError(f"max_value_chars must be at least 1, not {max_value_chars}")
    try:
        redactor = compile_redactor(redact)
    except Exception as exc:  # re.error, or a list of something else
        raise SdkConfigError(f"redact: {type(exc).__name__}: {exc}") from None
    policy = ContentPolicy(
        capture=capture_content, redact=redactor, max_value_chars=max_value_chars
    )

    db_path: Path | None = None
    chosen_protocol: str | None = None
    if exporter is not None:
        destination, kind = "custom", "custom"
        span_exporter: SpanExporter = GuardedSpanExporter(exporter, kind)
    elif endpoint or (db is None and _env_endpoint()):
        destination = "otlp"
        chosen_protocol = _resolve_protocol(protocol)
        span_exporter = GuardedSpanExporter(
            _otlp_exporter(endpoint, chosen_protocol, headers), f"otlp {chosen_protocol}"
        )
    else:
        destination = "spool"
        spool_exporter = SpoolSpanExporter(db)
        db_path = spool_exporter.db_path
        span_exporter = spool_exporter

    provider = tracer_provider or _global_sdk_provider() or _new_global_provider(service_name)
    processor = CountingBatchSpanProcessor(span_exporter)
    with _state.lock:
        slot = _state.slots.get(provider)
        if slot is None:
            slot = ProcessorSlot(processor)
            provider.add_span_processor(slot)
            _state.slots[provider] = slot
        else:
            slot.replace(processor)
        setup = TraceReplaySetup(
            tracer_provider=provider,
            processor=processor,
            exporter=span_exporter,
            destination=destination,
            db_path=db_path,
            endpoint=endpoint or (_env_endpoint() if destination == "otlp" else None),
            protocol=chosen_protocol,
        )
        _state.setup = setup
        _state.tracer = provider.get_tracer(TRACER_NAME, _version())
        _spool_logs(spool_exporter if destination == "spool" else None, provider)
        set_policy(policy)
        if not _state.atexit_registered:
            atexit.register(shutdown)
            _state.atexit_registered = True
    return setup


def flush(timeout_millis: int = 30_000) -> bool:
    """Export every finished span now (the spool: written and fsync'd). Never raises."""
    setup = _state.setup
    slot = _state.slots.get(setup.tracer_provider) if setup else None
    _flush_logs(timeout_millis)  # before the spans: a run's log records belong to its spans
    if slot is None:
        provider = trace.get_tracer_provider()
        force_flush = getattr(provider, "force_flush", None)
        return bool(force_flush(timeout_millis)) if callable(force_flush) else True
    try:
        return slot.force_flush(timeout_millis)
    except Exception:  # never raise into the agent
        return False


def shutdown() -> None:
    """Flush and close what ``configure()`` set up (also run at interpreter exit)."""
    _flush_logs(30_000)
    with _state.lock:
        slots = list(_state.slots.values())
        _state.setup = None
        _state.tracer = None
        if _state.log_exporter is not None:
            _state.log_exporter.target = None
    for slot in slots:
        try:
            slot.shutdown()
        except Exception:
            pass


# ---------------------------------------------------------------------------- helpers
def _spool_logs(target: SpoolSpanExporter | None, tracer_provider: TracerProvider) -> None:
    """The process's OpenTelemetry log records to ``target``'s spool (``None``: to nowhere).

    Some instrumentations record the prompts and completions as log records (GenAI message
    events: Semantic Kernel's, OpenTelemetry's GenAI instrumentations with events), which the
    store joins to their spans; without them a run's LLM calls have no messages. A
    ``BatchLogRecordProcessor`` is added, once, to the SDK ``LoggerProvider`` the application
    installed globally, else to a new one (made global) with the tracer provider's resource.
    Python ``logging`` records reach it through the application's ``LoggingHandler``, as its
    instrumentation's docs set one up. Called with the lock held; never raises.
    """
    if _state.log_exporter is not None:
        _state.log_exporter.target = target
        return
    if target is None:
        return
    try:
        from opentelemetry._logs import get_logger_provider, set_logger_provider
        from opentelemetry.sdk._logs import LoggerProvider
        from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
    except ImportError:  # an SDK without the logs API
        return
    try:
        provider = get_logger_provider()
        if not isinstance(provider, LoggerProvider):
            provider = LoggerProvider(resource=tracer_provider.resource)
            set_logger_provider(provider)
        exporter = SpoolLogExporter(target)
        processor = BatchLogRecordProcessor(exporter)  # type: ignore[arg-type]
        provider.add_log_record_processor(processor)
    except Exception:  # never raise into the agent: its spans are recorded all the same
        return
    _state.log_exporter, _state.log_processor = exporter, processor


def _flush_logs(timeout_millis: int) -> None:
    force_flush = getattr(_state.log_processor, "force_flush", None)
    if callable(force_flush):
        try:
            force_flush(timeout_millis)
        except Exception:
            pass


def _version() -> str:
    from tracereplay import __version__

    return __version__


def _env_endpoint() -> str | None:
    return os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or os.environ.get(
        "OTEL_EXPORTER_OTLP_ENDPOINT"
    )


def _resolve_protocol(protocol: str | None) -> str:
    chosen = (
        protocol
        or os.environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
        or os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL")
        or "http/protobuf"
    ).strip()
    if chosen not in PROTOCOLS:
        raise SdkConfigError(
            f"unsupported OTLP protocol {chosen!r}: use {' or '.join(repr(p) for p in PROTOCOLS)}"
        )
    return chosen


def _http_traces_url(endpoint: str) -> str:
    """``endpoint`` is a base URL like ``OTEL_EXPORTER_OTLP_ENDPOINT``: add ``/v1/traces``."""
    url = endpoint if "://" in endpoint else f"http://{endpoint}"
    url = url.rstrip("/")
    return url if url.endswith("/v1/traces") else url + "/v1/traces"


def _otlp_exporter(
    endpoint: str | None, protocol: str, headers: Mapping[str, str] | None
) -> SpanExporter:
    hdrs = dict(headers) if headers else None
    if protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (
            OTLPSpanExporter as GrpcExporter,
        )

        return GrpcExporter(endpoint=endpoint, headers=hdrs)
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import (
        OTLPSpanExporter as HttpExporter,
    )

    return HttpExporter(endpoint=_http_traces_url(endpoint) if endpoint else None, headers=hdrs)


def _global_sdk_provider() -> TracerProvider | None:
    provider = trace.get_tracer_provider()
    return provider if isinstance(provider, TracerProvider) else None


def _new_global_provider(service_name: str | None) -> TracerProvider:
    name = os.environ.get("OTEL_SERVICE_NAME") or service_name
    provider = TracerProvider(resource=Resource.create({SERVICE_NAME: name} if name else {}))
    trace.set_tracer_provider(provider)
    return provider
