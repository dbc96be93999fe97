"""Where async replay attempts run, and their timeout.

A framework agent's clients (HTTP pools, locks) bind to the event loop they first ran on, so
every framework attempt of the process runs on one loop in a daemon thread
(``framework_loop()``); other async agents get a loop of their own per attempt and only the
timeout (``with_timeout``). Either way an attempt that does not finish in time is cancelled and
raises ``AttemptTimedOut``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import threading
from typing import Any


class AttemptTimedOut(Exception):
    """An async agent did not finish within the timeout (it was cancelled)."""


class LoopThread:
    """One event loop in a daemon thread, shared by every framework replay attempt."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        thread = threading.Thread(
            target=self.loop.run_forever, name="tracereplay-replay-loop", daemon=True
        )
        thread.start()

    def run(self, coro: Any, timeout_s: float | None) -> Any:
        """Run ``coro`` on the loop in the caller's context (its contextvars: the interceptor,
        the replay marks, the current span); cancelled after ``timeout_s``."""
        ctx = contextvars.copy_context()
        done: concurrent.futures.Future[Any] = concurrent.futures.Future()
        holder: list[asyncio.Task[Any]] = []

        def start() -> None:
            task = self.loop.create_task(coro, context=ctx)
            holder.append(task)

            def finished(t: asyncio.Task[Any]) -> None:
                if t.cancelled():
                    done.set_exception(AttemptTimedOut(f"timed out after {timeout_s:g}s"))
                elif t.exception() is not None:
                    done.set_exception(t.exception())  # type: ignore[arg-type]
                else:
                    done.set_result(t.result())

            task.add_done_callback(finished)

        self.loop.call_soon_threadsafe(start)
        try:
            return done.result(timeout_s)
        except concurrent.futures.TimeoutError:
            if holder:
                self.loop.call_soon_threadsafe(holder[0].cancel)
            raise AttemptTimedOut(f"timed out after {timeout_s:g}s") from None


_lock = threading.Lock()
_loop_thread: LoopThread | None = None


def framework_loop() -> LoopThread:
    """The process's loop thread for framework attempts (started on first use)."""
    global _loop_thread
    with _lock:
        if _loop_thread is None:
            _loop_thread = LoopThread()
        return _loop_thread


async def with_timeout(coro: Any, timeout_s: float) -> Any:
    """Await ``coro``, cancelled after ``timeout_s`` (then ``AttemptTimedOut``); a
    ``TimeoutError`` the agent raises itself passes through."""
    loop = asyncio.get_running_loop()
    start = loop.time()
    try:
        return await asyncio.wait_for(coro, timeout_s)
    except TimeoutError:
        if loop.time() - start < timeout_s:
            raise  # the agent's own TimeoutError, not ours
        raise AttemptTimedOut(f"timed out after {timeout_s:g}s") from None
