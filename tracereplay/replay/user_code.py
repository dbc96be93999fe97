"""The agent's own code: which modules are the user's, and what their objects hold.

A replay answers the user's tool functions and finds the framework agents the user's code
built, wherever that code keeps them. The user's code is every imported module whose file lies
outside the interpreter's standard library and installed packages (site-packages) and outside
tracereplay: the agent's package, and the modules it imports from the project (a ``tools.py``,
a shared registry).

``walk(roots)`` goes through what those modules hold, without calling anything (``vars()``
only, never ``getattr`` on properties, so no framework code runs): module globals, dicts,
lists, tuples and sets, objects' attributes (a framework's agent holds its tools, a tool object
its function), bound methods' functions, ``functools.partial``'s function, ``__wrapped__``
chains, and the functions of the classes the user's modules define. It yields each object with
the names it was found under (once per place that names it; expanded once): the dict key or attribute it sits in, and the ``name`` of
the object that holds it (a framework's tool object names its tool). The walk is bounded in
depth and in the number of objects, so a large object graph (a model client, a dataset) costs
a bounded time.
"""

from __future__ import annotations

import functools
import os
import sys
import sysconfig
import types
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tracereplay

__all__ = ["TOOL_ATTRIBUTES", "Found", "is_user_file", "is_user_function", "user_modules", "walk"]

#: how deep the walk goes from a module's globals (module > agent > tools list > tool object >
#: function is 4; a compiled graph's tool node holds its tools deeper)
MAX_DEPTH = 8
#: objects visited at most, per walk
MAX_OBJECTS = 200_000
#: attributes or items of one object looked at, at most (a large list is data, not tools)
MAX_ITEMS = 2_000

#: attributes a framework's tool object keeps the user's function in: a function found there
#: answers for the tool the object names (``name``), whatever the function is called
TOOL_ATTRIBUTES = frozenset(
    {
        "func", "fn", "function", "entrypoint", "_func", "_fn", "coroutine", "_async_fn",
        "async_fn", "method", "callable", "_callable", "handler", "__wrapped__", "wrapped",
        "_wrapped", "on_invoke_tool",
    }
)  # fmt: skip

_ATOMS = (str, bytes, bytearray, int, float, complex, bool, type(None), range, memoryview)


@functools.lru_cache(maxsize=1)
def _library_roots() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    roots = {paths.get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    roots |= {p for p in sys.path if p and ("site-packages" in p or "dist-packages" in p)}
    roots.add(str(Path(tracereplay.__file__).resolve().parent))  # tracereplay itself
    return tuple(sorted(os.path.realpath(r) + os.sep for r in roots if r))


@functools.lru_cache(maxsize=8192)
def is_user_file(path: str | None) -> bool:
    """Whether ``path`` (a module's or a code object's file) is the user's own code."""
    if not path or path.startswith("<"):
        return False
    real = os.path.realpath(path)
    return not any(real.startswith(root) for root in _library_roots())


def user_modules(first: Iterable[types.ModuleType] = ()) -> list[types.ModuleType]:
    """``first`` (the module ``--agent`` names), then every other imported module of the
    user's code."""
    out: list[types.ModuleType] = []
    seen: set[int] = set()
    for module in [*first, *list(sys.modules.values())]:
        if not isinstance(module, types.ModuleType) or id(module) in seen:
            continue
        seen.add(id(module))
        if module in first or is_user_file(getattr(module, "__file__", None)):
            out.append(module)
    return out


def is_user_function(value: Any) -> bool:
    """A Python function (sync or async) defined in the user's code."""
    code = getattr(value, "__code__", None)
    return isinstance(value, types.FunctionType) and is_user_file(
        getattr(code, "co_filename", None)
    )


@dataclass(frozen=True)
class Found:
    """An object the walk reached and the names it was found under."""

    value: Any
    #: dict keys / attribute names / holders' ``name`` it sits under
    names: frozenset[str]
    #: a function found in a class's namespace (a method: its first argument is the object)
    method: bool = False


def _holder_name(obj: Any) -> str | None:
    """The ``name`` an object gives itself in its own attributes (a tool object's tool name)."""
    try:
        attrs = vars(obj)
    except TypeError:
        return None
    name = attrs.get("name") or attrs.get("_name")
    return name if isinstance(name, str) and name.isidentifier() else None


def _items(obj: Any) -> Iterator[tuple[str | None, Any]]:
    """(name, value) of what ``obj`` holds directly, without running its code."""
    if isinstance(obj, dict):
        for i, (k, v) in enumerate(list(obj.items())):
            if i >= MAX_ITEMS:
                return
            yield (k if isinstance(k, str) else None), v
        return
    if isinstance(obj, (list, tuple, set, frozenset)):
        for i, v in enumerate(list(obj)):
            if i >= MAX_ITEMS:
                return
            yield None, v
        return
    if isinstance(obj, types.MethodType):
        yield None, obj.__func__
        yield None, obj.__self__
        return
    if isinstance(obj, functools.partial):
        yield None, obj.func
        return
    if isinstance(obj, (staticmethod, classmethod)):
        yield None, obj.__func__
        return
    if isinstance(obj, types.FunctionType):
        wrapped = obj.__dict__.get("__wrapped__")
        if wrapped is not None:
            yield "__wrapped__", wrapped
        for cell in obj.__closure__ or ():  # what a framework's wrapper closes over
            try:
                yield None, cell.cell_contents
            except ValueError:  # an empty cell
                pass
        return
    try:
        attrs = vars(obj)
    except TypeError:
        attrs = None
    if isinstance(attrs, dict):
        for i, (k, v) in enumerate(list(attrs.items())):
            if i >= MAX_ITEMS:
                break
            yield k, v
    for cls in type(obj).__mro__:
        for slot in cls.__dict__.get("__slots__", ()) if isinstance(cls, type) else ():
            if isinstance(slot, str) and slot not in ("__dict__", "__weakref__"):
                try:
                    yield slot, object.__getattribute__(obj, slot)
                except AttributeError:
                    pass


def walk(roots: Iterable[types.ModuleType]) -> Iterator[Found]:
    """Every object reachable from ``roots``' globals (see the module's docstring)."""
    seen: set[int] = set()
    user = {m.__name__ for m in roots}
    # breadth first: an object is expanded from the shallowest place it is held (depth-first
    # with a depth limit would meet a tool object first deep inside a framework's graph, stop
    # there, and never expand it again from the module that holds it)
    stack: deque[tuple[Any, int, frozenset[str], bool]] = deque()
    for module in roots:
        for name, value in list(vars(module).items()):
            if name.startswith("__") and name.endswith("__"):
                continue
            stack.append((value, 1, frozenset({name}), False))
    count = 0
    while stack and count < MAX_OBJECTS:
        obj, depth, names, method = stack.popleft()
        if isinstance(obj, (*_ATOMS, types.ModuleType)):
            continue
        if id(obj) in seen:  # held in another place too: found under those names as well
            if names and not isinstance(obj, type):
                yield Found(obj, names, method)
            continue
        seen.add(id(obj))
        count += 1
        if isinstance(obj, type):
            if obj.__module__ in user:  # a class of the user's: its methods
                for attr, member in list(vars(obj).items()):
                    if isinstance(member, types.FunctionType):
                        stack.append((member, depth + 1, frozenset({attr}), True))
                    elif isinstance(member, (staticmethod, classmethod)):
                        stack.append((member.__func__, depth + 1, frozenset({attr}), False))
            continue
        yield Found(obj, names, method)
        if depth >= MAX_DEPTH:
            continue
        holder = _holder_name(obj)
        if not isinstance(obj, (dict, list, tuple, set, frozenset, types.FunctionType)):
            stack.append((type(obj), depth + 1, frozenset(), False))
        for key, value in _items(obj):
            if isinstance(value, _ATOMS):
                continue
            below = {key} if key and not key.startswith("__") else set()
            if holder and key in TOOL_ATTRIBUTES:
                below.add(holder)
            is_method = isinstance(obj, types.MethodType) and value is obj.__func__
            if isinstance(obj, types.FunctionType) and key == "__wrapped__":
                below |= names  # a wrapper's original: the same tool
            stack.append((value, depth + 1, frozenset(below), is_method))
