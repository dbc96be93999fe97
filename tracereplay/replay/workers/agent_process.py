"""Replay attempts in child processes: whatever the agent does to its process ends its case only.

An agent can end the interpreter it runs in: a segmentation fault in native code, ``abort()``,
the kernel's OOM killer, a hang no thread can interrupt. So a replay eval runs the agent in
*agent processes*: each imports the agent once (``--agent module:attr``), sends its spans to
the store like any agent, and runs one case attempt at a time for the eval, which keeps the
store, the runner and the results. When a process dies in the middle of a case, that case is
an ERROR naming the signal or exit code ("the agent's process was killed by signal SIGSEGV
(Segmentation fault)"), a new process takes its place and the other cases run on. A case past
its ``--timeout`` is ended the same way: its process is killed (a hung agent no longer keeps
running in an abandoned thread).

This module is the eval's side: starting the processes, sending them cases (``dispatch``);
the messages both sides use are ``protocol``'s. What a process runs is ``agent_child``, which the eval does not import. The
processes are forked from the forkserver (with ``agent_child`` and the replay code already
imported), else spawned; each gets the eval's environment, working directory and ``sys.path``.
They ignore Ctrl-C (the eval decides) and leave when the eval's process is gone.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import threading
import time
from collections.abc import Callable, Sequence
from multiprocessing.process import BaseProcess
from typing import TYPE_CHECKING, Any

from tracereplay.errors import TraceReplayError
from tracereplay.forkserver import ensure_server, worker_context
from tracereplay.replay.workers.dispatch import Dispatcher, death_reason
from tracereplay.replay.workers.preload import PRELOAD
from tracereplay.replay.workers.protocol import AgentSetup, CaseInputs, Ready, ReplayPlan, Task
from tracereplay.scoring.outcomes import CaseRun
from tracereplay.scoring.runner import (
    Job,
    RunnerOptions,
    RunnerReport,
)

if TYPE_CHECKING:  # a Literal only; its module imports the SDK, the agent processes' part
    pass

#: seconds a process gets to leave when the eval ends, before it is killed
STOP_GRACE_S = 5.0


class AgentProcessError(TraceReplayError):
    """The agent could not be loaded in an agent process (or the process died loading it)."""


def _run_child(*args: Any) -> None:
    """An agent process's target (``agent_child.child_main``), imported only there."""
    from tracereplay.replay.workers.agent_child import child_main

    child_main(*args)


# ---------------------------------------------------------------------------- eval side
class AgentProcess:
    """One agent process, seen from the eval: its pipe, and the cases it runs now."""

    def __init__(self, ctx: multiprocessing.context.BaseContext, setup: AgentSetup) -> None:
        self.conn, child = ctx.Pipe()
        self.process: BaseProcess = ctx.Process(  # type: ignore[attr-defined]
            target=_run_child,
            args=(child, setup, dict(os.environ), os.getpid()),
            name="tracereplay-agent",
            daemon=True,
        )
        self.started_at = time.monotonic()
        self.process.start()
        child.close()
        self.ready = False
        #: seconds from its start to the agent loaded (None until it is)
        self.load_s: float | None = None
        #: the agent it loaded takes one case at a time (said when it is ready)
        self.one_at_a_time = False
        self.notes: tuple[str, ...] = ()  # what its ``ready`` message said of the agent
        self.planned: ReplayPlan | None = None
        #: the cases running in it (sent to start now, or started after one of these ended),
        #: by key, and those sent ahead, to start as one running ends (``dispatch``'s tasks)
        self.running: dict[int, Any] = {}
        self.queued: dict[int, Any] = {}

    def wait_ready(self, setup: AgentSetup, *, block: bool = True) -> bool:
        """Wait until the agent is loaded (``AgentProcessError`` when it cannot be);
        ``block=False``: whether it is, without waiting."""
        if self.ready:
            return True
        if not block and not self.conn.poll():
            return False
        try:
            kind, message = self.conn.recv()
        except (EOFError, OSError):
            self.process.join(STOP_GRACE_S)
            reason = death_reason(self.process.exitcode)
            raise AgentProcessError(
                f"--agent '{setup.agent}': loading it failed: {reason}"
            ) from None
        if kind != "ready":
            raise AgentProcessError(message)
        self.loaded(message)
        return True

    def loaded(self, ready: Ready) -> None:
        """It said it is ready (its ``ready`` message): whether one case at a time, notes."""
        self.ready, self.one_at_a_time = True, ready.one_at_a_time
        self.notes = ready.notes
        self.load_s = time.monotonic() - self.started_at

    def send(self, plan: ReplayPlan, tasks: list[Task], ahead: list[Task]) -> bool:
        """Send attempts to start now and ahead (``plan`` first, the first time), with the
        number of cases the eval counts as running here (``running``, ``tasks`` included);
        False when the process is gone."""
        try:
            if self.planned is not plan:
                self.conn.send(("plan", plan))
                self.planned = plan
            self.conn.send(("jobs", len(self.running), tasks, ahead))
        except OSError:  # it died between cases (a thread of the agent's, say)
            return False
        return True

    def stop(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.conn.send(("stop",))

    def kill(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.process.join(STOP_GRACE_S)
        self.conn.close()


def usable_cores() -> int:
    """The cores this process may run on (its affinity where the platform says)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


class AgentProcesses:
    """The eval's agent processes: ``run(jobs, options, on_result)`` runs the cases in them.

    ``concurrency`` cases at once take up to ``min(concurrency, cores)`` processes, which share
    the cases running (a thread each): a case waiting on its model or tools costs a thread, not
    a process, and the cores are all used. An agent that takes one case at a time (it keeps a
    run's conversation on itself) gets up to a process per case running instead. The first
    starts (and loads the agent) as the eval begins, while it reads the store; the dispatcher
    starts the others when the cases waiting are worth what loading the agent costs
    (``dispatch.Dispatcher``). A context manager: leaving it stops the processes (those still
    in a case are killed).
    """

    def __init__(self, setup: AgentSetup, concurrency: int) -> None:
        self.setup = setup
        self.concurrency = max(1, concurrency)
        self.count = min(self.concurrency, usable_cores())
        self._ctx = worker_context(PRELOAD)
        self._all: list[AgentProcess] = []
        self._lock = threading.Lock()
        self.plan: ReplayPlan | None = None
        self.inputs: Callable[[Job], CaseInputs] | None = None
        self._started: list[AgentProcess] = []
        self._starting: threading.Thread | None = None

    def __enter__(self) -> AgentProcesses:
        # the first process starts (the forkserver too, the first time) and loads the agent
        # while the eval reads the store; more only when the cases are worth it (dispatch)
        def start() -> None:
            self._started.append(self.start_one())

        self._starting = threading.Thread(target=start, name="tracereplay-agent-start")
        self._starting.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def wait_ready(self, *, block: bool = True) -> bool:
        """Wait until the first process has loaded the agent (raises when it could not);
        ``block=False``: whether it has, without waiting."""
        first = self.started() if block else list(self._started[:1])
        if not block and not first:
            return False  # not started yet
        if not first:
            raise AgentProcessError(f"--agent '{self.setup.agent}': no agent process could start")
        return first[0].wait_ready(self.setup, block=block)

    def notes(self) -> tuple[str, ...]:
        """What the first process to load the agent said of it (its ``Ready`` notes)."""
        return next((p.notes for p in self._started if p.ready), ())

    def start(self, plan: ReplayPlan, inputs_for: Callable[[Job], CaseInputs]) -> None:
        """Run cases from now on as ``plan`` says; ``inputs_for(job)`` gives each job's
        ``CaseInputs``."""
        self.plan = plan
        self.inputs = inputs_for

    def started(self) -> list[AgentProcess]:
        """The process started as the eval began (once it is)."""
        if self._starting is not None:
            self._starting.join()
        return list(self._started)

    def run(
        self,
        jobs: Sequence[Job],
        options: RunnerOptions,
        on_result: Callable[[CaseRun], None],
    ) -> RunnerReport:
        """Run ``jobs`` in the processes (``dispatch.Dispatcher``); ``on_result`` is called in
        this thread for each finished one."""
        return Dispatcher(self, jobs, options, on_result).run()

    def start_one(self) -> AgentProcess:
        """Start a process (it loads the agent, then says it is ready)."""
        ensure_server()  # the fork server, started with the main script preloaded
        process = AgentProcess(self._ctx, self.setup)
        with self._lock:
            self._all.append(process)
        return process

    def retire(self, process: AgentProcess) -> None:
        """Kill ``process`` (gone already, or in a case no longer wanted)."""
        process.kill()
        with self._lock, contextlib.suppress(ValueError):
            self._all.remove(process)

    def close(self) -> None:
        """Ask every idle process to leave (killed if it does not within a few seconds); one
        still in a case (the eval was interrupted) is killed now."""
        if self._starting is not None:
            self._starting.join()
        with self._lock:
            processes = list(self._all)
        for p in processes:
            if p.running or p.queued:
                p.kill()
            else:
                p.stop()
        deadline = time.monotonic() + STOP_GRACE_S
        for p in processes:
            p.process.join(max(0.0, deadline - time.monotonic()))
            p.kill()
