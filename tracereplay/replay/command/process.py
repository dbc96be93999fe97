"""An agent command run for one case (its argv split by ``evaluate/settings.command_argv``, no
shell): the case's query on standard input, in place of every ``{query}`` in its arguments and
in ``$TRACEREPLAY_QUERY``; its answer is its standard output, stripped.

It runs in a session of its own so that a timeout ends it with everything it started (``npm``
starting ``node``, a shell script's children): the whole process group is killed. Commands
still running when the eval's process exits (Ctrl-C) are killed too (``atexit``): no process
outlives the command that started it.
"""

from __future__ import annotations

import atexit
import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

#: the argument a command may hold where the query goes
QUERY_FIELD = "{query}"
QUERY_ENV = "TRACEREPLAY_QUERY"
#: how much of standard error a failure's reason keeps
TAIL_CHARS = 300

#: lines of a traceback that are not its message
_TRACEBACK = re.compile(r"Traceback \(most recent call last\)|Node\.js v\d|\S+:\d+$")

_running: set[int] = set()
_lock = threading.Lock()


def with_query(argv: Sequence[str], query: str) -> list[str]:
    """``argv`` with every ``{query}`` replaced by the query."""
    return [arg.replace(QUERY_FIELD, query) for arg in argv]


@dataclass(frozen=True)
class Finished:
    """How the command ended: its exit status (None: it could not start, or timed out)."""

    returncode: int | None
    stdout: str
    stderr: str
    duration_ms: float
    timed_out: bool = False
    #: why it could not start (``FileNotFoundError``...), else ""
    start_error: str = ""

    @property
    def answer(self) -> str:
        return self.stdout.strip()

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out

    def stderr_tail(self) -> str:
        """The last lines of standard error that are not a traceback's (indented frames and
        source lines, Python's ``Traceback ...`` header, Node's ``file:line`` of the throw and
        its version line): the exception's message."""
        lines = [
            line.strip()
            for line in self.stderr.splitlines()
            if line.strip() and not line[:1].isspace() and not _TRACEBACK.match(line)
        ]
        tail = "; ".join(lines[-2:])
        return tail if len(tail) <= TAIL_CHARS else "..." + tail[-TAIL_CHARS:]


def run_command(
    argv: Sequence[str],
    query: str,
    env: Mapping[str, str],
    timeout_s: float | None,
    cwd: str | None = None,
) -> Finished:
    """Run the command once; never raises for what the command does."""
    t0 = time.perf_counter()
    try:
        proc = subprocess.Popen(
            with_query(argv, query),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**env, QUERY_ENV: query},
            cwd=cwd,
            start_new_session=True,
        )
    except OSError as exc:
        return Finished(None, "", "", 0.0, start_error=f"{type(exc).__name__}: {exc}")
    with _lock:
        _running.add(proc.pid)
    timed_out = False
    try:
        try:
            out, err = proc.communicate(query.encode(), timeout=timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill_group(proc.pid)
            out, err = proc.communicate()
    finally:
        with _lock:
            _running.discard(proc.pid)
        if proc.poll() is None:
            _kill_group(proc.pid)
            proc.wait()
    return Finished(
        None if timed_out else proc.returncode,
        out.decode("utf-8", "replace"),
        err.decode("utf-8", "replace"),
        (time.perf_counter() - t0) * 1000,
        timed_out=timed_out,
    )


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)  # its session's group: pid is the group's id
    except (ProcessLookupError, PermissionError):
        pass


@atexit.register
def end_commands() -> None:
    """Kill every command still running (the eval ended while cases ran)."""
    with _lock:
        pids = list(_running)
        _running.clear()
    for pid in pids:
        _kill_group(pid)
