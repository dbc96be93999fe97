"""Why a request is refused, and how each protocol says it (HTTP status, gRPC status code)."""

from __future__ import annotations

from typing import ClassVar, Optional

import grpc


class Rejection(Exception):
    """A refused request. ``retry_after`` (seconds) is set when the client should retry."""

    http_status: ClassVar[int] = 400
    grpc_code: ClassVar[grpc.StatusCode] = grpc.StatusCode.INVALID_ARGUMENT

    def __init__(self, message: str, retry_after: Optional[int] = None) -> None:
        super().__init__(message)
        self.message = message
        self.retry_after = retry_after


class InvalidData(Rejection):
    """The body is not a decodable OTLP request (not retryable)."""


class TooLarge(Rejection):
    """The body, as sent or inflated, is over its size limit (not retryable)."""

    http_status = 413
    grpc_code = grpc.StatusCode.INVALID_ARGUMENT


class UnsupportedMediaType(Rejection):
    """Another content type or content encoding than OTLP protobuf/JSON, gzip/deflate."""

    http_status = 415


class NotFound(Rejection):
    """No such OTLP/HTTP path."""

    http_status = 404
    grpc_code = grpc.StatusCode.NOT_FOUND


class LengthRequired(Rejection):
    """Neither ``Content-Length`` nor chunked transfer encoding."""

    http_status = 411


class Unauthenticated(Rejection):
    """Missing or wrong bearer token."""

    http_status = 401
    grpc_code = grpc.StatusCode.UNAUTHENTICATED


class Busy(Rejection):
    """Too much is in flight right now: retry after ``retry_after`` seconds (429)."""

    http_status = 429
    grpc_code = grpc.StatusCode.RESOURCE_EXHAUSTED


class Unavailable(Rejection):
    """The store is behind or the server is stopping: retry after ``retry_after`` seconds (503)."""

    http_status = 503
    grpc_code = grpc.StatusCode.UNAVAILABLE
