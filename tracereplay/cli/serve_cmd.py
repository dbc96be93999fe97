"""``tracereplay serve``: receive OTLP over HTTP and gRPC into the store."""

from __future__ import annotations

import logging
import math
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from pydantic import ValidationError

from tracereplay.cli.common import db_path
from tracereplay.serve.config import Limits, MiB, ServeConfig, ServeError

_LIMITS = "Limits"
_LIM = Limits()  # the defaults
_CFG = ServeConfig.model_fields
_SECURITY = "Security"


def _mib(value: float, option: str) -> int:
    """A size given in MiB, in bytes (the config then checks its range)."""
    if not math.isfinite(value):
        raise ServeError(f"bad value for {option}: it must be a number of MiB")
    return int(value * MiB)


def serve_command(
    host: Annotated[
        str, typer.Option(help="Address to listen on. Anything but loopback wants --token.")
    ] = "127.0.0.1",
    http_port: Annotated[
        int, typer.Option(help="OTLP/HTTP port (0: any free port; see --no-http).")
    ] = 4318,
    grpc_port: Annotated[
        int, typer.Option(help="OTLP/gRPC port (0: any free port; see --no-grpc).")
    ] = 4317,
    no_http: Annotated[bool, typer.Option("--no-http", help="Do not serve OTLP/HTTP.")] = False,
    no_grpc: Annotated[bool, typer.Option("--no-grpc", help="Do not serve OTLP/gRPC.")] = False,
    token: Annotated[
        Optional[str],
        typer.Option(
            envvar="TRACEREPLAY_TOKEN",
            show_envvar=True,
            help="Require 'Authorization: Bearer TOKEN' (HTTP) / 'authorization' metadata (gRPC).",
            rich_help_panel=_SECURITY,
        ),
    ] = None,
    tls_cert: Annotated[
        Optional[Path],
        typer.Option(
            help="PEM certificate: serve both protocols over TLS.", rich_help_panel=_SECURITY
        ),
    ] = None,
    tls_key: Annotated[
        Optional[Path],
        typer.Option(help="PEM private key for --tls-cert.", rich_help_panel=_SECURITY),
    ] = None,
    max_request_mib: Annotated[
        float, typer.Option(help="Largest body as sent (413 above).", rich_help_panel=_LIMITS)
    ] = _LIM.max_request_bytes / MiB,
    max_decompressed_mib: Annotated[
        float,
        typer.Option(
            help="Largest body once inflated; gzip bombs stop here (413).", rich_help_panel=_LIMITS
        ),
    ] = _LIM.max_decompressed_bytes / MiB,
    max_inflight_mib: Annotated[
        float,
        typer.Option(
            help="Body bytes of all requests handled at once (429 above).", rich_help_panel=_LIMITS
        ),
    ] = _LIM.max_inflight_bytes / MiB,
    max_inflight_requests: Annotated[
        int, typer.Option(help="Requests handled at once (429 above).", rich_help_panel=_LIMITS)
    ] = _LIM.max_inflight_requests,
    max_connections: Annotated[
        int,
        typer.Option(
            help="OTLP/HTTP requests being read at once (503 above); waiting connections "
            "hold none.",
            rich_help_panel=_LIMITS,
        ),
    ] = _LIM.max_connections,
    max_backlog_mib: Annotated[
        float,
        typer.Option(help="Spooled data not yet in DuckDB (503 above).", rich_help_panel=_LIMITS),
    ] = _LIM.max_backlog_bytes / MiB,
    max_attributes: Annotated[
        int,
        typer.Option(
            help="Attributes kept per span, event, link and log record.", rich_help_panel=_LIMITS
        ),
    ] = _LIM.max_attributes,
    max_value_length: Annotated[
        int,
        typer.Option(
            help="Characters kept per string attribute value or log body.", rich_help_panel=_LIMITS
        ),
    ] = _LIM.max_value_length,
    retry_after: Annotated[
        int,
        typer.Option(
            help="Seconds clients are told to wait under backpressure.", rich_help_panel=_LIMITS
        ),
    ] = _LIM.retry_after_s,
    read_timeout: Annotated[
        float,
        typer.Option(
            help="Seconds before an idle or stalled connection is closed.", rich_help_panel=_LIMITS
        ),
    ] = _LIM.read_timeout_s,
    grpc_workers: Annotated[int, typer.Option(help="gRPC calls handled at once (threads).")] = _CFG[
        "grpc_workers"
    ].default,
    drain_interval: Annotated[
        float, typer.Option(help="Seconds between moves of the spool into DuckDB.")
    ] = _CFG["drain_interval_s"].default,
    drain_memory_mib: Annotated[
        float,
        typer.Option(
            help="DuckDB's memory while draining (32 or more): past it, cached table data is "
            "dropped and work spills to disk, so memory stays flat as the store grows.",
            rich_help_panel=_LIMITS,
        ),
    ] = _CFG["drain_memory_bytes"].default / MiB,
    shutdown_grace: Annotated[
        float, typer.Option(help="Seconds to let requests in flight finish on SIGTERM/SIGINT.")
    ] = _CFG["shutdown_grace_s"].default,
    max_judge_calls_per_minute: Annotated[
        Optional[int],
        typer.Option(
            metavar="N",
            help="llmJudge calls the monitors may make a minute (default: no limit).",
            show_default=False,
        ),
    ] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Log every request.")] = False,
) -> None:
    """Receive OTLP spans and logs over HTTP (4318) and gRPC (4317) into the store.

    Point any OpenTelemetry exporter or Collector at it. A request is answered only once it is on disk (the spool beside the DuckDB file, fsync'd); a background drainer stores it in DuckDB within about a second, and every other command keeps working on the same file meanwhile. See docs/serving.md.

    [bold]Examples[/bold]

      tracereplay serve
      OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 python my_agent.py
      tracereplay serve --host 0.0.0.0 --token s3cret \\
          --tls-cert cert.pem --tls-key key.pem
    """
    from tracereplay.serve.lifecycle import serve  # grpc and the store load only to serve

    _setup_logging(verbose)
    try:
        config = ServeConfig(
            db=db_path(),
            host=host,
            http_port=None if no_http else http_port,
            grpc_port=None if no_grpc else grpc_port,
            token=token or None,
            tls_cert=tls_cert,
            tls_key=tls_key,
            limits=Limits(
                max_request_bytes=_mib(max_request_mib, "--max-request-mib"),
                max_decompressed_bytes=_mib(max_decompressed_mib, "--max-decompressed-mib"),
                max_inflight_bytes=_mib(max_inflight_mib, "--max-inflight-mib"),
                max_inflight_requests=max_inflight_requests,
                max_connections=max_connections,
                max_backlog_bytes=_mib(max_backlog_mib, "--max-backlog-mib"),
                max_attributes=max_attributes,
                max_value_length=max_value_length,
                retry_after_s=retry_after,
                read_timeout_s=read_timeout,
            ),
            grpc_workers=grpc_workers,
            drain_interval_s=drain_interval,
            drain_memory_bytes=_mib(drain_memory_mib, "--drain-memory-mib"),
            shutdown_grace_s=shutdown_grace,
            max_judge_calls_per_minute=max_judge_calls_per_minute,
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        field = str(first["loc"][-1])
        option = "--" + _option_name(field).replace("_", "-")
        message = first["msg"]
        if field.endswith("_bytes"):  # the bounds in MiB, as the option is given
            for key, words in _BOUNDS.items():
                if key in (first.get("ctx") or {}):
                    message = words.format(first["ctx"][key] / MiB)
        raise ServeError(f"bad value for {option}: {message}") from None
    raise typer.Exit(serve(config))


_BOUNDS = {
    "gt": "it must be more than {:,.10g}",
    "ge": "it must be {:,.10g} or more",
    "lt": "it must be less than {:,.10g}",
    "le": "it must be {:,.10g} or less",
}


def _option_name(field: str) -> str:
    """The option a config field comes from: sizes are given in MiB, times in seconds."""
    if field.endswith("_bytes"):
        return field.removesuffix("_bytes") + "_mib"
    return field.removesuffix("_s")


def _setup_logging(verbose: bool) -> None:
    logger = logging.getLogger("tracereplay")
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("tracereplay serve: %(levelname)s: %(message)s"))
        logger.addHandler(handler)
    logger.setLevel(logging.DEBUG if verbose else logging.INFO)


def register(app: typer.Typer) -> None:
    app.command("serve")(serve_command)
