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
_instrumented_onto: set[int] = set()


def instrument_installed(tracer_provider: TracerProvider) -> list[str]:
    """Switch on, onto ``tracer_provider``, every OpenInference instrumentor installed in the
    agent's environment whose library the agent imported (and that the agent's code did not
    switch on itself), once per process: an agent no adapter knows then has its framework's
    spans in its replays (the agent run, the LLM calls, the tool executions the airtight
    check looks at), as its recording has. The names of those switched on."""
    if id(tracer_provider) in _instrumented_onto:
        return []
    _instrumented_onto.add(id(tracer_provider))
    from importlib.metadata import entry_points, packages_distributions

    imported = {
        _dist_name(dist)
        for module, dists in packages_distributions().items()
        if module in sys.modules
        for dist in dists
    }
    done: list[str] = []
    for ep in entry_points(group=OPENINFERENCE_GROUP):
        try:
            instrumentor = ep.load()()
            if instrumentor.is_instrumented_by_opentelemetry:
                continue
            libraries = [_dist_name(r) for r in instrumentor.instrumentation_dependencies()]
            if not libraries or not all(lib in imported for lib in libraries):
                continue
            instrumentor.instrument(tracer_provider=tracer_provider)
        except Exception:  # an instrumentor that does not fit this environment: skip it
            continue
        done.append(ep.name)
    return done


def _dist_name(requirement: str) -> str:
    """The normalized distribution name of a requirement (``"dspy >= 2.5"`` -> ``dspy``)."""
    name = requirement.strip()
    for sep in "<>=!~;[ (":
        name = name.partition(sep)[0]
    return name.replace("_", "-").replace(".", "-").lower()
