"""A folder of test data made once per test session, whichever xdist worker asks first, and
copied for each module or process that uses it.

A store that takes seconds of CLI runs to make (the demo's, the SQL pipeline's) was made again
in each worker process or module that read it. The first to ask makes it, under a file lock in
the folder the workers share (the parent of their base temp folders); the others wait for it
and copy it: a copy of their own, so that what one test writes no other sees.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from filelock import FileLock


def made_once(
    tmp_path_factory: pytest.TempPathFactory, name: str, make: Callable[[Path], object]
) -> Path:
    """The session's folder ``name``, filled by ``make(folder)`` on first use."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    folder = shared / f"made-once-{name}"
    with FileLock(str(shared / f"made-once-{name}.lock")):
        if not (shared / f"made-once-{name}.done").exists():
            shutil.rmtree(folder, ignore_errors=True)  # what a failed attempt left
            folder.mkdir()
            make(folder)
            (shared / f"made-once-{name}.done").touch()
    return folder


def copy_made_once(
    tmp_path_factory: pytest.TempPathFactory, name: str, make: Callable[[Path], object]
) -> Path:
    """A copy of ``made_once(name)`` of the caller's own."""
    target = tmp_path_factory.mktemp(name)
    shutil.copytree(made_once(tmp_path_factory, name, make), target, dirs_exist_ok=True)
    return target
