"""The no-framework fallback: a hand-written loop's plain tool functions answered from the recording.

A loop on an LLM client (the most common agent there is) calls its tools as plain functions:
module-level names (``get_weather(**args)``) or the values of a name -> function table
(``TOOLS[name](**args)``). No framework layer runs them, so nothing would intercept them. For
the attempt, every tool name the recording holds is looked up, by name, in the agent's module
(the module ``--agent`` names and the one the agent function is defined in):

- a module-level function of that name;
- in each module-level dict, the entry under that key, or whose function has that name;
- in each module-level list, the function of that name.

Each one found is replaced by the same function under ``tracereplay.tool`` (an ``execute_tool``
span marked replayed; the replay's interceptor answers the call first), and put back when the
last attempt using it ends (attempts run at once share one replacement, which asks the
interceptor of the calling attempt's context, and runs the real function outside any).

What it cannot reach (a function called through another module, captured in a closure or a
default argument, a method) runs for real: the airtight check catches it from the tool results
the agent sends its model (``tracereplay.evaluate.replay.llm.sent_results``).
"""

from __future__ import annotations

import contextlib
import inspect
import threading
from collections.abc import Callable, Collection, Iterator, MutableMapping, MutableSequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from tracereplay.sdk.tool import tool

__all__ = ["PlainTools", "is_plain_function"]


def is_plain_function(value: Any) -> bool:
    """A Python function (sync or async) that no ``@tracereplay.tool`` records already."""
    if not (inspect.isfunction(value) or inspect.ismethod(value)):
        return False
    return not (hasattr(value, "with_call_id") and hasattr(value, "tool_name"))


@dataclass
class _Slot:
    """One place a tool function sits: a dict's key or a list's index."""

    container: MutableMapping[Any, Any] | MutableSequence[Any]
    key: Any
    original: Any
    wrapper: Any
    users: int = 0


class PlainTools:
    """The plain tool functions of one agent's module(s), replaced for the attempts in progress."""

    def __init__(self, modules: Collection[ModuleType], agent: Callable[..., Any]) -> None:
        self.namespaces = [vars(m) for m in modules]
        self.agent = agent
        self._slots: dict[tuple[int, Any], _Slot] = {}
        self._wrappers: set[int] = set()  # ids of the replacements in place
        self._lock = threading.Lock()

    def _is_tool(self, value: Any) -> bool:
        return value is not self.agent and (is_plain_function(value) or id(value) in self._wrappers)

    def _named(self, value: Any, name: str) -> bool:
        return self._is_tool(value) and getattr(value, "__name__", None) == name

    def places(
        self, name: str
    ) -> list[tuple[MutableMapping[Any, Any] | MutableSequence[Any], Any]]:
        """Every (container, key) holding the function of tool ``name``."""
        found: list[tuple[Any, Any]] = []
        seen: set[int] = set()
        for namespace in self.namespaces:
            if id(namespace) in seen:
                continue
            seen.add(id(namespace))
            if self._is_tool(namespace.get(name)):
                found.append((namespace, name))
            for attr, table in list(namespace.items()):
                if id(table) in seen or attr == "__builtins__":
                    continue
                if isinstance(table, dict):
                    seen.add(id(table))
                    for key, fn in list(table.items()):
                        if (key == name and self._is_tool(fn)) or self._named(fn, name):
                            found.append((table, key))
                elif isinstance(table, list):
                    seen.add(id(table))
                    found.extend((table, i) for i, fn in enumerate(table) if self._named(fn, name))
        return found

    @contextlib.contextmanager
    def answering(self, names: Collection[str]) -> Iterator[int]:
        """The functions of ``names`` replaced for the block; yields how many places were."""
        taken: list[tuple[int, Any]] = []
        with self._lock:
            for name in sorted(set(names)):
                for container, key in self.places(name):
                    taken.append(self._take(container, key, name))
        try:
            yield len(taken)
        finally:
            with self._lock:
                for slot_key in taken:
                    self._give_back(slot_key)

    def _take(self, container: Any, key: Any, name: str) -> tuple[int, Any]:
        slot_key = (id(container), key)
        slot = self._slots.get(slot_key)
        if slot is None:
            original = container[key]
            slot = _Slot(container, key, original, tool(name=name)(original))
            container[key] = slot.wrapper
            self._slots[slot_key] = slot
            self._wrappers.add(id(slot.wrapper))
        slot.users += 1
        return slot_key

    def _give_back(self, slot_key: tuple[int, Any]) -> None:
        slot = self._slots[slot_key]
        slot.users -= 1
        if slot.users:
            return
        del self._slots[slot_key]
        self._wrappers.discard(id(slot.wrapper))
        try:
            if slot.container[slot.key] is slot.wrapper:  # the agent did not replace it itself
                slot.container[slot.key] = slot.original
        except (KeyError, IndexError):
            pass


def agent_modules(spec_module: ModuleType | None, fn: Any) -> list[ModuleType]:
    """The modules a plain agent's tools are looked up in: the one ``--agent`` names and the
    one its function is defined in (a callable object: its class's)."""
    import sys

    out: list[ModuleType] = []
    if spec_module is not None:
        out.append(spec_module)
    target = fn if inspect.isroutine(fn) else type(fn)
    defined = sys.modules.get(getattr(target, "__module__", "") or "")
    if defined is not None and defined not in out:
        out.append(defined)
    return out
