"""``tracereplay serve``: OTLP/HTTP and OTLP/gRPC receivers that spool durably and drain into DuckDB.

Modules: ``config`` (options and limits), ``auth`` (bearer token), ``admission`` (backpressure),
``bodies`` (reading and inflating bodies), ``limiting`` (per-span limits), ``intake`` (validate and
spool), ``responses`` (OTLP answers), ``http_receiver``, ``grpc_receiver``, ``drainer`` (spool ->
DuckDB), ``lifecycle`` (start, signals, graceful stop).
"""

from tracereplay.serve.config import Limits, ServeConfig, ServeError
from tracereplay.serve.lifecycle import Running, serve, start, stop

__all__ = ["Limits", "Running", "ServeConfig", "ServeError", "serve", "start", "stop"]
