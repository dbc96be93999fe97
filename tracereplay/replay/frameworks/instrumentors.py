"""An OpenTelemetry instrumentor switched on for the replays of a framework without native
OpenTelemetry (LlamaIndex, smolagents: OpenInference's instrumentors).

``instrumented(module, name, tracer_provider)`` imports ``module.name`` (a ``BaseInstrumentor``)
and instruments with the replay's tracer provider for the block, then uninstruments. Nothing
happens when the instrumentation is not installed in the agent's environment (the replay run is
then only tracereplay's wrapper run) or when the user's code instrumented already (its spans go
where the user sent them). ``switch_off(...)`` is the other way round, for an adapter that
writes the replay's spans itself (LangGraph, CrewAI): the instrumentors the agent's code
switched on are switched off, so no run is recorded twice.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
import threading
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider

__all__ = [
    "instrument",
    "instrument_installed",
    "instrumented",
    "switch_off",
    "uninstrument_installed",
]

#: the instrumentor classes whose dependency check passed in this process
_checked: set[type] = set()


def instrument(instrumentor: Any, **options: Any) -> None:
    """``instrumentor.instrument(**options)``, its dependency check (the versions its library
    needs, against every installed distribution's metadata: about 3 ms) made only until it
    passed once in this process: a replay's shared context switches an instrumentor on again
    whenever its cases ran out, and the installed versions do not change meanwhile."""
    cls = type(instrumentor)
    if cls in _checked:
        options.setdefault("skip_dep_check", True)
    instrumentor.instrument(**options)
    if getattr(instrumentor, "is_instrumented_by_opentelemetry", False):
        _checked.add(cls)
        _callbacks_inline(instrumentor)


def switch_off(instrumentors: Iterable[tuple[str, str]]) -> None:
    """Switch off each instrumentor (``(module, class)``) the agent's code switched on, for an
    adapter that writes the replay's spans itself: its spans would record each run a second
    time. It stays off (its tracer provider cannot be read back to switch it on again); the
    replay's agent process ends with the suite. One whose module is not imported is not."""
    for module, name in instrumentors:
        if module not in sys.modules:
            continue
        try:
            instrumentor = getattr(importlib.import_module(module), name)()
            if instrumentor.is_instrumented_by_opentelemetry:
                instrumentor.uninstrument()
        except Exception:
            continue


def _callbacks_inline(instrumentor: Any) -> None:
    """The LangChain callback handler an instrumentor adds to every callback manager (Open-
    Inference's ``_tracer``) called inline. A synchronous handler without ``run_inline`` is
    handed, event by event, to the default thread pool when the chain runs async (LangChain's
    ``ahandle_event``): a thread hop per chain, model and tool start and end, about 4 ms of CPU
    a case for a three-call graph, and a second thread busy beside the agent. A chain run
    synchronously calls the same handler inline already, so this changes where the handler
    runs, not the spans it makes; OpenLLMetry's handler is inline by itself."""
    handler = getattr(instrumentor, "_tracer", None)
    if getattr(handler, "run_inline", True) is False and callable(
        getattr(handler, "on_chain_start", None)
    ):
        with contextlib.suppress(Exception):
            handler.run_inline = True


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
    instrument(instrumentor, tracer_provider=tracer_provider, **options)
    try:
        yield
    finally:
        with contextlib.suppress(Exception):
            instrumentor.uninstrument()


#: the entry-point group OpenInference's instrumentors register under (one per framework or
#: provider SDK: ``dspy``, ``agno``, ``haystack``, ``openai``...)
OPENINFERENCE_GROUP = "openinference_instrumentor"
_lock = threading.Lock()
#: the provider the installed instrumentors are switched on onto, and the instrumentors
_active: tuple[int, list[Any]] | None = None


def instrument_installed(tracer_provider: TracerProvider) -> None:
    """Switch on, onto ``tracer_provider``, every OpenInference instrumentor installed in the
    agent's environment whose library the agent imported (and that the agent's code did not
    switch on itself): an agent no adapter knows then has its framework's spans in its replays
    (the agent run, the LLM calls, the tool executions the airtight check looks at), as its
    recording has. They stay on for the replays that follow (switching them per attempt
    would cost a quick agent's attempt more than it does); ``uninstrument_installed()`` switches them off when the eval
    ends in the eval's own process (``--in-process``: the process is left as it was found)."""
    global _active
    with _lock:
        if _active is not None and _active[0] == id(tracer_provider):
            return
        _switch_off()
        done: list[Any] = []
        for cls in _instrumentors():
            try:
                instrumentor = cls()
                if instrumentor.is_instrumented_by_opentelemetry:
                    continue  # the agent's code switched it on: its spans go where it sends them
                instrument(instrumentor, tracer_provider=tracer_provider)
            except Exception:
                continue
            done.append(instrumentor)
        _active = (id(tracer_provider), done)


def uninstrument_installed() -> None:
    """Switch off what ``instrument_installed`` switched on."""
    with _lock:
        _switch_off()


def _switch_off() -> None:
    global _active
    if _active is None:
        return
    for instrumentor in _active[1]:
        with contextlib.suppress(Exception):
            instrumentor.uninstrument()
    _active = None


_applicable: list[Any] | None = None


def _instrumentors() -> list[Any]:
    """The installed OpenInference instrumentor classes whose libraries are imported (found
    once per process: the agent is imported by the first replay)."""
    global _applicable
    if _applicable is None:
        from importlib.metadata import entry_points

        found: list[Any] = []
        for ep in entry_points(group=OPENINFERENCE_GROUP):
            try:
                cls = ep.load()
                libraries = [_dist_name(r) for r in cls().instrumentation_dependencies()]
            except Exception:  # an instrumentor that does not load here: skip it
                continue
            if libraries and all(_imported(lib) for lib in libraries):
                found.append(cls)
        _applicable = found
    return _applicable


def _imported(dist: str) -> bool:
    """Whether the agent imported distribution ``dist``: one of its top-level modules (its
    ``top_level.txt``, else its name as a module: ``google-genai`` -> ``google_genai``,
    ``google.genai``) is in ``sys.modules``."""
    from importlib.metadata import PackageNotFoundError, distribution

    names = {dist.replace("-", "_"), dist.replace("-", ".")}
    try:
        top = distribution(dist).read_text("top_level.txt")
    except (PackageNotFoundError, OSError):
        top = None
    names |= set((top or "").split())
    return any(name in sys.modules for name in names)


def _dist_name(requirement: str) -> str:
    """The normalized distribution name of a requirement (``"dspy >= 2.5"`` -> ``dspy``)."""
    name = requirement.strip()
    for sep in "<>=!~;[ (":
        name = name.partition(sep)[0]
    return name.replace("_", "-").replace(".", "-").lower()
