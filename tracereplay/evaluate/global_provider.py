"""OpenTelemetry's global tracer provider switched to the replay's while replays run.

Frameworks with native OpenTelemetry (pydantic-ai, strands, Google ADK) trace through the global
provider, so their spans reach the replay's provider (its capture, the store) only when that is
the global one. Usually it already is: ``configure()`` installs or adopts the global SDK provider.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from opentelemetry.sdk.trace import TracerProvider

_lock = threading.Lock()
_users = 0
_saved: Any = None


@contextlib.contextmanager
def global_provider(provider: TracerProvider) -> Iterator[None]:
    """Make ``provider`` OpenTelemetry's global tracer provider while replays run (frameworks
    with native OpenTelemetry trace through the global one), restoring the previous one after.
    Usually it already is (``configure()`` installs or adopts the global SDK provider)."""
    from opentelemetry import trace as otel_trace

    global _users, _saved
    with _lock:
        current = getattr(otel_trace, "_TRACER_PROVIDER", None)
        swap = _users == 0 and current is not provider
        if _users == 0:
            _saved = (current, swap)
            if swap:
                otel_trace._TRACER_PROVIDER = provider  # type: ignore[attr-defined]
        _users += 1
    try:
        yield
    finally:
        with _lock:
            _users -= 1
            if _users == 0:
                saved, swapped = _saved
                if swapped:
                    otel_trace._TRACER_PROVIDER = saved  # type: ignore[attr-defined]
                _saved = None
