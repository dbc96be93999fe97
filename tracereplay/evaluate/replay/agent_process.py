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

The processes are forked from the forkserver (with this module and the replay code already
imported), else spawned; each gets the eval's environment, working directory and ``sys.path``.
They ignore Ctrl-C (the eval decides) and leave when the eval's process is gone.
"""

from __future__ import annotations

import collections
import contextlib
import multiprocessing
import os
import queue
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

from tracereplay.checks import load_check_modules
from tracereplay.errors import TraceReplayError, one_line
from tracereplay.evaluate.outcomes import CaseRun
from tracereplay.evaluate.replay.agent_loader import AgentCallable, load_agent
from tracereplay.evaluate.replay.attempt import Replayer
from tracereplay.evaluate.replay.dispatch import Dispatcher, death_reason
from tracereplay.evaluate.replay.llm import LlmMatch, LlmMode, RecordedCall
from tracereplay.evaluate.replay.preload import PRELOAD
from tracereplay.evaluate.replay.recorded_tools import ToolMatch
from tracereplay.evaluate.runner import (
    Job,
    RunnerOptions,
    RunnerReport,
    error_run,
    exits_contained,
    guarded_attempt,
)
from tracereplay.forkserver import ensure_server, started_child, worker_context
from tracereplay.models import EvalSuite, Run
from tracereplay.sdk import configure, current_setup, flush
from tracereplay.sdk.exporter import SpoolSpanExporter

#: seconds a process gets to leave when the eval ends, before it is killed
STOP_GRACE_S = 5.0


class AgentProcessError(TraceReplayError):
    """The agent could not be loaded in an agent process (or the process died loading it)."""


@dataclass(frozen=True)
class AgentSetup:
    """What an agent process needs before its first case: the agent, the store, the checks."""

    agent: str  # module:attr
    db: Path
    check_modules: tuple[str, ...] = ()


@dataclass(frozen=True)
class ReplayPlan:
    """How every case of the eval is replayed (``Replayer``'s settings, without the agent)."""

    suite: EvalSuite
    eval_run_id: str
    tool_match: ToolMatch = "strict"
    live_tools: bool = False
    timeout_s: float | None = None
    llm: LlmMode = "live"
    llm_match: LlmMatch = "order"
    llm_until: int | None = None  # --llm-until N: a fork at LLM call N
    #: ``service.name`` of the replay runs when the eval sets tracereplay up for the agent
    #: (``trace_replays``): the source runs' service
    service_name: str | None = None


@dataclass(frozen=True)
class CaseInputs:
    """The recordings one case is answered from: its source run, the runs nested under it,
    how their results were encoded, and their LLM calls (``--llm recorded``)."""

    source: Run | None = None
    sub_runs: tuple[Run, ...] = ()
    encodings: Mapping[str, Sequence[str | None]] = field(default_factory=dict)
    llm_calls: tuple[RecordedCall, ...] = ()


# ---------------------------------------------------------------------------- child side
#: a message to an agent process: ("plan", ReplayPlan), ("jobs", slots, [task], [task]) (how
#: many cases the eval counts as running there, the cases to start now, then those to start
#: as soon as one of its cases ends), ("stop",); from it:
#: ("ready", one_at_a_time), ("failed", message), ("results", [(key, CaseRun)])
Task = tuple[int, Job, CaseInputs]


def _child_main(conn: Connection, setup: AgentSetup, env: dict[str, str], parent: int) -> None:
    """An agent process: load the agent, then run the attempts the eval sends, until told to
    stop (or until the eval is gone). A case to start now runs at once in a thread (the main
    thread first; another is started when every one is in a case); a case sent ahead waits
    for the next thread whose case ends, so that no thread waits on the eval between cases.
    Results go back in batches: what finished while the last batch was sent goes in the
    next, after one flush of the spans of them all."""
    started_child(parent)  # Ctrl-C is the eval's to handle; leave when the eval is gone
    os.environ.clear()
    os.environ.update(env)  # the fork server's environment may be older than the eval's
    try:
        replayer_for, one_at_a_time = _load(setup)
    except BaseException as exc:  # noqa: BLE001 - reported to the eval, which raises it
        message = str(exc) if isinstance(exc, TraceReplayError) else _loading_failed(setup, exc)
        conn.send(("failed", message))
        return
    conn.send(("ready", one_at_a_time))  # and whether it takes one case at a time
    todo: queue.SimpleQueue[Task | None] = queue.SimpleQueue()  # what an idle thread takes
    ahead: collections.deque[Task] = collections.deque()  # what a thread takes when its case ends
    done: queue.SimpleQueue[tuple[int, Job, CaseRun] | None] = queue.SimpleQueue()
    plan: list[ReplayPlan] = []
    workers: list[threading.Thread] = []
    # busy: the threads in a case (of 1 + len(workers)); slots: how many the eval counts as
    # running here (its last message said), which busy never passes. A thread whose case
    # ends takes the next one sent ahead; one sent ahead that finds a thread idle starts at
    # once only within the slots (the idle thread's case ended and the eval has not heard
    # yet): a thread idle because the eval gave its place to another process stays idle
    busy, slots = [0], [0]
    lock = threading.Lock()  # busy, slots and ahead change together

    def work() -> None:
        task = todo.get()
        while task is not None:
            key, job, inputs = task
            result = guarded_attempt(replayer_for(plan[0], job, inputs), job)
            with lock:
                if ahead and busy[0] <= slots[0]:
                    task = ahead.popleft()
                else:
                    task = None
                    busy[0] -= 1  # before the eval hears of it and sends the next case
            done.put((key, job, result))
            if task is None:
                task = todo.get()

    def receive() -> None:
        while True:
            try:
                message = conn.recv()
            except (EOFError, OSError):
                break
            if message[0] == "stop":
                break
            if message[0] == "plan":
                plan[:] = [message[1]]
                if trace_replays(setup.db, message[1].service_name):
                    _spool_written_per_case()
                continue
            _, count, now, later = message
            with lock:
                slots[0] = count
            for task in now:
                with lock:
                    busy[0] += 1
                    if busy[0] > 1 + len(workers):
                        name = f"tracereplay-case-{len(workers) + 1}"
                        workers.append(threading.Thread(target=work, name=name, daemon=True))
                        workers[-1].start()
                todo.put(task)
            for task in later:
                with lock:
                    if busy[0] >= min(slots[0], 1 + len(workers)):
                        ahead.append(task)
                        continue
                    busy[0] += 1  # a thread is free already (its case ended meanwhile)
                todo.put(task)
        with lock:
            ahead.clear()  # the eval is done with this process: cases sent ahead stay unrun
            for _ in range(len(workers) + 1):
                todo.put(None)

    def send() -> None:
        ending = False
        while not ending:
            item = done.get()
            batch = []
            while item is not None:
                batch.append(item)
                try:
                    item = done.get_nowait()
                except queue.Empty:
                    break
            else:
                ending = True
            if batch:
                flush()  # the replay runs are in the spool (written, synced at the end) before
                # the eval hears of them: a process killed later keeps them
                _send_results(conn, batch)

    with exits_contained():
        receiver = threading.Thread(target=receive, name="tracereplay-receive", daemon=True)
        sender = threading.Thread(target=send, name="tracereplay-send", daemon=True)
        receiver.start()
        sender.start()
        work()  # the agent runs in the main thread too (one case at a time: only there)
        receiver.join()
        for t in workers:
            t.join()
        done.put(None)
        sender.join()
    _sync_spool()


def _send_results(conn: Connection, batch: list[tuple[int, Job, CaseRun]]) -> None:
    """Send a batch of results; one that cannot be pickled is sent as an ERROR saying so."""
    try:
        conn.send(("results", [(key, result) for key, _, result in batch]))
        return
    except (EOFError, OSError):
        return  # the eval is gone
    except Exception:  # noqa: BLE001 - a value in some result that cannot be pickled
        pass
    for key, job, result in batch:
        try:
            conn.send(("results", [(key, result)]))
        except (EOFError, OSError):
            return
        except Exception as exc:  # noqa: BLE001
            reason = f"the case's result could not be passed to the eval: {one_line(exc)}"
            conn.send(("results", [(key, error_run(job, reason, started=result.started_at))]))


def _load(setup: AgentSetup) -> tuple[Any, bool]:
    """Load the agent and checks; returns ``(plan, job, inputs) -> attempt function``, and
    whether the agent takes one case at a time (``FrameworkAgent.one_case_at_a_time``)."""
    if setup.check_modules:
        load_check_modules(setup.check_modules)
    agent = load_replayed_agent(setup.agent, setup.db)
    one_at_a_time = bool(getattr(agent, "one_case_at_a_time", False))
    return (lambda plan, job, inputs: case_replayer(agent, plan, inputs).attempt), one_at_a_time


def case_replayer(agent: AgentCallable, plan: ReplayPlan, inputs: CaseInputs) -> Replayer:
    """The ``Replayer`` of one case: ``plan``'s settings, answering from ``inputs``."""
    source = inputs.source
    return Replayer(
        agent=agent,
        suite=plan.suite,
        eval_run_id=plan.eval_run_id,
        source_runs={source.run_id: source} if source is not None else {},
        result_encodings=inputs.encodings,
        sub_runs={source.run_id: inputs.sub_runs} if source is not None else {},
        tool_match=plan.tool_match,
        live_tools=plan.live_tools,
        timeout_s=plan.timeout_s,
        llm=plan.llm,
        llm_match=plan.llm_match,
        llm_until=plan.llm_until,
        llm_calls={source.run_id: inputs.llm_calls} if source is not None else {},
    )


def in_process_attempts(
    agent: AgentCallable, plan: ReplayPlan, inputs_for: Callable[[Job], CaseInputs]
) -> Callable[[Job], CaseRun]:
    """``--in-process``: the attempt function that replays each case in this process."""
    return lambda job: case_replayer(agent, plan, inputs_for(job)).attempt(job)


def load_replayed_agent(spec: str, db: Path) -> AgentCallable:
    """Import the agent (its replays are traced by ``trace_replays``, once the plan says how)."""
    return load_agent(spec)


def trace_replays(db: Path, service_name: str | None) -> bool:
    """Send the spans of the agent's runs to the store ``db``, as service ``service_name`` (the
    source runs'), unless the agent set up tracereplay itself to write there or elsewhere over
    OTLP (its runs then carry its own service). Called before the first attempt, after the
    agent was imported: an agent that calls ``configure()`` at import keeps its setup.
    Whether it set tracereplay up."""
    setup = current_setup()
    if setup is None or (setup.destination == "spool" and setup.db_path != db):
        configure(service_name=service_name, db=db)
        return True
    return False


def _spool_written_per_case() -> None:
    """An agent process's spool is written after each case but synced to disk once, when the
    process stops (``_sync_spool``): an ``fsync`` per case cost more than the case (about 5 ms
    of waiting against 1 ms of work for a fast agent). Written is what a killed process needs
    (the kernel has the data); the sync is for the machine going down, and the eval's results
    reach the store's disk in batches too."""
    exporter = _spool_exporter()
    if exporter is not None:
        exporter.durable = False


def _sync_spool() -> None:
    exporter = _spool_exporter()
    if exporter is not None:
        exporter.sync()


def _spool_exporter() -> SpoolSpanExporter | None:
    setup = current_setup()
    exporter = setup.exporter if setup is not None else None
    return exporter if isinstance(exporter, SpoolSpanExporter) else None


def _loading_failed(setup: AgentSetup, exc: BaseException) -> str:
    return f"--agent '{setup.agent}': loading it failed: {type(exc).__name__}: {one_line(exc)}"


# ---------------------------------------------------------------------------- eval side
class AgentProcess:
    """One agent process, seen from the eval: its pipe, and the cases it runs now."""

    def __init__(self, ctx: multiprocessing.context.BaseContext, setup: AgentSetup) -> None:
        self.conn, child = ctx.Pipe()
        self.process: BaseProcess = ctx.Process(  # type: ignore[attr-defined]
            target=_child_main,
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

    def loaded(self, one_at_a_time: Any) -> None:
        """It said it is ready (its ``ready`` message), and whether one case at a time."""
        self.ready, self.one_at_a_time = True, bool(one_at_a_time)
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
