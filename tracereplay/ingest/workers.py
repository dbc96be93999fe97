"""The worker processes ingest decodes and prepares its input in: file ingest and the spool
drain alike.

A ``WorkerPool`` is a ``ProcessPoolExecutor`` whose workers a fork server starts (``spawn``
where the platform has none): they never inherit this process's threads or open DuckDB file, so
a pool can be started at any time. A job is a function returning ``(batch, extra)``: the worker
leaves ``batch`` (a ``PreparedBatch``) as handoff files that the writer maps back (see
``handoff``), and only ``extra`` and the file names are pickled. A worker that dies, or a job
that raises, surfaces as one ``IngestError`` with a one-line message; after a death the pool is
``broken`` and whoever keeps it replaces it.
"""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Generic, TypeVar

from tracereplay.errors import IngestError, one_line
from tracereplay.forkserver import on_end, started_child, worker_context
from tracereplay.gcpause import gc_paused
from tracereplay.ingest.handoff import Shipped, new_directory, receive, remove_directory, ship
from tracereplay.ingest.pipeline import PreparedBatch

T = TypeVar("T")


class Job(Generic[T]):
    """A job given to a ``WorkerPool``."""

    def __init__(self, future: Future[tuple[Shipped | None, T]], pool: WorkerPool) -> None:
        self._future = future
        self._pool = pool

    def result(self) -> tuple[PreparedBatch | None, T]:
        """Wait for the job: its batch (mapped from the handoff files) and its ``extra``.
        Raises ``IngestError`` when its worker died or the job raised."""
        try:
            shipped, extra = self._future.result()
        except BrokenProcessPool:
            self._pool.broken = True
            raise _died() from None
        except Exception as exc:
            raise IngestError(
                one_line(
                    f"ingest stopped: a worker process failed ({type(exc).__name__}: {exc});"
                    " run it again (spans already stored are skipped)"
                )
            ) from None
        return (receive(shipped) if shipped is not None else None), extra


class WorkerPool:
    """``workers`` worker processes, started as jobs come (or all at once with ``start``).

    ``preload``: the modules whose functions the workers run (with what they import: pyarrow,
    protobuf, the converter), imported once by the fork server so that every worker it forks
    starts with them. The callers name their own module: the pool knows none of its jobs."""

    def __init__(self, workers: int, preload: Sequence[str] = ()) -> None:
        # the fork server starts now: it imports the preload while this process goes on
        # (opening the store), instead of the first job waiting for that
        ctx = worker_context(preload, start=True)
        self.size = workers
        #: where the workers leave the tables of prepared batches (see ``handoff``)
        self.directory = new_directory()
        #: a worker died: every job given (and to be given) fails; replace the pool
        self.broken = False
        self._executor = ProcessPoolExecutor(
            workers, mp_context=ctx, initializer=started_child, initargs=(os.getpid(),)
        )

    def submit(self, fn: Callable[..., tuple[PreparedBatch | None, T]], *args: Any) -> Job[T]:
        """Run ``fn(*args)`` in a worker. ``fn`` must be importable by name (a module-level
        function) and return ``(batch, extra)``, ``batch`` a ``PreparedBatch`` or ``None``."""
        try:
            future = self._executor.submit(_run, fn, str(self.directory), args)
        except BrokenProcessPool:
            self.broken = True
            raise _died() from None
        return Job(future, self)

    def start(self) -> None:
        """Start every worker now, in the background (else each starts when a job needs it)."""
        for _ in range(self.size):
            self._executor.submit(os.getpid)

    def close(self) -> None:
        """Stop the workers (jobs not started are dropped) and remove the handoff files."""
        self._executor.shutdown(wait=True, cancel_futures=True)
        remove_directory(self.directory)


def _died() -> IngestError:
    return IngestError(
        "ingest stopped: a worker process died; run it again (spans already stored are skipped)"
    )


def _run(
    fn: Callable[..., tuple[PreparedBatch | None, T]], directory: str, args: tuple[Any, ...]
) -> tuple[Shipped | None, T]:
    """A job, in a worker: its batch goes back as handoff files."""
    with gc_paused():  # see gcpause: what the job decodes dies inside the pause
        batch, extra = fn(*args)
    if batch is None:
        return None, extra
    return ship(batch, Path(directory), f"{os.getpid()}-{uuid.uuid4().hex}"), extra


@contextmanager
def worker_pool(workers: int, preload: Sequence[str] = ()) -> Iterator[WorkerPool | None]:
    """A pool of ``workers`` processes for the length of the block (``None`` for 0)."""
    if workers <= 0:
        yield None
        return
    pool = WorkerPool(workers, preload)
    try:
        yield pool
    finally:
        pool.close()


_shared: WorkerPool | None = None
_shared_lock = threading.Lock()


def shared_pool(workers: int, preload: Sequence[str] = ()) -> WorkerPool:
    """The process-wide pool (of ``workers`` processes the first time): kept from one use to
    the next (every drain of a server, every command opening the store) and closed at exit; a
    broken one is replaced."""
    global _shared
    with _shared_lock:
        if _shared is not None and _shared.broken:
            _shared.close()
            _shared = None
        if _shared is None:
            _shared = WorkerPool(workers, preload)
            on_end(_close_shared)  # before the fork server is stopped (end_workers, at exit)
        return _shared


def _close_shared() -> None:
    global _shared
    with _shared_lock:
        pool, _shared = _shared, None
    if pool is not None:
        pool.close()
