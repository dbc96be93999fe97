"""OpenTelemetry's global tracer provider switched to the replay's while replays run.

Frameworks with native OpenTelemetry (pydantic-ai, strands, Google ADK) trace through the global
provider, so their spans reach the replay's provider (its capture, the store) only when that is
the global one. Usually it already is: ``configure()`` installs or adopts the global SDK provider.

OpenTelemetry's API has no public way to switch the global provider and back:
``set_tracer_provider`` works once per process, and instrumentors' ``tracer_provider=`` argument
reaches only instrumented libraries (LangChain, the OpenAI Agents SDK), not frameworks that call
``trace.get_tracer()`` themselves. So the switch writes the API's module global, in
``swap_global_tracer_provider`` alone (``tests/test_library_internals.py`` fails when an
opentelemetry-api release moves it).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

from opentelemetry.trace import TracerProvider

_lock = threading.Lock()
_users = 0
_saved: TracerProvider | None = None


def swap_global_tracer_provider(provider: TracerProvider | None) -> TracerProvider | None:
    """Make ``provider`` the one ``opentelemetry.trace.get_tracer_provider()`` returns (``None``:
    none set, as before any ``set_tracer_provider``); returns the one it replaced, or
    ``provider`` itself when this opentelemetry-api has no such global (nothing is changed)."""
    from opentelemetry import trace

    if not hasattr(trace, "_TRACER_PROVIDER"):
        return provider
    previous: TracerProvider | None = trace._TRACER_PROVIDER
    trace._TRACER_PROVIDER = provider  # type: ignore[attr-defined]
    return previous


@contextlib.contextmanager
def global_provider(provider: TracerProvider) -> Iterator[None]:
    """``provider`` as OpenTelemetry's global tracer provider while replays run (the first to
    enter switches it, the last to leave puts the previous one back)."""
    global _users, _saved
    with _lock:
        if _users == 0:
            _saved = swap_global_tracer_provider(provider)
        _users += 1
    try:
        yield
    finally:
        with _lock:
            _users -= 1
            if _users == 0:
                if _saved is not provider:
                    swap_global_tracer_provider(_saved)
                _saved = None
