"""An OpenTelemetry instrumentor switched on for the replays of a framework without native
OpenTelemetry (LlamaIndex, smolagents: OpenInference's instrumentors).

``instrumented(module, name, tracer_provider)`` imports ``module.name`` (a ``BaseInstrumentor``)
and instruments with the replay's tracer provider for the block, then uninstruments. Nothing
happens when the instrumentation is not installed in the agent's environment (the replay run is
then only tracereplay's wrapper run) or when the user's code instrumented already (its spans go
where the user sent them).
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider

__all__ = ["instrumented"]


@contextlib.contextmanager
def instrumented(
    module: str,
    name: str,
    tracer_provider: TracerProvider,
    *,
    requires: str | None = None,
    **options: Any,
) -> Iterator[None]:
    """``module.name()`` instrumenting onto ``tracer_provider`` for the block (see above);
    nothing either when ``requires`` (the instrumented library) is not importable. ``options``
    go to ``instrument()`` (``skip_dep_check=True``...)."""
    try:
        if requires is not None:
            importlib.import_module(requires)
        instrumentor = getattr(importlib.import_module(module), name)()
    except (ImportError, AttributeError):
        yield
        return
    if instrumentor.is_instrumented_by_opentelemetry:
        yield
        return
    instrumentor.instrument(tracer_provider=tracer_provider, **options)
    try:
        yield
    finally:
        with contextlib.suppress(Exception):
            instrumentor.uninstrument()
