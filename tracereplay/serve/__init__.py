"""``tracereplay serve``: OTLP/HTTP and OTLP/gRPC receivers that spool durably and drain into DuckDB.

Modules: ``config`` (options and limits), ``auth`` (bearer token), ``admission`` (backpressure),
``bodies`` (reading and inflating bodies), ``limiting`` (per-span limits), ``intake`` (validate and
spool), ``responses`` (OTLP answers), ``http_receiver``, ``grpc_receiver``, ``drainer`` (spool ->
DuckDB), ``lifecycle`` (start, signals, graceful stop).

The receivers (grpc, the store) load on first use of ``Running``/``serve``/``start``/``stop``, so
reading the options and limits (``tracereplay --help``) stays cheap.

Internal: not a public API, it changes whenever the code needs it (docs/python-api.md says
what is public).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tracereplay.lazy import lazy_getattr
from tracereplay.serve.config import Limits, ServeConfig, ServeError

if TYPE_CHECKING:
    from tracereplay.serve.lifecycle import Running, serve, start, stop

_LAZY = {name: "tracereplay.serve.lifecycle" for name in ("Running", "serve", "start", "stop")}


__getattr__ = lazy_getattr(__name__, _LAZY)


__all__ = ["Limits", "Running", "ServeConfig", "ServeError", "serve", "start", "stop"]
