"""What ``tracereplay serve`` listens on and every limit it enforces (all set from the CLI)."""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Any, Optional

from pydantic import BaseModel, ConfigDict, Field, field_validator

from tracereplay.errors import TraceReplayError

MiB = 1024 * 1024
#: gRPC keeps message sizes in a signed 32-bit int: the largest whole MiB under it
_GRPC_MAX = 2047 * MiB
#: no memory bound above this makes sense on one machine
_MAX_BYTES = 1024 * 1024 * MiB
#: the longest any time option may be, in seconds (a day)
_MAX_SECONDS = 86_400
#: the most threads (connections, calls) a count option may ask for
_MAX_THREADS = 10_000
#: the most any other count may be (a signed 32-bit int, as protobuf and DuckDB take it)
_MAX_COUNT = 2**31 - 1


class ServeError(TraceReplayError):
    """``tracereplay serve`` cannot start (bad option, port taken, unreadable certificate...)."""


class Limits(BaseModel):
    """Resource limits of the receiver; each one is a ``tracereplay serve`` option.

    Memory stays bounded by ``max_inflight_bytes`` (request bodies being read, inflated,
    validated and spooled at once) plus 16 x ``max_connections`` connections waiting for their
    headers (at most 32 KiB of header each, see ``header_gate``); the spool on disk by
    ``max_backlog_bytes``.
    """

    model_config = ConfigDict(frozen=True)

    max_request_bytes: int = Field(
        default=64 * MiB, gt=0, le=_GRPC_MAX, description="largest body as sent (before inflating)"
    )
    max_decompressed_bytes: int = Field(
        default=64 * MiB,
        gt=0,
        le=_GRPC_MAX,
        description="largest body after inflating gzip/deflate",
    )
    max_inflight_bytes: int = Field(
        default=256 * MiB,
        gt=0,
        le=_MAX_BYTES,
        description="body bytes held by all requests being handled at once",
    )
    max_inflight_requests: int = Field(
        default=64, gt=0, le=_MAX_THREADS, description="requests handled at once"
    )
    max_connections: int = Field(
        default=256, gt=0, le=_MAX_THREADS, description="OTLP/HTTP requests read at once"
    )
    max_backlog_bytes: int = Field(
        default=64 * MiB,
        gt=0,
        le=_MAX_BYTES,
        description="spooled bytes no drain round has taken on yet",
    )
    max_attributes: int = Field(
        default=128, gt=0, le=_MAX_COUNT, description="attributes kept per span/log"
    )
    max_value_length: int = Field(
        default=1 * MiB, gt=0, le=_MAX_COUNT, description="characters kept per attribute value"
    )
    retry_after_s: int = Field(
        default=1, gt=0, le=_MAX_SECONDS, description="Retry-After given under backpressure"
    )
    read_timeout_s: float = Field(
        default=30.0,
        gt=0,
        le=_MAX_SECONDS,
        allow_inf_nan=False,
        description="idle or stalled connection timeout",
    )


class ServeConfig(BaseModel):
    """Everything ``serve`` needs: where to listen, where to store, security and limits."""

    model_config = ConfigDict(frozen=True)

    @field_validator("db", mode="before")
    @classmethod
    def _store(cls, value: Any) -> Any:
        from tracereplay.store.paths import resolve_db_path

        return resolve_db_path(value)

    #: a DuckDB file (``Path``) or a server store's ``StoreUrl`` (kept as given, not a Path)
    db: Any
    host: str = "127.0.0.1"
    http_port: Optional[int] = Field(default=4318, ge=0, le=65535)  # None: no OTLP/HTTP
    grpc_port: Optional[int] = Field(default=4317, ge=0, le=65535)  # None: no OTLP/gRPC
    token: Optional[str] = None
    tls_cert: Optional[Path] = None
    tls_key: Optional[Path] = None
    limits: Limits = Limits()
    grpc_workers: int = Field(default=8, gt=0, le=_MAX_THREADS)
    drain_interval_s: float = Field(default=0.5, gt=0, le=_MAX_SECONDS, allow_inf_nan=False)
    #: DuckDB's memory while a drain round holds the store: past it DuckDB drops the table
    #: blocks it read (they are on disk) and spills the rest beside the file, so a round's
    #: peak does not grow with the size of the store
    drain_memory_bytes: int = Field(default=128 * MiB, ge=32 * MiB, le=_MAX_BYTES)
    shutdown_grace_s: float = Field(default=30.0, ge=0, le=_MAX_SECONDS, allow_inf_nan=False)
    #: llmJudge calls the monitors may make a minute (None: no limit)
    max_judge_calls_per_minute: Optional[int] = Field(default=None, gt=0, le=_MAX_COUNT)

    def check(self) -> None:
        """Raise ``ServeError`` for a combination that cannot work."""
        if self.http_port is None and self.grpc_port is None:
            raise ServeError("nothing to serve: both OTLP/HTTP and OTLP/gRPC are disabled")
        if (self.tls_cert is None) != (self.tls_key is None):
            raise ServeError("TLS needs both --tls-cert and --tls-key")
        for path in (self.tls_cert, self.tls_key):
            if path is not None and not path.is_file():
                raise ServeError(f"TLS file not found: {path}")
        if self.token is not None and not self.token.strip():
            raise ServeError("the token is empty")
        lim = self.limits
        if lim.max_request_bytes > lim.max_inflight_bytes:
            raise ServeError("--max-request-mib cannot exceed --max-inflight-mib")

    @property
    def tls(self) -> bool:
        return self.tls_cert is not None

    @property
    def loopback_only(self) -> bool:
        """True when the bind address is reachable from this machine only."""
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False
