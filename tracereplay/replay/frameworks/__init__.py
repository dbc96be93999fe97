"""Framework adapters: ``--agent module:attr`` naming a framework's own agent object.

Adapters are plugins, as OpenInference's instrumentors and ``llm``'s plugins are: each is a
``FrameworkAgent`` subclass registered under the ``tracereplay.frameworks`` entry-point group
(tracereplay's own ones in its ``pyproject.toml``; another package adds one with an entry of its
own). ``framework_agent(obj, spec)`` asks each adapter whether it accepts ``obj`` (by type
names, so no framework is imported to decide) and wraps it; ``None`` when no adapter does (a
plain callable is run as before). An adapter that cannot be loaded stops the eval with a line
naming it: a broken adapter never disappears silently. Adapter modules import their framework
only inside methods.
"""

from __future__ import annotations

import functools
from typing import Any

from tracereplay.errors import TraceReplayError, one_line
from tracereplay.replay.frameworks.base import (
    FrameworkAgent,
    ToolAnswer,
    count_answers,
    mark_replayed,
)

__all__ = [
    "BUILTIN_MODULES",
    "ENTRY_POINT_GROUP",
    "AdapterError",
    "FrameworkAgent",
    "ToolAnswer",
    "adapters",
    "count_answers",
    "framework_agent",
    "mark_replayed",
    "supported_frameworks",
]

#: the entry-point group adapters register under (``name = "module:Class"``)
ENTRY_POINT_GROUP = "tracereplay.frameworks"
_PACKAGE = "tracereplay.replay.frameworks."
#: tracereplay's own adapters' modules, in the order they are tried (what the fork server
#: preloads for agent processes without reading the entry points)
BUILTIN_MODULES: tuple[str, ...] = tuple(
    _PACKAGE + name
    for name in (
        "pydantic_ai", "openai_agents", "langgraph", "strands", "google_adk", "crewai",
        "autogen", "agent_framework", "llama_index", "smolagents",
    )
)  # fmt: skip


class AdapterError(TraceReplayError):
    """A registered framework adapter could not be loaded (or is no ``FrameworkAgent``)."""


def _order(value: str) -> tuple[int, str]:
    module = value.partition(":")[0]
    if module in BUILTIN_MODULES:
        return BUILTIN_MODULES.index(module), value
    return len(BUILTIN_MODULES), value


@functools.cache
def adapters() -> tuple[type[FrameworkAgent], ...]:
    """Every registered adapter class, tracereplay's own first (in ``BUILTIN_MODULES``' order),
    then the others by name. Raises ``AdapterError`` naming an adapter that does not load, and
    when tracereplay's own are not registered (an install without its metadata)."""
    from importlib.metadata import entry_points

    found = sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda ep: _order(ep.value))
    if not any(ep.value.startswith(_PACKAGE) for ep in found):
        raise AdapterError(
            f"tracereplay's framework adapters are not registered (entry points "
            f"'{ENTRY_POINT_GROUP}'): reinstall tracereplay (pip install tracereplay)"
        )
    out: list[type[FrameworkAgent]] = []
    for ep in found:
        try:
            cls = ep.load()
        except Exception as exc:
            raise AdapterError(
                f"the framework adapter '{ep.name}' ({ep.value}) could not be loaded: "
                f"{one_line(exc)}"
            ) from exc
        if not (isinstance(cls, type) and issubclass(cls, FrameworkAgent)):
            raise AdapterError(
                f"the framework adapter '{ep.name}' ({ep.value}) is not a FrameworkAgent subclass"
            )
        out.append(cls)
    return tuple(out)


def framework_agent(obj: Any, spec: str) -> FrameworkAgent | None:
    """The adapter for ``obj`` (a framework's agent object), or None (e.g. a plain callable)."""
    for cls in adapters():
        if cls.accepts(obj):
            return cls(obj, spec)
    return None


def supported_frameworks() -> list[str]:
    """The frameworks whose agent objects ``--agent`` accepts (each adapter's ``framework``)."""
    return [cls.framework for cls in adapters()]
