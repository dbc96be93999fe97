"""An inter-process lock around the DuckDB file.

DuckDB lets one process at a time open a file for writing. Every tracereplay process takes this
lock (``filelock``: ``flock`` on ``<db>.lock``) before opening the file and releases it as soon as
it is done, so processes queue for a moment instead of failing with "database is locked".
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from tracereplay.errors import StoreBusyError

#: how often a waiting process tries the lock again (seconds)
POLL_INTERVAL = 0.005


@contextmanager
def file_lock(path: Path, timeout: float = 60.0) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (created if missing), waiting up to ``timeout`` s.

    Not re-entrant: a second ``file_lock`` on the same path waits for the first, even in the same
    process; after ``timeout`` it raises ``StoreBusyError``.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(path, mode=0o644)
    try:
        lock.acquire(timeout=max(timeout, 0.0), poll_interval=POLL_INTERVAL)
    except Timeout:
        raise StoreBusyError(
            f"the store {path.with_suffix('')} is busy: another process held it for "
            f"more than {timeout:.0f}s"
        ) from None
    try:
        yield
    finally:
        lock.release()
