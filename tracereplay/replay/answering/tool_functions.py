"""The user's tool functions answered from the recording, wherever the agent's code holds them.

A framework keeps the user's function inside its own tool object, made when the module was
imported (``Tool(func=get_weather)``, ``Function(entrypoint=...)``, a registry dict, a closure,
a bound method of a toolkit): rebinding a module's names does not reach what those hold. So
the replay changes the function object itself: for an attempt, the ``__code__`` of each tool
function is swapped for a trampoline with the same parameters (and free variables, as Python
requires), which calls the original code under ``tracereplay.tool``: an ``execute_tool`` span,
marked replayed when the replay's interceptor answers it. Every holder of the function (the
module, the framework's tool object, a bound method, a ``functools.wraps`` wrapper) now calls
the trampoline; the function's name, signature, defaults, annotations and docstring are
unchanged (frameworks read them at call time), ``inspect.iscoroutinefunction`` still says what
it said. Outside a replay's context the trampoline runs the original code and records nothing.

Which functions: the recorded tool names looked up in the user's code (``user_code``): a
function of that name, one held under that name (a dict key, an attribute), or one a
framework's tool object of that ``name`` holds; defined in the user's code (a framework's own
function is never touched), not the agent itself, not a ``@tracereplay.tool`` already (it asks
the interceptor itself). A tool called from inside another answered tool (a wrapper around the
function, the function under ``--live-tools``) runs as it is: the outer call is the recorded
one. The original code is put back when the last attempt using it ends.

What it cannot reach (a generator, a lambda a framework built from the function's source, a
C function) runs for real, and the airtight check catches it (``airtight``).
"""

from __future__ import annotations

import builtins
import contextlib
import inspect
import re
import sys
import threading
import types
from collections.abc import Callable, Collection, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tracereplay
from tracereplay.replay.user_code import is_user_function, user_modules, walk
from tracereplay.sdk.replay_hook import _interceptor
from tracereplay.sdk.tool import tool

__all__ = ["ToolFunctions", "is_tracereplay_tool"]

#: the names in ``builtins`` the trampolines call (a trampoline runs with its function's own
#: globals, which cannot be changed: it finds these through the builtins)
_SYNC = "__tracereplay_tool_function__"
_ASYNC = "__tracereplay_tool_coroutine__"
_NOT_SWAPPED = inspect.CO_GENERATOR | inspect.CO_ASYNC_GENERATOR | inspect.CO_ITERABLE_COROUTINE


def is_tracereplay_tool(value: Any) -> bool:
    """A function ``@tracereplay.tool`` wraps (it asks the replay's interceptor itself)."""
    return hasattr(value, "with_call_id") and hasattr(value, "tool_name")


@dataclass
class _Swap:
    """One function whose code is swapped: its own code, and the original as a tool."""

    fn: types.FunctionType
    saved: types.CodeType
    answered: Callable[..., Any]  # the original code under ``tracereplay.tool``
    original: types.FunctionType  # the original code, as a function of its own
    users: int = 0


_swaps: dict[int, _Swap] = {}
_lock = threading.Lock()
#: inside an answered tool call: a tool function called from there runs as it is
_inside: ContextVar[bool] = ContextVar("tracereplay_inside_tool_function", default=False)


def _as_called(
    swap: _Swap, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The trampoline passes every parameter: those the caller left to their defaults are
    left out again (the recorded arguments are what the caller passed), so the tool sees the
    call as it was made. The positional arguments are all there when ``*args`` is empty."""
    fn = swap.fn
    defaults = fn.__defaults__ or ()
    n_pos = swap.saved.co_argcount
    if defaults and len(args) == n_pos:
        first = n_pos - len(defaults)
        end = n_pos
        while end > first and args[end - 1] is defaults[end - 1 - first]:
            end -= 1
        args = args[:end]
    kwdefaults = fn.__kwdefaults__
    if kwdefaults and kwargs:
        kwargs = {k: v for k, v in kwargs.items() if not (k in kwdefaults and v is kwdefaults[k])}
    return args, kwargs


def _call(key: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    swap = _swaps[key]
    args, kwargs = _as_called(swap, args, kwargs)
    if _inside.get() or _interceptor.get() is None:
        return swap.original(*args, **kwargs)
    token = _inside.set(True)
    try:
        return swap.answered(*args, **kwargs)
    finally:
        _inside.reset(token)


async def _acall(key: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    swap = _swaps[key]
    args, kwargs = _as_called(swap, args, kwargs)
    if _inside.get() or _interceptor.get() is None:
        return await swap.original(*args, **kwargs)
    token = _inside.set(True)
    try:
        return await swap.answered(*args, **kwargs)
    finally:
        _inside.reset(token)


setattr(builtins, _SYNC, _call)
setattr(builtins, _ASYNC, _acall)


def trampoline(code: types.CodeType, key: int) -> types.CodeType | None:
    """Code with ``code``'s parameters and free variables that passes its arguments to
    ``_call(key, ...)`` (``_acall`` for a coroutine); None for what cannot be swapped."""
    if code.co_flags & _NOT_SWAPPED:
        return None
    names = code.co_varnames
    n_pos, n_kw = code.co_argcount, code.co_kwonlyargcount
    positional, keyword = names[:n_pos], names[n_pos : n_pos + n_kw]
    i = n_pos + n_kw
    var_pos = names[i] if code.co_flags & inspect.CO_VARARGS else None
    var_kw = names[i + (var_pos is not None)] if code.co_flags & inspect.CO_VARKEYWORDS else None
    params = list(positional)
    if code.co_posonlyargcount:
        params.insert(code.co_posonlyargcount, "/")
    if var_pos:
        params.append(f"*{var_pos}")
    elif keyword:
        params.append("*")
    params += keyword
    if var_kw:
        params.append(f"**{var_kw}")
    items = [*positional, *([f"*{var_pos}"] if var_pos else [])]
    args = "".join(f"{item}, " for item in items)
    kwargs = ", ".join([f"{k!r}: {k}" for k in keyword] + ([f"**{var_kw}"] if var_kw else []))
    free = code.co_freevars
    is_async = bool(code.co_flags & inspect.CO_COROUTINE)
    call = f"{_ASYNC if is_async else _SYNC}({key}, ({args}), {{{kwargs}}})"
    source = "\n".join(
        [
            "def __outer__():",
            *([f"    {' = '.join(free)} = None"] if free else []),
            f"    {'async ' if is_async else ''}def {code.co_name}({', '.join(params)}):",
            *([f"        {', '.join(free)},"] if free else []),
            f"        return {'await ' if is_async else ''}{call}",
            f"    return {code.co_name}",
        ]
    )
    if not code.co_name.isidentifier():
        source = source.replace(code.co_name, "__tool__")
    namespace: dict[str, Any] = {}
    try:
        exec(compile(source, "<tracereplay tool>", "exec"), namespace)  # noqa: S102 - our own source
    except SyntaxError:
        return None
    new = namespace["__outer__"]().__code__
    k = n_pos + n_kw + bool(var_pos) + bool(var_kw)
    flags = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS | inspect.CO_COROUTINE
    same = (
        new.co_freevars == free
        and new.co_varnames[:k] == names[:k]
        and (new.co_argcount, new.co_posonlyargcount, new.co_kwonlyargcount)
        == (code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount)
        and new.co_flags & flags == code.co_flags & flags
    )
    if not same:
        return None
    return new.replace(co_qualname=code.co_qualname)


def _original(fn: types.FunctionType) -> types.FunctionType:
    """``fn``'s original code as a function of its own (what runs when the tool runs)."""
    copy = types.FunctionType(
        fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__
    )
    copy.__kwdefaults__ = fn.__kwdefaults__
    copy.__qualname__ = fn.__qualname__
    copy.__module__ = fn.__module__
    copy.__doc__ = fn.__doc__
    copy.__annotations__ = fn.__annotations__
    if "__wrapped__" in fn.__dict__:  # a wrapper: its arguments bound as the wrapped takes them
        copy.__wrapped__ = fn.__dict__["__wrapped__"]  # type: ignore[attr-defined]
    return copy


class ToolFunctions:
    """The tool functions of one agent's code, swapped for the attempts in progress."""

    def __init__(self, modules: Sequence[types.ModuleType], agent: Any) -> None:
        self.modules = list(modules)
        self.agent = agent
        #: the functions found per set of names, while no module was imported since: the walk
        #: costs milliseconds, an attempt of a quick agent less (the swap needs the function
        #: objects only, and those the modules hold stay the same)
        self._found: dict[frozenset[str], tuple[int, list[tuple[str, types.FunctionType]]]] = {}

    def frameworks_own(self, name: str) -> bool:
        """Whether tool ``name`` is the framework's own: no function of the user's code is that
        tool, and a function of that name exists outside it (Agno's ``delegate_task_to_member``,
        made inside a team's method: looked for among every function object alive)."""
        if self._functions({name}):
            return False
        return _library_function_named(name)

    def functions(self, names: Collection[str]) -> list[tuple[str, types.FunctionType]]:
        """(tool name, function) of every user function answering for one of ``names``: by its
        own name, the name it is held under, its tool object's ``name``; a qualified recorded
        name (``WeatherPlugin-get_weather``: Semantic Kernel's ``plugin-function``, ``a.b``,
        ``a__b``, ``a/b``) also by its last part, for a function whose class or holder is the
        first part."""
        wanted = set(names)
        if not wanted:
            return []
        qualified = _qualified(wanted)
        agent = getattr(self.agent, "__func__", self.agent)
        out: dict[int, tuple[str, types.FunctionType]] = {}
        skipped: set[int] = set()
        for found in walk(user_modules(self.modules)):
            value = found.value
            if is_tracereplay_tool(value):
                inner = inspect.unwrap(value)
                skipped.add(id(inner))
                out.pop(id(inner), None)
                continue
            if value is agent or id(value) in skipped:
                continue
            if id(value) not in _swaps and not is_user_function(value):
                continue  # (a function swapped by an attempt running is the user's)
            name = value.__name__ if value.__name__ in wanted else None
            if name is None:
                name = next((n for n in sorted(found.names) if n in wanted), None)
            if name is None and value.__name__ in qualified:
                owners = {value.__qualname__.rpartition(".")[0].rpartition(".")[2], *found.names}
                name = next((q for p, q in qualified[value.__name__] if p in owners), None)
            if name is not None and (id(value) not in out or name == value.__name__):
                out[id(value)] = (name, value)
        return list(out.values())

    def _functions(self, names: Collection[str]) -> list[tuple[str, types.FunctionType]]:
        key, modules = frozenset(names), len(sys.modules)
        cached = self._found.get(key)
        if cached is None or cached[0] != modules:
            cached = (modules, self.functions(key))
            self._found[key] = cached
        return cached[1]

    @contextlib.contextmanager
    def answering(self, names: Collection[str]) -> Iterator[int]:
        """The tool functions of ``names`` answered for the block; yields how many."""
        taken: list[int] = []
        with _lock:
            for name, fn in self._functions(names):
                if _take(fn, name):
                    taken.append(id(fn))
        try:
            yield len(taken)
        finally:
            with _lock:
                for key in taken:
                    _give_back(key)


_QUALIFIERS = re.compile(r"__|[-./:]")


def _qualified(names: Collection[str]) -> dict[str, list[tuple[str, str]]]:
    """``{last part: [(first part, recorded name)]}`` of the qualified recorded names."""
    out: dict[str, list[tuple[str, str]]] = {}
    for name in names:
        parts = [p for p in _QUALIFIERS.split(name) if p]
        if len(parts) >= 2 and parts[-1].isidentifier():
            out.setdefault(parts[-1], []).append((parts[-2], name))
    return out


_library_names: dict[str, bool] = {}
_TRACEREPLAY = str(Path(tracereplay.__file__).resolve().parent)


def _library_function_named(name: str) -> bool:
    """Whether a function object named ``name`` and defined outside the user's code is alive
    (a garbage-collector scan, once per name: it runs only for a tool span nothing answered)."""
    if name not in _library_names:
        import gc

        _library_names[name] = any(
            isinstance(obj, types.FunctionType)
            and obj.__name__ == name
            and not obj.__code__.co_filename.startswith(("<", _TRACEREPLAY))
            and not is_user_function(inspect.unwrap(obj))  # a decorator's wrapper of the user's
            for obj in gc.get_objects()
        )
    return _library_names[name]


def _take(fn: types.FunctionType, name: str) -> bool:
    key = id(fn)
    swap = _swaps.get(key)
    if swap is None:
        new = trampoline(fn.__code__, key)
        if new is None:
            return False
        original = _original(fn)
        swap = _Swap(fn, fn.__code__, tool(name=name)(original), original)
        _swaps[key] = swap
        fn.__code__ = new
    swap.users += 1
    return True


def _give_back(key: int) -> None:
    swap = _swaps[key]
    swap.users -= 1
    if swap.users:
        return
    swap.fn.__code__ = swap.saved
    del _swaps[key]
