"""The fork server every worker process of tracereplay starts from (ingest workers, agent
processes), and what each such process does first.

Worker processes are forked by multiprocessing's fork server (spawned where the platform has
none): they never inherit this process's threads, locks or open DuckDB file. The fork server
imports a preload list once when it starts, so each child starts with those modules loaded;
``worker_context(preload)`` adds to that list (it takes effect only when the server starts, so
every user's modules are kept, whoever starts it first). ``started_child(parent)`` is the first
thing a child does: Ctrl-C is the parent's to handle, and the child leaves when the parent's
process is gone (a fork server's child is not the parent's child, so the kernel would not tell).
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.context
import multiprocessing.forkserver
import os
import signal
import threading
import time
from collections.abc import Sequence

_preload: list[str] = ["__main__"]  # the program's main script: children do not run it again
_lock = threading.Lock()


def worker_context(
    preload: Sequence[str] = (), *, start: bool = False
) -> multiprocessing.context.BaseContext:
    """The fork server context (else spawn), with ``preload`` among what the fork server imports
    when it starts; ``start``: start it now (it imports while this process goes on)."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    ctx = multiprocessing.get_context("forkserver")
    with _lock:
        for name in preload:
            if name not in _preload:
                _preload.append(name)
        ctx.set_forkserver_preload(list(_preload))  # no effect once the fork server runs
    if start:
        multiprocessing.forkserver.ensure_running()
    return ctx


def started_child(parent: int) -> None:
    """In a child, first: ignore Ctrl-C, and exit when process ``parent`` is gone."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    def watch() -> None:
        while True:
            time.sleep(1.0)
            try:
                os.kill(parent, 0)
            except (ProcessLookupError, PermissionError):  # gone (or its pid reused)
                os._exit(1)

    threading.Thread(target=watch, name="tracereplay-parent-watch", daemon=True).start()
