"""An inter-process lock around the DuckDB file.

DuckDB lets one process at a time open a file for writing. Every tracereplay process takes this
lock (``flock`` on ``<db>.lock``) before opening the file and releases it as soon as it is done,
so processes queue for a moment instead of failing with "database is locked".
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tracereplay.errors import StoreBusyError


@contextmanager
def file_lock(path: Path, timeout: float = 60.0) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``path`` (created if missing), waiting up to ``timeout`` s."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + timeout
        delay = 0.002
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise StoreBusyError(
                        f"the store {path.with_suffix('')} is busy: another process held it for "
                        f"more than {timeout:.0f}s"
                    ) from None
                time.sleep(delay)
                delay = min(delay * 2, 0.05)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
