"""OTLP/gRPC: ``TraceService/Export`` and ``LogsService/Export`` with opentelemetry-proto's
generated servicers on grpcio (gzip accepted by grpcio itself).

Refusals carry the OTLP status codes: INVALID_ARGUMENT for bad data, UNAUTHENTICATED without the
token, RESOURCE_EXHAUSTED or UNAVAILABLE with ``RetryInfo`` under backpressure. The retry delay
travels both in the standard ``grpc-status-details-bin`` trailer (a ``google.rpc.Status``) and
in ``google.rpc.retryinfo-bin``, which the Python OTLP exporter reads.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent import futures
from typing import Any, NamedTuple, TypeVar

import grpc
from google.protobuf.message import Message
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2, logs_service_pb2_grpc
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from tracereplay.serve.admission import Admission
from tracereplay.serve.auth import TokenCheck
from tracereplay.serve.config import ServeConfig, ServeError
from tracereplay.serve.intake import Intake
from tracereplay.serve.rejections import Rejection, Unauthenticated
from tracereplay.serve.responses import logs_response, retry_info, status_message, traces_response

log = logging.getLogger("tracereplay.serve")

R = TypeVar("R")

TRACE_SERVICE = trace_service_pb2.DESCRIPTOR.services_by_name["TraceService"].full_name
LOGS_SERVICE = logs_service_pb2.DESCRIPTOR.services_by_name["LogsService"].full_name


class _RichStatus(NamedTuple):
    code: grpc.StatusCode
    details: str
    trailing_metadata: tuple[tuple[str, bytes], ...]


class _Status(_RichStatus, grpc.Status):
    """A ``grpc.Status`` carrying the ``google.rpc.Status`` details trailer."""


def abort(context: grpc.ServicerContext, rejection: Rejection) -> None:
    """End the RPC with the rejection's status code, message and (when retryable) RetryInfo."""
    trailers: list[tuple[str, bytes]] = [
        ("grpc-status-details-bin", status_message(rejection).SerializeToString())
    ]
    if rejection.retry_after is not None:
        trailers.append(
            ("google.rpc.retryinfo-bin", retry_info(rejection.retry_after).SerializeToString())
        )
    context.abort_with_status(_Status(rejection.grpc_code, rejection.message, tuple(trailers)))


def _handle(
    context: grpc.ServicerContext, admission: Admission, size: int, work: Callable[[], R]
) -> R:
    try:
        with admission.admit(size):
            return work()
    except Rejection as rejection:
        abort(context, rejection)
        raise AssertionError("unreachable") from None  # abort_with_status raises


class TraceServicer(trace_service_pb2_grpc.TraceServiceServicer):
    """``opentelemetry.proto.collector.trace.v1.TraceService``, fed the request's wire bytes."""

    def __init__(self, intake: Intake, admission: Admission) -> None:
        self.intake = intake
        self.admission = admission

    def Export(  # noqa: N802 (generated name)
        self, request: bytes, context: grpc.ServicerContext
    ) -> ExportTraceServiceResponse:
        return _handle(
            context,
            self.admission,
            len(request),
            lambda: traces_response(self.intake.traces_pb(request)),
        )


class LogsServicer(logs_service_pb2_grpc.LogsServiceServicer):
    """``opentelemetry.proto.collector.logs.v1.LogsService``, fed the request's wire bytes."""

    def __init__(self, intake: Intake, admission: Admission) -> None:
        self.intake = intake
        self.admission = admission

    def Export(  # noqa: N802 (generated name)
        self, request: bytes, context: grpc.ServicerContext
    ) -> ExportLogsServiceResponse:
        return _handle(
            context,
            self.admission,
            len(request),
            lambda: logs_response(self.intake.logs_pb(request)),
        )


def _add_servicer(
    server: grpc.Server, service: str, export: Callable[..., Any], response: type[Message]
) -> None:
    """Register ``export`` like the generated ``add_*Servicer_to_server`` does, but hand it the
    request's bytes: the intake parses them (so a malformed request gets INVALID_ARGUMENT, not
    grpcio's INTERNAL) and spools them as they came, without serializing them again."""
    handler = grpc.unary_unary_rpc_method_handler(
        export, request_deserializer=None, response_serializer=response.SerializeToString
    )
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(service, {"Export": handler}),)
    )


class TokenInterceptor(grpc.ServerInterceptor):
    """Refuses calls without ``authorization: Bearer <token>`` metadata, before reading them."""

    def __init__(self, auth: TokenCheck) -> None:
        self.auth = auth

        def deny(request: Any, context: grpc.ServicerContext) -> None:
            abort(context, Unauthenticated("'authorization: Bearer <token>' metadata is required"))

        self._deny = grpc.unary_unary_rpc_method_handler(deny)

    def intercept_service(
        self, continuation: Callable[[Any], Any], handler_call_details: grpc.HandlerCallDetails
    ) -> Any:
        metadata = dict(handler_call_details.invocation_metadata or ())
        value = metadata.get("authorization")
        if isinstance(value, bytes):
            value = value.decode("latin-1")
        if self.auth.allows(value):
            return continuation(handler_call_details)
        return self._deny


def _ms(seconds: float) -> int:
    return max(1, int(seconds * 1000))


def build_grpc_server(
    config: ServeConfig, intake: Intake, admission: Admission, auth: TokenCheck
) -> tuple[grpc.Server, int]:
    """A started-but-not-running gRPC server bound to ``config.host:grpc_port``, and its port."""
    limits = config.limits
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=config.grpc_workers, thread_name_prefix="otlp-grpc"),
        interceptors=[TokenInterceptor(auth)] if auth.enabled else [],
        # no call waits for a worker while holding its message: memory stays within
        # grpc_workers x max_decompressed_bytes (more calls get RESOURCE_EXHAUSTED at once)
        maximum_concurrent_rpcs=min(config.grpc_workers, limits.max_inflight_requests),
        options=[
            ("grpc.max_receive_message_length", limits.max_decompressed_bytes),
            ("grpc.so_reuseport", 0),
            # a connection with no call open (a slowloris sending its preface or headers a
            # byte at a time, or an idle client) is closed after the read timeout; the TLS or
            # connection handshake must finish within it too. grpcio reads connections on its
            # own event loop, so none of them holds a worker while it waits
            ("grpc.max_connection_idle_ms", _ms(limits.read_timeout_s)),
            ("grpc.server_handshake_timeout_ms", _ms(limits.read_timeout_s)),
        ],
    )
    _add_servicer(
        server, TRACE_SERVICE, TraceServicer(intake, admission).Export, ExportTraceServiceResponse
    )
    _add_servicer(
        server, LOGS_SERVICE, LogsServicer(intake, admission).Export, ExportLogsServiceResponse
    )
    host = f"[{config.host}]" if ":" in config.host else config.host
    address = f"{host}:{config.grpc_port}"
    try:
        if config.tls:
            assert config.tls_cert is not None and config.tls_key is not None
            credentials = grpc.ssl_server_credentials(
                [(config.tls_key.read_bytes(), config.tls_cert.read_bytes())]
            )
            port = server.add_secure_port(address, credentials)
        else:
            port = server.add_insecure_port(address)
    except RuntimeError as exc:
        raise ServeError(f"cannot listen for OTLP/gRPC on {address}: {exc}") from None
    if not port:
        raise ServeError(f"cannot listen for OTLP/gRPC on {address} (in use?)")
    return server, port
