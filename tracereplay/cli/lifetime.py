"""No process outlives its command: what ``main()`` does at the start and the end of each.

A command may start worker processes: agent processes (``eval --agent``), ingest workers, and
the fork server they are forked from, with multiprocessing's resource tracker. Each of these
would leave by itself once the command is gone (they watch for it), but a moment *after* it:
so ``end_processes()`` runs when the command returns, however it returns, and waits for every
one of them (``tracereplay.forkserver.end_workers``). ``kill`` (SIGTERM) is taken as Ctrl-C
(``terminate_as_interrupt``): the command stops the way Ctrl-C stops it (an eval keeps its
results so far and is marked ``interrupted``), its processes ended, instead of dying on the
spot and leaving them to find out.
"""

from __future__ import annotations

import atexit
import gc
import importlib.machinery
import os
import signal
import sys
import threading
from collections.abc import Callable
from types import FrameType


def workers_skip_main(entry: Callable[[], None]) -> None:
    """When the program is the ``tracereplay`` console script (its ``__main__`` module holds
    ``entry``, and nothing else a worker could need), give that module the spec of a main
    module run by name (``python -m``), which multiprocessing runs in no worker process and in
    no fork server (a script's top level it runs again in each, in case it defines what they
    run): the CLI's own imports (typer, rich, every command) would cost each agent process
    their CPU, or the fork server as much before its first child."""
    main = sys.modules.get("__main__")
    if main is None or getattr(main, "__spec__", None) is not None:
        return  # python -m tracereplay, or an interpreter without a main module
    if getattr(main, "main", None) is not entry:
        return  # a program of someone's own that calls main(): its module is its business
    main.__spec__ = importlib.machinery.ModuleSpec("__main__", None)


def terminate_as_interrupt() -> None:
    """From now on SIGTERM raises what SIGINT does (``KeyboardInterrupt``, or whatever handler
    the command has put on SIGINT for a while); main thread only, where the default is on."""
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return  # someone (an embedding program) decided already

    def as_interrupt(signum: int, frame: FrameType | None) -> None:
        signal.raise_signal(signal.SIGINT)  # its handler runs as soon as this one returns

    signal.signal(signal.SIGTERM, as_interrupt)


def end_processes() -> None:
    """Wait for every worker process the command started (killed past a few seconds), the fork
    server and the resource tracker: none runs when this returns. Nothing to do (and nothing
    imported) when the command started none."""
    forkserver = sys.modules.get("tracereplay.forkserver")
    if forkserver is None:
        return
    main = threading.current_thread() is threading.main_thread()
    # the command is ending: another Ctrl-C (or kill) must not cut the waiting short
    previous = {s: signal.signal(s, signal.SIG_IGN) for s in _STOPS} if main else {}
    try:
        forkserver.end_workers()
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


_STOPS = (signal.SIGINT, signal.SIGTERM)


def is_the_program(entry: Callable[[], None]) -> bool:
    """Whether this process is the ``tracereplay`` command itself (its console script, or
    ``python -m tracereplay``), whose ``__main__`` holds ``entry`` and nothing else; not a
    program of someone's own that calls it."""
    main = sys.modules.get("__main__")
    if main is None or getattr(main, "main", None) is not entry:
        return False
    spec = getattr(main, "__spec__", None)
    script = os.path.basename(getattr(main, "__file__", None) or "")
    by_name = (getattr(spec, "name", None) or "").split(".") == ["tracereplay", "__main__"]
    return by_name or script in (
        "tracereplay",
        "tracereplay.exe",
        "tracereplay-script.py",
    )


def exit_now(code: object) -> None:
    """End the command as the interpreter would (its other threads waited for, the ``atexit``
    functions run, the output flushed, exit code ``code`` as ``sys.exit`` takes it), without
    tearing down every module it imported (a visible part of a replay eval's end), with the
    store, the workers and every file closed already."""
    for thread in threading.enumerate():
        if thread is not threading.current_thread() and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()
    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code
    else:  # sys.exit("message"): printed, exit 1
        print(code, file=sys.stderr)
        status = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (``| head``): as Python exits then
            status = status or 120
    os._exit(status)


#: what the command built, left for the process's end to free (``keep_until_exit``)
_KEPT: list[object] = []
_keeping = [False]


def keep_objects_until_exit(keep: bool) -> None:
    """Whether ``keep_until_exit`` keeps what it is given: only in the ``tracereplay`` command
    itself, which ends with ``exit_now`` (a program that calls ``main``, or a test's runner,
    frees them as usual)."""
    _keeping[0] = keep


def keep_until_exit(*values: object) -> None:
    """Leave ``values`` (and all they hold) to the process's end, which hands its memory back
    at once, instead of freeing them object by object when the command returns (a big suite
    file's values and cases)."""
    if _keeping[0]:
        _KEPT.extend(values)
        gc.freeze()  # nor are they scanned by the cyclic GC again (a collection took as long)
