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

import contextlib
import multiprocessing
import os
import queue
import signal
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

from tracereplay.checks import load_check_modules
from tracereplay.errors import TraceReplayError, one_line
from tracereplay.evaluate.outcomes import CaseRun
from tracereplay.evaluate.replay.agent_loader import AgentCallable, load_agent
from tracereplay.evaluate.replay.attempt import Replayer
from tracereplay.evaluate.replay.llm import LlmMatch, LlmMode, RecordedCall
from tracereplay.evaluate.replay.preload import PRELOAD
from tracereplay.evaluate.replay.recorded_tools import ToolMatch
from tracereplay.evaluate.runner import Job, error_run, exits_contained, guarded_attempt
from tracereplay.forkserver import ensure_server, started_child, worker_context
from tracereplay.models import EvalSuite, Run
from tracereplay.sdk import configure, current_setup, flush
from tracereplay.sdk.exporter import SpoolSpanExporter

#: seconds a process gets past ``--timeout`` to end the attempt itself (an async agent is
#: cancelled in the process, which keeps the spans it made) before it is killed
TIMEOUT_GRACE_S = 1.0
#: seconds between looks at whether a process in a case is still alive
POLL_S = 0.5
#: seconds a process gets to leave when the eval ends, before it is killed
STOP_GRACE_S = 5.0
#: agent processes started at the same time (beyond the first)
STARTERS = 4


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
def _child_main(conn: Connection, setup: AgentSetup, env: dict[str, str], parent: int) -> None:
    """An agent process: load the agent, then run the attempts the eval sends until told to
    stop (or until the eval is gone)."""
    started_child(parent)  # Ctrl-C is the eval's to handle; leave when the eval is gone
    os.environ.clear()
    os.environ.update(env)  # the fork server's environment may be older than the eval's
    try:
        replayer_for = _load(setup)
    except BaseException as exc:  # noqa: BLE001 - reported to the eval, which raises it
        message = str(exc) if isinstance(exc, TraceReplayError) else _loading_failed(setup, exc)
        conn.send(("failed", message))
        return
    conn.send(("ready", None))
    plan: ReplayPlan | None = None
    with exits_contained():
        while True:
            try:
                message = conn.recv()
            except (EOFError, OSError):
                return
            if message[0] == "stop":
                flush()
                _sync_spool()
                return
            if message[0] == "plan":
                plan = message[1]
                if trace_replays(setup.db, plan.service_name):
                    _spool_written_per_case()
                continue
            _, job, inputs = message
            assert plan is not None
            attempt = replayer_for(plan, job, inputs)
            result = guarded_attempt(attempt, job)
            flush()  # the replay run is in the spool (written, synced at the end) before the
            # eval hears of it: a process killed later keeps it
            try:
                conn.send(("result", result))
            except Exception as exc:  # a value in the result that cannot be pickled
                reason = f"the case's result could not be passed to the eval: {one_line(exc)}"
                conn.send(("result", error_run(job, reason, started=result.started_at)))


def _load(setup: AgentSetup) -> Any:
    """Load the agent and checks; returns ``(plan, job, inputs) -> attempt function``."""
    if setup.check_modules:
        load_check_modules(setup.check_modules)
    agent = load_replayed_agent(setup.agent, setup.db)
    return lambda plan, job, inputs: case_replayer(agent, plan, inputs).attempt


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
def death_reason(exitcode: int | None) -> str:
    """Why an agent process ended in the middle of a case, from its exit code."""
    if exitcode is not None and exitcode < 0:
        try:
            sig = signal.Signals(-exitcode)
        except ValueError:
            return f"the agent's process was killed by signal {-exitcode}"
        description = signal.strsignal(sig) or ""
        suffix = f" ({description})" if description and description != sig.name else ""
        return f"the agent's process was killed by signal {sig.name}{suffix}"
    return f"the agent's process exited with code {exitcode}"


class _AgentProcess:
    """One agent process, seen from the eval."""

    def __init__(self, ctx: multiprocessing.context.BaseContext, setup: AgentSetup) -> None:
        self.conn, child = ctx.Pipe()
        self.process: BaseProcess = ctx.Process(  # type: ignore[attr-defined]
            target=_child_main,
            args=(child, setup, dict(os.environ), os.getpid()),
            name="tracereplay-agent",
            daemon=True,
        )
        self.process.start()
        child.close()
        self.ready = False
        self.planned: ReplayPlan | None = None

    def wait_ready(self, setup: AgentSetup) -> None:
        """Block until the agent is loaded; ``AgentProcessError`` when it cannot be."""
        if self.ready:
            return
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
        self.ready = True

    def run(self, plan: ReplayPlan, job: Job, inputs: CaseInputs, deadline_s: float | None) -> Any:
        """Send one attempt; its ``CaseRun``, or the reason the process ended without one."""
        try:
            if self.planned is not plan:
                self.conn.send(("plan", plan))
                self.planned = plan
            self.conn.send(("job", job, inputs))
        except OSError:  # it died between cases (a thread of the agent's, say)
            self.process.join(STOP_GRACE_S)
            return death_reason(self.process.exitcode)
        end = time.monotonic() + deadline_s if deadline_s is not None else None
        # waits in slices, watching the process too: a child the agent started may hold the
        # pipe open after the agent's process died, and then no end of file ever comes
        while not self.conn.poll(
            POLL_S if end is None else max(0.0, min(POLL_S, end - time.monotonic()))
        ):
            if not self.process.is_alive():
                self.process.join(STOP_GRACE_S)
                return death_reason(self.process.exitcode)
            if end is not None and time.monotonic() >= end:
                self.kill()
                return None
        try:
            kind, result = self.conn.recv()
        except (EOFError, OSError):
            self.process.join(STOP_GRACE_S)
            return death_reason(self.process.exitcode)
        assert kind == "result"
        return result

    def stop(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.conn.send(("stop",))

    def kill(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.process.join(STOP_GRACE_S)
        self.conn.close()


class AgentProcesses:
    """The eval's agent processes: ``attempt(job)`` is the runner's attempt function.

    A context manager: leaving it stops the processes (those still in a case are killed).
    """

    def __init__(self, setup: AgentSetup, count: int) -> None:
        self.setup = setup
        self.count = max(1, count)
        self._ctx = worker_context(PRELOAD)
        self._idle: queue.SimpleQueue[_AgentProcess] = queue.SimpleQueue()
        self._all: list[_AgentProcess] = []
        self._busy: set[_AgentProcess] = set()
        self._lock = threading.Lock()
        self._plan: ReplayPlan | None = None
        self._inputs: Callable[[Job], CaseInputs] | None = None
        self._closed = False
        self._first: _AgentProcess | None = None
        self._starting: threading.Thread | None = None

    def __enter__(self) -> AgentProcesses:
        # the first process starts (the forkserver too, the first time) and loads the agent
        # while the eval reads the store
        def first() -> None:
            self._first = self._start()
            self._idle.put(self._first)

        self._starting = threading.Thread(target=first, name="tracereplay-agent-start")
        self._starting.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def wait_ready(self) -> None:
        """Block until the first process has loaded the agent (raises when it could not)."""
        assert self._starting is not None
        self._starting.join()
        if self._first is None:
            raise AgentProcessError(f"--agent '{self.setup.agent}': no agent process could start")
        self._first.wait_ready(self.setup)

    def start(self, plan: ReplayPlan, inputs_for: Callable[[Job], CaseInputs], jobs: int) -> None:
        """Run cases from now on as ``plan`` says; ``inputs_for(job)`` gives each job's
        ``CaseInputs``. The rest of the processes ``jobs`` can use start in the background
        (cases start on the first one meanwhile)."""
        self._plan = plan
        self._inputs = inputs_for
        more = min(self.count, jobs) - len(self._all)

        left = [more]
        lock = threading.Lock()

        def rest() -> None:
            while not self._closed:
                with lock:
                    if not left[0]:
                        return
                    left[0] -= 1
                self._idle.put(self._start())

        def starters() -> None:
            # a few starts at once: each waits on its round trip to the fork server, which
            # forks the next one meanwhile (one after the other, 16 processes took a good part
            # of a 50 ms agent's whole eval to come online)
            threads = [
                threading.Thread(target=rest, name="tracereplay-agent-start")
                for _ in range(min(STARTERS, more))
            ]
            for t in threads:
                t.start()
            for t in threads:
                t.join()

        if self._starting is not None:
            self._starting.join()
        if more > 0:
            self._starting = threading.Thread(target=starters, name="tracereplay-agent-start")
            self._starting.start()

    def attempt(self, job: Job) -> CaseRun:
        """One attempt of ``job`` in an agent process (never raises for what the agent does)."""
        assert self._plan is not None and self._inputs is not None
        started = datetime.now(UTC)
        t0 = time.perf_counter()
        process = self._idle.get()
        if process.ready and not process.process.is_alive():  # it died between cases
            process.kill()
            process = self._start()
        with self._lock:
            self._busy.add(process)
        try:
            process.wait_ready(self.setup)
        except AgentProcessError as exc:  # a replacement that could not load the agent
            self._idle.put(self._start())
            return error_run(job, str(exc), started=started)
        timeout = self._plan.timeout_s
        deadline = timeout + TIMEOUT_GRACE_S if timeout is not None else None
        try:
            outcome = process.run(self._plan, job, self._inputs(job), deadline)
        except BaseException:  # Ctrl-C while waiting: the case is abandoned with its process
            process.kill()
            raise
        finally:
            with self._lock:
                self._busy.discard(process)
        if isinstance(outcome, CaseRun):
            self._idle.put(process)
            return outcome
        # the process is gone: killed past the timeout, or died in the case
        process.kill()
        if not self._closed:
            self._idle.put(self._start())
        reason = outcome if outcome is not None else f"timed out after {timeout:g}s"
        return error_run(
            job, reason, started=started, duration_ms=(time.perf_counter() - t0) * 1000
        )

    def close(self) -> None:
        """Ask every idle process to leave (killed if it does not within a few seconds); one
        still in a case (the eval was interrupted) is killed now."""
        self._closed = True  # the background start stops starting more
        if self._starting is not None:
            self._starting.join()
        with self._lock:
            processes = list(self._all)
            busy = list(self._busy)
        for p in busy:
            p.kill()
        for p in processes:
            p.stop()
        deadline = time.monotonic() + STOP_GRACE_S
        for p in processes:
            p.process.join(max(0.0, deadline - time.monotonic()))
            p.kill()

    def _start(self) -> _AgentProcess:
        ensure_server()  # the fork server, started with the main script preloaded
        process = _AgentProcess(self._ctx, self.setup)
        with self._lock:
            self._all.append(process)
        return process
