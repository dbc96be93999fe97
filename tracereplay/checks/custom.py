"""Loading user check modules (``--checks module``): importing them runs their ``@check``s."""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from collections.abc import Iterable
from pathlib import Path

from tracereplay.checks.registry import list_check_kinds
from tracereplay.errors import TraceReplayError


class CheckModuleError(TraceReplayError):
    """A ``--checks`` module cannot be found or fails while importing."""


def _import_file(path: Path) -> None:
    name = path.stem
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise CheckModuleError(f"cannot load check module from {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise


def load_check_modules(names: Iterable[str]) -> list[str]:
    """Import each module (a dotted name found from the current directory or PYTHONPATH, or a
    ``.py`` file path; comma-separated lists are split) and return the check kinds it added."""
    before = {k.kind for k in list_check_kinds()}
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)
    for raw in names:
        for name in (part.strip() for part in raw.split(",")):
            if not name:
                continue
            try:
                if name.endswith(".py") or os.sep in name:
                    path = Path(name)
                    if not path.is_file():
                        raise CheckModuleError(f"check module file {name} does not exist")
                    _import_file(path.resolve())
                else:
                    importlib.import_module(name)
            except TraceReplayError:
                raise
            except ModuleNotFoundError as exc:
                if exc.name and (name == exc.name or name.startswith(exc.name + ".")):
                    raise CheckModuleError(
                        f"cannot import check module {name!r}: not found in the current "
                        "directory or on PYTHONPATH"
                    ) from None
                raise CheckModuleError(f"check module {name!r} failed to import: {exc}") from None
            except Exception as exc:
                raise CheckModuleError(
                    f"check module {name!r} failed to import: {type(exc).__name__}: {exc}"
                ) from None
    return sorted({k.kind for k in list_check_kinds()} - before)
