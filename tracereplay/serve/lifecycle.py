"""Starting and stopping ``tracereplay serve``: receivers, drainer, signals, graceful shutdown.

Shutdown on SIGTERM/SIGINT: new requests are refused (503 / UNAVAILABLE), the listeners close,
requests already admitted finish (each was spooled before its answer), then a final drain stores
everything in DuckDB and the process exits 0.
"""

from __future__ import annotations

import logging
import signal
import ssl
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from types import FrameType
from typing import Any, TextIO

import grpc

from tracereplay.errors import TraceReplayError
from tracereplay.monitor.worker import MonitorWorker
from tracereplay.serve.admission import Admission
from tracereplay.serve.auth import TokenCheck
from tracereplay.serve.config import ServeConfig, ServeError
from tracereplay.serve.drainer import Drainer
from tracereplay.serve.grpc_receiver import build_grpc_server
from tracereplay.serve.http_receiver import HttpReceiver
from tracereplay.serve.intake import Intake
from tracereplay.store import spool
from tracereplay.store.db import Store
from tracereplay.store.paths import spool_dir

log = logging.getLogger("tracereplay.serve")


def _ssl_context(config: ServeConfig) -> ssl.SSLContext | None:
    if not config.tls:
        return None
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    try:
        context.load_cert_chain(str(config.tls_cert), str(config.tls_key))
    except (ssl.SSLError, OSError) as exc:
        raise ServeError(f"cannot load the TLS certificate/key: {exc}") from None
    return context


@dataclass
class Running:
    """A started server: its parts and the ports it listens on."""

    config: ServeConfig
    drainer: Drainer
    admission: Admission
    intake: Intake
    writer: spool.SpoolWriter
    http: HttpReceiver | None
    http_thread: threading.Thread | None
    grpc_server: grpc.Server | None
    http_port: int | None
    grpc_port: int | None
    monitors: MonitorWorker | None = None

    def health(self) -> dict[str, Any]:
        stats = self.intake.stats
        return {
            "in_flight": self.admission.in_flight,
            "backlog_bytes": self.drainer.backlog_bytes(),
            "requests": stats.requests,
            "spans_received": stats.spans,
            "logs_received": stats.logs,
            "spans_stored": self.drainer.totals.new_spans,
            "drain_rounds": self.drainer.rounds,
            "drain_error": self.drainer.last_error,
            **(self.monitors.health() if self.monitors is not None else {}),
        }


def start(config: ServeConfig) -> Running:
    """Check the store, then start the drainer and the receivers. Raises ``ServeError``."""
    config.check()
    with Store.open(config.db, timeout=30.0):
        pass  # fail now, clearly, if the file is not a usable store; migrate it once
    writer = spool.SpoolWriter(spool_dir(config.db), durable=True)
    monitors = MonitorWorker(config.db, config.max_judge_calls_per_minute)
    drainer = Drainer(
        config.db,
        writer,
        config.drain_interval_s,
        memory_bytes=config.drain_memory_bytes,
        on_stored=monitors.offer,
    )
    admission = Admission(config.limits, drainer.backlog_bytes)
    intake = Intake(writer, config.limits, drainer.spooled)
    auth = TokenCheck(config.token)
    ssl_context = _ssl_context(config)

    http: HttpReceiver | None = None
    http_thread: threading.Thread | None = None
    grpc_server: grpc.Server | None = None
    http_port = grpc_port = None
    running: Running | None = None
    try:
        if config.http_port is not None:
            try:
                http = HttpReceiver(
                    (config.host, config.http_port),
                    intake,
                    admission,
                    auth,
                    ssl_context,
                    health=lambda: running.health() if running else {},
                )
            except OSError as exc:
                raise ServeError(
                    f"cannot listen for OTLP/HTTP on {config.host}:{config.http_port}: {exc.strerror or exc}"
                ) from None
            http_port = http.port
        if config.grpc_port is not None:
            grpc_server, grpc_port = build_grpc_server(config, intake, admission, auth)
    except BaseException:
        if http is not None:
            http.server_close()
        raise
    drainer.start()
    monitors.start()
    if http is not None:
        http_thread = threading.Thread(
            target=http.serve_forever, kwargs={"poll_interval": 0.2}, name="otlp-http", daemon=True
        )
        http_thread.start()
    if grpc_server is not None:
        grpc_server.start()
    running = Running(
        config,
        drainer,
        admission,
        intake,
        writer,
        http,
        http_thread,
        grpc_server,
        http_port,
        grpc_port,
        monitors,
    )
    return running


def stop(running: Running) -> bool:
    """Graceful shutdown; True when everything acknowledged is stored in DuckDB."""
    grace = running.config.shutdown_grace_s
    running.admission.stop()
    grpc_done = running.grpc_server.stop(grace) if running.grpc_server is not None else None
    if running.http is not None:
        running.http.shutdown()
        running.http.stop_listening()
    if not running.admission.wait_idle(grace):
        log.warning("requests still running after %.0fs; stopping anyway", grace)
    if running.http is not None:
        running.http.server_close()  # and the kept-alive connections
    if grpc_done is not None:
        grpc_done.wait(grace)
    stored = running.drainer.stop()
    if running.monitors is not None:
        running.monitors.stop(grace)
    running.writer.close()
    if not stored:
        log.warning(
            "the final drain into %s failed; the data is safe in the spool and the next "
            "tracereplay command stores it",
            running.config.db,
        )
    return stored


def describe(running: Running, out: TextIO) -> None:
    """Print where the server listens (tests and scripts read these lines)."""
    config = running.config
    scheme = "https" if config.tls else "http"
    host = f"[{config.host}]" if ":" in config.host else config.host
    print(f"tracereplay serve: storing into {getattr(config.db, 'shown', config.db)}", file=out)
    if running.http_port is not None:
        print(
            f"  OTLP/HTTP  {scheme}://{host}:{running.http_port}  "
            "(POST /v1/traces, POST /v1/logs, GET /healthz)",
            file=out,
        )
    if running.grpc_port is not None:
        print(f"  OTLP/gRPC  {host}:{running.grpc_port}{'  (TLS)' if config.tls else ''}", file=out)
    auth = "bearer token required" if config.token else "no token"
    print(f"  {auth}; stop with Ctrl-C or SIGTERM", file=out)
    print("ready", file=out, flush=True)


def _install_signals(on_signal: Callable[[int], None]) -> None:
    def handler(signum: int, frame: FrameType | None) -> None:
        on_signal(signum)

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)


def serve(config: ServeConfig, out: TextIO = sys.stdout) -> int:
    """Run until SIGTERM/SIGINT, then shut down gracefully; returns the exit code (0)."""
    if not config.loopback_only and not config.token:
        log.warning(
            "listening on %s without a token: anyone who can reach this address can send spans "
            "(set --token or TRACEREPLAY_TOKEN)",
            config.host,
        )
    stop_requested = threading.Event()

    def on_signal(signum: int) -> None:
        if stop_requested.is_set():
            log.info("already stopping; waiting for the last requests and the final drain")
        stop_requested.set()

    _install_signals(on_signal)
    try:
        running = start(config)
    except TraceReplayError:
        raise
    except OSError as exc:
        raise ServeError(f"cannot start: {exc}") from None
    describe(running, out)
    while not stop_requested.wait(1.0):
        pass
    log.info("stopping: finishing the requests in flight, then storing everything")
    stored = stop(running)
    stats = running.intake.stats
    where = (
        f"all stored in {getattr(config.db, 'shown', config.db)}"
        if stored
        else "some still in the spool (the next command stores them)"
    )
    print(
        f"stopped: {stats.spans} spans and {stats.logs} log records received, {where}",
        file=out,
        flush=True,
    )
    return 0
