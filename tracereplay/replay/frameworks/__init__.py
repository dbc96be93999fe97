"""Framework adapters: ``--agent module:attr`` naming a framework's own agent object.

``framework_agent(obj, spec)`` asks each adapter whether it accepts ``obj`` (by type names, so
no framework is imported to decide) and wraps it; ``None`` when no adapter does (a plain
callable is run as before). Adapter modules import their framework only inside methods.
"""

from __future__ import annotations

import importlib
from typing import Any

from tracereplay.replay.frameworks.base import (
    FrameworkAgent,
    ToolAnswer,
    count_answers,
    mark_replayed,
)

__all__ = [
    "ADAPTERS",
    "FrameworkAgent",
    "ToolAnswer",
    "count_answers",
    "framework_agent",
    "mark_replayed",
    "supported_frameworks",
]

#: (module, class) of every adapter, tried in this order (before anything with a ``run``
#: method is taken for an AgenticAssure adapter)
ADAPTERS: tuple[tuple[str, str], ...] = (
    ("tracereplay.replay.frameworks.pydantic_ai", "PydanticAiAgent"),
    ("tracereplay.replay.frameworks.openai_agents", "OpenAIAgentsAgent"),
    ("tracereplay.replay.frameworks.langgraph", "LangGraphAgent"),
    ("tracereplay.replay.frameworks.strands", "StrandsAgent"),
    ("tracereplay.replay.frameworks.google_adk", "GoogleAdkAgent"),
    ("tracereplay.replay.frameworks.crewai", "CrewAIAgent"),
    ("tracereplay.replay.frameworks.autogen", "AutoGenAgent"),
    ("tracereplay.replay.frameworks.agent_framework", "AgentFrameworkAgent"),
    ("tracereplay.replay.frameworks.llama_index", "LlamaIndexAgent"),
    ("tracereplay.replay.frameworks.smolagents", "SmolagentsAgent"),
)


def _adapter(module: str, name: str) -> type[FrameworkAgent] | None:
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):  # an adapter not written (yet)
        return None


def framework_agent(obj: Any, spec: str) -> FrameworkAgent | None:
    """The adapter for ``obj`` (a framework's agent object), or None (e.g. a plain callable)."""
    for module, name in ADAPTERS:
        cls = _adapter(module, name)
        if cls is not None and cls.accepts(obj):
            return cls(obj, spec)
    return None


def supported_frameworks() -> list[str]:
    """The frameworks whose agent objects ``--agent`` accepts (each adapter's ``framework``)."""
    names = []
    for module, name in ADAPTERS:
        cls = _adapter(module, name)
        if cls is not None:
            names.append(cls.framework)
    return names
