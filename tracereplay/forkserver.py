"""The fork server every worker process of tracereplay starts from (ingest workers, agent
processes), and what each such process does first.

Worker processes are forked by multiprocessing's fork server (spawned where the platform has
none): they never inherit this process's threads, locks or open DuckDB file. The fork server
imports a preload list once when it starts, so each child starts with those modules loaded;
``worker_context(preload)`` adds to that list (it takes effect only when the server starts, so
every user's modules are kept, whoever starts it first). ``ensure_server()`` starts it with the
program's main script among what it imports: Python (3.11 to 3.13) looks the script's path up
under a key its own ``get_preparation_data`` no longer gives, so each child ran the main script
again (for the ``tracereplay`` command, the whole CLI's imports, in every child).
``started_child(parent)`` is the first thing a child does: Ctrl-C is the parent's to handle, and
the child leaves when the parent's process is gone (a fork server's child is not the parent's
child, so the kernel would not tell).

``end_workers()`` is the last thing a command does: every worker process it started, the fork
server and multiprocessing's resource tracker have exited when it returns (each would otherwise
leave a moment *after* the command, on seeing it gone).
"""

from __future__ import annotations

import atexit
import gc
import multiprocessing
import multiprocessing.context
import multiprocessing.forkserver
import multiprocessing.resource_tracker
import multiprocessing.spawn
import multiprocessing.util
import os
import signal
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

_preload: list[str] = ["__main__"]  # the program's main script: children do not run it again
_lock = threading.Lock()
#: what ``end_workers`` calls first: closers of pools whose workers would wait for more work
_closers: list[Callable[[], None]] = []
_atexit = False
#: seconds the fork server and the resource tracker get to leave once the workers are gone
HELPER_GRACE_S = 1.0
#: how tracereplay's worker processes are named (``end_workers`` at exit ends only those)
WORKER_PREFIX = "tracereplay-"


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
        ensure_server()
    return ctx


def ensure_server() -> None:
    """Start the fork server unless it runs, the main script among what it imports (so its
    children do not run it again); a no-op where there is no fork server."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return
    spawn = multiprocessing.spawn
    real = spawn.get_preparation_data

    def with_main_path(name: str) -> dict[str, Any]:
        data = real(name)
        if "init_main_from_path" in data:  # the key the fork server's start does not read
            data.setdefault("main_path", data["init_main_from_path"])
        return data

    global _atexit
    with _lock:
        spawn.get_preparation_data = with_main_path  # type: ignore[assignment]
        try:
            multiprocessing.forkserver.ensure_running()
        finally:
            spawn.get_preparation_data = real  # type: ignore[assignment]
        if not _atexit:  # a program that never calls end_workers: at its exit, then
            atexit.register(_end_at_exit)
            _atexit = True


def server_running() -> bool:
    """Whether this process's fork server runs (its preload list is then fixed)."""
    server = getattr(multiprocessing.forkserver, "_forkserver", None)
    return getattr(server, "_forkserver_pid", None) is not None


def on_end(close: Callable[[], None]) -> None:
    """Have ``end_workers`` call ``close`` first (a pool that keeps its workers for more jobs);
    it is called once, then forgotten."""
    with _lock:
        _closers.append(close)


def end_workers(grace_s: float = 5.0, *, every_child: bool = True) -> None:
    """Wait (up to ``grace_s``, then kill) for the worker processes this process started, then
    stop the fork server and the resource tracker and wait for them: when this returns, none
    of them runs. ``every_child``: every multiprocessing child of this process is a worker
    (a ``tracereplay`` command); otherwise (at the exit of a program that uses tracereplay as a
    library) only tracereplay's are, and the helpers are stopped only if no other child
    remains to need them. Safe to call more than once; the next worker starts a new server."""
    with _lock:
        closers = _closers[::-1]
        _closers.clear()
    for close in closers:
        try:
            close()
        except Exception:  # a pool that cannot close cleanly: its workers are killed below
            pass
    deadline = time.monotonic() + grace_s

    def ours() -> list[multiprocessing.process.BaseProcess]:
        children = multiprocessing.active_children()
        return [c for c in children if every_child or c.name.startswith(WORKER_PREFIX)]

    for child in ours():
        child.join(max(0.0, deadline - time.monotonic()))
    for child in ours():
        child.kill()
        child.join(1.0)
    if multiprocessing.active_children():
        return  # someone else's: they may still need the fork server
    # the workers are gone; a helper still there past a moment is held by a process a worker
    # started and left behind (an agent's own child inherits the pipes): it is killed then
    deadline = time.monotonic() + HELPER_GRACE_S
    server = multiprocessing.forkserver._forkserver  # type: ignore[attr-defined]
    with _lock, server._lock:
        # nothing left in it to finish (its children are gone): killed at once, not waited for
        # while it tears down every module it imported
        _stop_helper(server, "_forkserver_pid", "_forkserver_alive_fd", time.monotonic())
        address = server._forkserver_address
        server._forkserver_address = None
        if address and not multiprocessing.util.is_abstract_socket_namespace(address):
            try:
                os.unlink(address)
            except OSError:
                pass
    tracker = multiprocessing.resource_tracker._resource_tracker  # type: ignore[attr-defined]
    with tracker._lock:
        _stop_helper(tracker, "_pid", "_fd", deadline)


def _end_at_exit() -> None:
    end_workers(every_child=False)


def _stop_helper(helper: Any, pid_attr: str, fd_attr: str, deadline: float) -> None:
    """Stop a helper process of multiprocessing (the fork server, the resource tracker): it
    leaves when the last holder of its pipe closes it; killed if it is still there past
    ``deadline`` (a worker it forked that held the pipe, say)."""
    pid, fd = getattr(helper, pid_attr), getattr(helper, fd_attr)
    if pid is None:
        return
    setattr(helper, pid_attr, None)
    setattr(helper, fd_attr, None)
    if fd is not None:
        try:
            os.close(fd)
        except OSError:
            pass
    while True:
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:  # not ours to wait for (reaped already)
            return
        if done:
            return
        if time.monotonic() >= deadline:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
            return
        time.sleep(0.005)


def started_child(parent: int) -> None:
    """In a child, first: ignore Ctrl-C, exit when process ``parent`` is gone, and leave what
    it inherited from the fork server (every module preloaded) out of its cyclic GC's reach:
    a full collection scanned all of it (tens of ms in each new agent process), and wrote to
    every page it shares with the server."""
    gc.freeze()
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    def watch() -> None:
        while True:
            time.sleep(1.0)
            try:
                os.kill(parent, 0)
            except (ProcessLookupError, PermissionError):  # gone (or its pid reused)
                os._exit(1)

    threading.Thread(target=watch, name="tracereplay-parent-watch", daemon=True).start()
