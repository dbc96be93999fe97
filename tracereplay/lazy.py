"""Package attributes that import their module on first use (PEP 562 ``__getattr__``)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any


def lazy_getattr(package: str, sources: Mapping[str, str]) -> Callable[[str], Any]:
    """A module-level ``__getattr__`` for ``package``: ``sources`` maps each lazy name to the
    module defining it; the first access imports it and caches the value on the package."""

    def __getattr__(name: str) -> Any:
        module = sources.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__


class LazyModule:
    """A module imported on the first access to one of its attributes; each attribute read is
    then kept on this object, so later reads cost a plain attribute lookup. For a heavy module
    (pyarrow and numpy with it: a fifth of a second) that a module needs on some paths only."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        value = getattr(import_module(self._name), attr)
        setattr(self, attr, value)
        return value
