"""``tracereplay serve``: OTLP/HTTP and OTLP/gRPC receivers that spool durably and drain into DuckDB.

Modules: ``config`` (options and limits), ``auth`` (bearer token), ``admission`` (backpressure),
``bodies`` (reading and inflating bodies), ``limiting`` (per-span limits), ``intake`` (validate and
spool), ``responses`` (OTLP answers), ``http_receiver``, ``grpc_receiver``, ``drainer`` (spool ->
DuckDB), ``lifecycle`` (start, signals, graceful stop).

The receivers (grpc, the store) load on first use of ``Running``/``serve``/``start``/``stop``, so
reading the options and limits (``tracereplay --help``) stays cheap.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from tracereplay.serve.config import Limits, ServeConfig, ServeError

if TYPE_CHECKING:
    from tracereplay.serve.lifecycle import Running, serve, start, stop

_LAZY = {name: "tracereplay.serve.lifecycle" for name in ("Running", "serve", "start", "stop")}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'tracereplay.serve' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


__all__ = ["Limits", "Running", "ServeConfig", "ServeError", "serve", "start", "stop"]
