"""OTLP response bodies: ``Export*ServiceResponse`` (with ``partial_success``) and ``google.rpc.Status``,
in the encoding of the request, as the OTLP/HTTP specification asks."""

from __future__ import annotations

import orjson
from google.protobuf.duration_pb2 import Duration
from google.rpc.error_details_pb2 import RetryInfo
from google.rpc.status_pb2 import Status
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsPartialSuccess,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTracePartialSuccess,
    ExportTraceServiceResponse,
)

from tracereplay.serve.intake import LOGS, Receipt
from tracereplay.serve.rejections import Rejection

PROTOBUF = "application/x-protobuf"
JSON = "application/json"


def traces_response(receipt: Receipt) -> ExportTraceServiceResponse:
    """The gRPC/protobuf response: ``partial_success`` set only when something was rejected."""
    if not receipt.rejected and not receipt.message:
        return ExportTraceServiceResponse()
    return ExportTraceServiceResponse(
        partial_success=ExportTracePartialSuccess(
            rejected_spans=receipt.rejected, error_message=receipt.message
        )
    )


def logs_response(receipt: Receipt) -> ExportLogsServiceResponse:
    """The gRPC/protobuf response: ``partial_success`` set only when something was rejected."""
    if not receipt.rejected and not receipt.message:
        return ExportLogsServiceResponse()
    return ExportLogsServiceResponse(
        partial_success=ExportLogsPartialSuccess(
            rejected_log_records=receipt.rejected, error_message=receipt.message
        )
    )


def export_body(signal: str, content_type: str, receipt: Receipt) -> bytes:
    """The body of a 200 answer to ``POST /v1/traces`` or ``/v1/logs``."""
    if content_type == PROTOBUF:
        message = logs_response(receipt) if signal == LOGS else traces_response(receipt)
        return message.SerializeToString()
    if not receipt.rejected and not receipt.message:
        return b"{}"
    count_key = "rejectedLogRecords" if signal == LOGS else "rejectedSpans"
    return orjson.dumps(
        {"partialSuccess": {count_key: str(receipt.rejected), "errorMessage": receipt.message}}
    )


def retry_info(seconds: int) -> RetryInfo:
    return RetryInfo(retry_delay=Duration(seconds=seconds))


def status_message(rejection: Rejection) -> Status:
    """The ``google.rpc.Status`` for a refusal, with ``RetryInfo`` in its details when retryable."""
    status = Status(code=rejection.grpc_code.value[0], message=rejection.message)
    if rejection.retry_after is not None:
        status.details.add().Pack(retry_info(rejection.retry_after))
    return status


def error_body(content_type: str, rejection: Rejection) -> bytes:
    """The body of an error answer: a ``google.rpc.Status`` in the request's encoding."""
    status = status_message(rejection)
    if content_type == PROTOBUF:
        return status.SerializeToString()
    return orjson.dumps({"code": status.code, "message": status.message})
