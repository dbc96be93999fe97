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
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from tracereplay.evaluate.replay.frameworks.base import SharedContext

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider

__all__ = ["instrument_installed", "instrumented"]


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


#: the entry-point group OpenInference's instrumentors register under (one per framework or
#: provider SDK: ``dspy``, ``agno``, ``haystack``, ``openai``...)
OPENINFERENCE_GROUP = "openinference_instrumentor"
_shared = SharedContext()


def instrument_installed(
    tracer_provider: TracerProvider,
) -> contextlib.AbstractContextManager[None]:
    """Every OpenInference instrumentor installed in the agent's environment whose library the
    agent imported (and that the agent's code did not switch on itself) switched on, onto
    ``tracer_provider``, while replays run (the first replay of several at once switches them
    on, the last off: an ``--in-process`` eval leaves the process as it found it). An agent no
    adapter knows then has its framework's spans in its replays (the agent run, the LLM calls,
    the tool executions the airtight check looks at), as its recording has."""
    return _shared.use(lambda: _instrumented(tracer_provider))


_applicable: list[Any] | None = None


def _instrumentors() -> list[Any]:
    """The installed OpenInference instrumentor classes whose libraries are imported (found
    once per process: the agent is imported by the first replay)."""
    global _applicable
    if _applicable is None:
        from importlib.metadata import entry_points, packages_distributions

        imported = {
            _dist_name(dist)
            for module, dists in packages_distributions().items()
            if module in sys.modules
            for dist in dists
        }
        found: list[Any] = []
        for ep in entry_points(group=OPENINFERENCE_GROUP):
            try:
                cls = ep.load()
                libraries = [_dist_name(r) for r in cls().instrumentation_dependencies()]
            except Exception:  # an instrumentor that does not load here: skip it
                continue
            if libraries and all(lib in imported for lib in libraries):
                found.append(cls)
        _applicable = found
    return _applicable


@contextlib.contextmanager
def _instrumented(tracer_provider: TracerProvider) -> Iterator[None]:
    done: list[Any] = []
    for cls in _instrumentors():
        try:
            instrumentor = cls()
            if instrumentor.is_instrumented_by_opentelemetry:
                continue  # the agent's code switched it on: its spans go where it sends them
            instrumentor.instrument(tracer_provider=tracer_provider)
        except Exception:
            continue
        done.append(instrumentor)
    try:
        yield
    finally:
        for instrumentor in done:
            with contextlib.suppress(Exception):
                instrumentor.uninstrument()


def _dist_name(requirement: str) -> str:
    """The normalized distribution name of a requirement (``"dspy >= 2.5"`` -> ``dspy``)."""
    name = requirement.strip()
    for sep in "<>=!~;[ (":
        name = name.partition(sep)[0]
    return name.replace("_", "-").replace(".", "-").lower()
