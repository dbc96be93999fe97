"""The agent's libraries imported once in the fork server, for every agent process it forks.

The fork server's preload takes module names, so importing this module does the work: it
imports each module ``$TRACEREPLAY_PRELOAD_LIBRARIES`` names (``os.pathsep``-separated, as
``agent_libraries`` found them; the eval sets it only while it starts the fork server). An
agent process then finds its framework imported already, and a second one does not pay that
import again (0.9-1.3 s of CPU for pydantic-ai, LangGraph and the OpenAI Agents SDK).

A process that is forked must not depend on a thread of its parent (the child has none of
them), so while a library is imported here ``threading`` cannot start a thread: the attempt
raises, the import fails, and Python takes the modules whose import failed out of
``sys.modules`` as for any failed import; each agent process imports them again itself, thread
and all (CrewAI's import creates OpenTelemetry resources, whose detectors run on threads, for
one). Modules already imported in full stay (extension modules such as numpy's cannot be
loaded twice, and Python modules must stay with them). An import that failed otherwise is left
the same way; one that succeeded but changed the process (it went on without the thread it was
refused, a C extension started an OS thread, or it set OpenTelemetry's global tracer provider,
which is put back) is not undone. Either way the preload ends at the first library refused:
nothing more is imported into a process a partial import may have left changed.
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
from collections.abc import Iterable

ENV = "TRACEREPLAY_PRELOAD_LIBRARIES"

#: the libraries imported here, and the one refused (the preload ends there)
imported: list[str] = []
refused: list[str] = []


#: what ``threading.Thread.start`` calls (3.11-3.12, 3.13 on)
_THREAD_STARTS = ("_start_new_thread", "_start_joinable_thread")


class _ThreadStarted(RuntimeError):
    """A library's import tried to start a thread."""


def preload(names: Iterable[str]) -> None:
    """Import each of ``names`` as the module docstring says."""
    for name in names:
        if not _import_alone(name):
            refused.append(name)
            return  # the process is not as it was: what comes next is the agent's to import
        imported.append(name)


def _import_alone(name: str) -> bool:
    """Import ``name``; True when that left the process as the module docstring says."""
    threads, provider = _os_threads(), _global_provider()
    starts = {a: getattr(threading, a) for a in _THREAD_STARTS if hasattr(threading, a)}
    tried: list[str] = []

    def no_thread(*args: object, **kwargs: object) -> None:
        tried.append(name)  # noted even when the library goes on without its thread
        raise _ThreadStarted(f"importing {name} started a thread")

    for attr in starts:
        setattr(threading, attr, no_thread)
    try:
        importlib.import_module(name)
    except BaseException:  # noqa: BLE001 - Python takes the modules that failed out again
        return False
    finally:
        for attr, start in starts.items():
            setattr(threading, attr, start)
    if not tried and _os_threads() <= threads and _global_provider() is provider:
        return True
    _restore(provider)
    return False


def _os_threads() -> int:
    """The process's OS threads (Linux: ``/proc``; elsewhere Python's own count)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return threading.active_count()


def _global_provider() -> object:
    trace = sys.modules.get("opentelemetry.trace")
    return getattr(trace, "_TRACER_PROVIDER", None) if trace else None


def _restore(provider: object) -> None:
    """Put OpenTelemetry's global tracer provider back as it was before an import set one."""
    if _global_provider() is provider:
        return
    from tracereplay.replay.global_provider import swap_global_tracer_provider

    swap_global_tracer_provider(provider)  # type: ignore[arg-type]
    once = getattr(sys.modules["opentelemetry.trace"], "_TRACER_PROVIDER_SET_ONCE", None)
    if provider is None and once is not None and hasattr(once, "_done"):
        once._done = False  # set_tracer_provider works again, once, in the agent process


preload(n for n in os.environ.get(ENV, "").split(os.pathsep) if n)
