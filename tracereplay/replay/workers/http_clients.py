"""The HTTP client libraries the replay wraps, imported for the fork server without httpx's
command-line client.

The fork server imports httpx (and httpx2) so that every agent process starts with them
(``preload``). httpx's package imports its command-line client, ``httpx._main``, whenever
click and rich are installed, which they always are next to tracereplay (typer needs them):
more than half of httpx's import, in the fork server the first agent process waits for. Here ``httpx._main`` is given as a module whose ``main``
imports the real one when it is called, so ``httpx.main()`` still runs httpx's command; the
stand-in leaves ``sys.modules`` as soon as the package is imported, so that ``import
httpx._main`` imports the real module. This module does that when it is imported: the fork
server's preload takes module names.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

from tracereplay.replay.answering.llm.httpx_hook import HTTP_CLIENTS


def _deferred_cli(name: str) -> types.ModuleType:
    """A stand-in for the module ``name`` whose ``main`` imports the real one and runs it."""
    stand_in = types.ModuleType(name)

    def main(*args: Any, **kwargs: Any) -> Any:
        if sys.modules.get(name) is stand_in:
            del sys.modules[name]
        return importlib.import_module(name).main(*args, **kwargs)

    stand_in.main = main  # type: ignore[attr-defined]
    return stand_in


def import_clients(packages: tuple[str, ...] = HTTP_CLIENTS) -> None:
    """Import each installed package of ``packages`` with its ``_main`` deferred (one already
    imported, or not installed, is left as it is)."""
    for package in packages:
        if package in sys.modules:
            continue
        name = f"{package}._main"
        stand_in = _deferred_cli(name)
        sys.modules.setdefault(name, stand_in)
        try:
            importlib.import_module(package)
        except ImportError:
            pass
        finally:
            if sys.modules.get(name) is stand_in:
                del sys.modules[name]


import_clients()
