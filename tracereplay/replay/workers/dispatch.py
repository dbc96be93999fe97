"""Running cases in agent processes from one thread: what is sent where, and what a death means.

The eval's thread keeps ``--concurrency`` cases running: each case it sends goes to the ready
process running the fewest (several at once go in one message), and it waits on every
process's pipe and exit at the same time (``multiprocessing.connection.wait``): each result
(results come in batches) sends the next case at once. No thread per case or per process in
the eval. Besides the cases it runs, a process holds cases sent ahead (unless
``--fail-fast``), each started the moment one of its cases ends: it never waits for the eval
to hear of a result and answer with the next case, and ``--concurrency`` still bounds the cases
running at once (a case sent ahead counts from when it starts, for ``--timeout`` too). It holds
one per case it runs, and more of quick cases (``ahead_per_case``): a message to a process and
its answer cost more than a trivial agent's case, and cases that take a millisecond each kept
both the eval and the processes waiting on each other.

One process starts as the eval begins; another only when the cases waiting would take longer
than it takes to load the agent (the first process's load time, against how long cases take),
up to one per core (one per case running for an agent that takes one case at a time): three
quick cases of an agent whose framework takes seconds to import run in one process, a
thousand in one per core.

A process that dies takes the cases it was running with it. When it ran one (and held none
ahead), that case is an ERROR naming the signal or exit code; when it held several, no one can
say which of them ended it (one sent ahead may have started as another ended), so each is run
again alone in a process of its own: the one that ends its process then is the ERROR, the
others run on. A case past ``--timeout`` (plus a grace, in which an async agent is cancelled
in its process) has its process killed: the cases in it past their timeout too are ERRORs
"timed out", the others (and those sent ahead) run again. A case that ends ERROR is retried
(``--retries``); ``--fail-fast`` stops sending cases after the first that did not pass; Ctrl-C
stops at once.
"""

from __future__ import annotations

import signal
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from multiprocessing.connection import wait
from multiprocessing.process import BaseProcess
from typing import Any, Protocol

from tracereplay.models import Status
from tracereplay.replay.workers.protocol import AgentSetup, CaseInputs, Ready, ReplayPlan, Task
from tracereplay.scoring.outcomes import CaseRun
from tracereplay.scoring.runner import Job, RunnerOptions, RunnerReport, error_run, job_timeout


class AgentProcess(Protocol):
    """What the dispatcher uses of one agent process (``agent_process.AgentProcess``; a
    protocol, so the two modules do not import each other)."""

    process: BaseProcess
    conn: Any
    ready: bool
    one_at_a_time: bool
    load_s: float | None
    running: dict[int, Any]
    queued: dict[int, Any]

    def loaded(self, ready: Ready) -> None: ...

    def send(self, plan: ReplayPlan, tasks: list[Task], ahead: list[Task]) -> bool: ...


class AgentProcesses(Protocol):
    """What the dispatcher uses of the eval's agent processes (``agent_process.AgentProcesses``)."""

    setup: AgentSetup
    count: int
    plan: ReplayPlan | None
    inputs: Callable[[Job], CaseInputs] | None

    def started(self) -> list[AgentProcess]: ...

    def start_one(self) -> AgentProcess: ...

    def retire(self, process: AgentProcess) -> None: ...


#: seconds a process gets past ``--timeout`` to end the attempt itself (an async agent is
#: cancelled in the process, which keeps the spans it made) before it is killed
TIMEOUT_GRACE_S = 1.0
#: seconds a dead process gets to report its exit code
JOIN_S = 5.0
#: the longest wait for a pipe or an exit (Ctrl-C is seen in between)
POLL_S = 0.5
#: seconds of cases a process holds sent ahead for each case it runs (at least one case), up
#: to ``AHEAD_MOST`` cases: enough quick ones to outlast the eval's answer, never so many that
#: a process left holding them at the end keeps the others idle for long
AHEAD_S = 0.02
AHEAD_MOST = 16
#: seconds a case is seen running (from the eval) before it counts as a slow one, whatever
#: the cases done took: well past the round trip of a batch of results, which can be tens of
#: milliseconds on a busy machine
SLOW_S = 0.25


def ahead_per_case(case_s: float | None) -> int:
    """How many cases a process holds sent ahead for each case it runs, when a case takes
    about ``case_s`` seconds (None: not known yet, as no case has ended): one, or as many as
    take ``AHEAD_S`` together, up to ``AHEAD_MOST``."""
    if case_s is None:
        return 1
    if case_s * AHEAD_MOST <= AHEAD_S:  # (a case of 0 s too)
        return AHEAD_MOST
    return max(1, int(AHEAD_S / case_s))


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


@dataclass
class _Task:
    """One job on its way: its attempt number, and whether it must run alone."""

    key: int
    job: Job
    attempts: int = 1
    alone: bool = False  # it was in a process that died running several cases
    started: datetime | None = None
    t0: float = 0.0  # time.monotonic() when sent


class Dispatcher:
    """Runs ``jobs`` in ``pool``'s processes; ``run()`` returns how the run ended."""

    def __init__(
        self,
        pool: AgentProcesses,
        jobs: Sequence[Job],
        options: RunnerOptions,
        on_result: Callable[[CaseRun], None],
    ) -> None:
        assert pool.plan is not None and pool.inputs is not None
        self.pool = pool
        self.plan = pool.plan
        self.inputs = pool.inputs
        self.options = options
        self.on_result = on_result
        self.total = len(jobs)
        self.todo: deque[_Task] = deque(_Task(i, job) for i, job in enumerate(jobs))
        self.alone: deque[_Task] = deque()
        self.live: list[AgentProcess] = []  # pool processes
        self.solo: AgentProcess | None = None  # the process running a suspect alone
        self.report = RunnerReport()
        self.stopping = False
        self.next_key = len(jobs)
        #: seconds the cases done in a process took, and how many (how long a case takes)
        self.done_s = 0.0
        self.done_n = 0
        #: seconds their attempts took as the processes measured them (start to end, in the
        #: process), and how many: what a case costs without the round trip to the eval
        self.ran_s = 0.0
        self.ran_n = 0

    # ------------------------------------------------------------------ the loop
    def run(self) -> RunnerReport:
        self.live = self.pool.started()
        try:
            while self.report.finished < self.total:
                self._send()
                processes = self._processes()
                if not any(p.running or p.queued for p in processes) and (
                    self.stopping or not processes or not (self.todo or self.alone)
                ):
                    break  # stopped early (or nothing left that could run)
                self._wait(processes)
                self._past_deadline()
        except KeyboardInterrupt:
            self.report.interrupted = True
        self.report.abandoned = [t.job for p in self._processes() for t in p.running.values()]
        self.report.not_run = self.total - self.report.finished
        return self.report

    def _processes(self) -> list[AgentProcess]:
        return [*self.live, self.solo] if self.solo is not None else list(self.live)

    def _running(self) -> int:
        return sum(len(p.running) for p in self._processes())

    def _send(self) -> None:
        """Give every ready process with a free slot the next cases; start processes the
        cases left need (a replacement for one that died, too)."""
        if self.stopping:
            return
        if self.alone:
            if self.solo is None:
                self.solo = self.pool.start_one()
            if self.solo.ready and not self.solo.running:
                self._give(self.solo, [self.alone.popleft()])
        if not self.todo:
            return
        wanted = self._processes_wanted(time.monotonic())
        while len(self.live) < wanted:
            self.live.append(self.pool.start_one())
        room = self.options.concurrency - self._running()
        ready = [p for p in self.live if p.ready]
        # each case to the process running the fewest (while the others still load the
        # agent, the first ready one takes them all)
        takers = [p for p in ready if not (p.one_at_a_time and p.running)]
        given: dict[int, list[_Task]] = {id(p): [] for p in ready}
        load = {id(p): len(p.running) for p in takers}
        for _ in range(min(max(room, 0), len(self.todo))):
            if not takers:
                break
            p = min(takers, key=lambda p: load[id(p)])
            given[id(p)].append(self.todo.popleft())
            load[id(p)] += 1
            if p.one_at_a_time:
                takers.remove(p)
        for p in ready:
            ahead = self._ahead(p, len(p.running) + len(given[id(p)]))
            if given[id(p)] or ahead:
                self._give(p, given[id(p)], ahead)

    def _ahead(self, process: AgentProcess, running: int) -> list[_Task]:
        """The cases to send ``process`` ahead of time, with ``running`` cases running in it:
        ``ahead_per_case`` per case running, while it runs no more than its share of
        ``--concurrency`` (a process that took every case while the others loaded the agent
        is not given more ahead, so that the cases it runs pass to them as its own end)."""
        if self.options.fail_fast or not running:
            return []
        share = -(-self.options.concurrency // max(1, len(self.live)))
        if running > share:
            return []
        count = min(
            running * ahead_per_case(self._ahead_case_s(time.monotonic())) - len(process.queued),
            len(self.todo),
        )
        return [self.todo.popleft() for _ in range(count)]

    # ------------------------------------------------------------------ how many processes
    def _single(self) -> bool:
        """The agent takes one case at a time (a process per case running)."""
        return any(p.one_at_a_time for p in self.live if p.ready)

    def _most(self) -> int:
        """The most processes the cases left could use."""
        count = self.options.concurrency if self._single() else self.pool.count
        queued = sum(len(p.queued) for p in self._processes())
        return min(count, len(self.todo) + self._running() + queued)

    def _processes_wanted(self, now: float) -> int:
        """How many processes the cases left are worth: one, and more only when what the
        waiting cases will take is more than loading the agent in another process takes.

        An agent process costs its agent's import (seconds of CPU for the biggest frameworks)
        before it runs a case, so a second one for a few quick cases only loads the agent
        again. Loading took ``load`` seconds in the first; a case takes about ``case``
        seconds (the mean of those done, at least as long as the oldest one running), so the
        cases waiting will take ``waiting * case`` seconds of one process's time (over the
        ``--concurrency`` threads of a process that runs cases side by side). One process
        more is worth starting for each ``load`` seconds of that (``_work_for``)."""
        most = self._most()
        if most <= 1:
            return most
        load = self._load_s()
        if load is None:
            return 1  # the first one tells what loading costs
        work = len(self.todo) * self._case_s(now)
        n = 1
        while n < most and work >= self._work_for(n, load):
            n += 1
        return n

    def _work_for(self, n: int, load: float) -> float:
        """Seconds of waiting cases (case time x cases) that make an ``n + 1``-th process
        worth starting when ``n`` run: a process running one case at a time adds a case's
        worth of room each, the others share ``--concurrency`` threads' worth of it."""
        return (n + 1) * load if self._single() else n * self.options.concurrency * load

    def _load_s(self) -> float | None:
        """Seconds the first process that loaded the agent took (None: none has yet)."""
        loaded = [p.load_s for p in self.live if p.load_s is not None]
        return max(min(loaded), 1e-3) if loaded else None

    def _oldest_start(self) -> float | None:
        """When the oldest case running was sent (None: none runs)."""
        return min((t.t0 for p in self.live for t in p.running.values()), default=None)

    def _case_s(self, now: float) -> float:
        """Seconds a case takes, as far as can be told yet."""
        mean = self.done_s / self.done_n if self.done_n else 0.0
        oldest = self._oldest_start()
        return max(mean, now - oldest) if oldest is not None else mean

    def _ahead_case_s(self, now: float) -> float | None:
        """Seconds a case takes, for sending cases ahead (None: none has ended yet): the
        attempts' own mean as the processes measured them, or, once a case has been seen
        running for longer than ``SLOW_S``, that long (slow cases: one ahead each).

        Not the eval's own view (``_case_s``): results come back in batches, so a quick case
        seems to run from the last batch to the next, and the oldest case running seems to run
        a whole round trip. Quick cases would be taken for slow ones, too few sent ahead, and
        the agent processes left waiting for their next cases."""
        if not self.ran_n:
            return None
        oldest = self._oldest_start()
        if oldest is not None and now - oldest > SLOW_S:
            return now - oldest
        return self.ran_s / self.ran_n

    def _next_look(self, now: float) -> float | None:
        """Seconds until the oldest case running, still running, would make one more process
        worth starting (None: no more could be)."""
        load, waiting, n = self._load_s(), len(self.todo), len(self.live)
        oldest = self._oldest_start()
        if load is None or not waiting or n >= self._most() or oldest is None:
            return None
        return max(0.001, oldest + self._work_for(n, load) / waiting - now)

    def _give(self, process: AgentProcess, tasks: list[_Task], ahead: Sequence[_Task] = ()) -> None:
        """Send ``process`` ``tasks`` to start now and ``ahead`` to start as its cases end."""
        started, t0 = datetime.now(UTC), time.monotonic()
        for task in tasks:
            task.started, task.t0 = started, t0
            process.running[task.key] = task
        for task in ahead:
            task.started, task.t0 = started, t0  # until it starts (``_started_next``)
            process.queued[task.key] = task
        now = [(t.key, t.job, self.inputs(t.job)) for t in tasks]
        later = [(t.key, t.job, self.inputs(t.job)) for t in ahead]
        if not process.send(self.plan, now, later):
            self._died(process)

    @staticmethod
    def _started_next(process: AgentProcess) -> None:
        """One of ``process``'s cases ended, so the first case sent to it ahead started then
        (its thread took it): it runs from now, as far as the eval can tell."""
        if process.queued:
            key = next(iter(process.queued))
            task = process.queued.pop(key)
            task.started, task.t0 = datetime.now(UTC), time.monotonic()
            process.running[key] = task

    def _wait(self, processes: list[AgentProcess]) -> None:
        timeout = POLL_S
        now = time.monotonic()
        look = self._next_look(now)
        if look is not None:
            timeout = min(timeout, look)
        limit = self.options.timeout_s
        if limit is not None:
            for p in processes:
                for task in p.running.values():
                    own = job_timeout(limit, task.job) or limit
                    timeout = min(timeout, max(0.0, task.t0 + own + TIMEOUT_GRACE_S - now))
        by_handle: dict[Any, AgentProcess] = {}
        for p in processes:
            by_handle[p.conn] = p
            by_handle[p.process.sentinel] = p
        seen: set[int] = set()
        for handle in wait(list(by_handle), timeout):
            p = by_handle[handle]
            if id(p) not in seen:
                seen.add(id(p))
                self._read(p)

    # ------------------------------------------------------------------ what a process says
    def _read(self, process: AgentProcess) -> None:
        """Take every message waiting on ``process``'s pipe; a process gone is a death."""
        try:
            while process.conn.poll():
                self._message(process, process.conn.recv())
        except (EOFError, OSError):
            self._died(process)
            return
        if not process.process.is_alive():
            self._died(process)

    def _message(self, process: AgentProcess, message: tuple[Any, ...]) -> None:
        kind = message[0]
        if kind == "ready":
            process.loaded(message[1])
        elif kind == "failed":  # a replacement that could not load the agent
            alone = process is self.solo
            self._drop(process)
            self._load_failed(message[1], alone)
        elif kind == "results":
            now = time.monotonic()
            for key, result in message[1]:
                task = process.running.pop(key, None)
                if task is None:  # sent ahead, it found a thread free and ran at once
                    task = process.queued.pop(key, None)
                else:
                    self._started_next(process)
                if task is not None:
                    self.done_s += now - task.t0
                    self.done_n += 1
                    if result.started_at is not None and result.finished_at is not None:
                        self.ran_s += (result.finished_at - result.started_at).total_seconds()
                        self.ran_n += 1
                    self._finish(task, result)

    def _finish(self, task: _Task, result: CaseRun) -> None:
        """A task's attempt ended with ``result``: retried when it is an ERROR and retries are
        left, else handed over."""
        if result.status is Status.ERROR and task.attempts <= self.options.retries:
            self.todo.appendleft(_Task(self._key(), task.job, task.attempts + 1))
            return
        if task.attempts > 1:
            result = result.model_copy(update={"attempts": task.attempts})
        self.report.finished += 1
        self.on_result(result)
        if self.options.fail_fast and result.status is not Status.PASSED:
            self.report.stopped = self.stopping = True

    def _key(self) -> int:
        self.next_key += 1
        return self.next_key

    # ------------------------------------------------------------------ deaths and timeouts
    def _died(self, process: AgentProcess) -> None:
        """``process`` ended: its one case is an ERROR saying how; several are each run again
        alone."""
        if process not in self._processes():
            return
        alone = process is self.solo
        process.process.join(JOIN_S)
        reason = death_reason(process.process.exitcode)
        running, ahead = self._retire(process)
        tasks = running + ahead
        if not process.ready:
            # it died loading the agent: a case says so (a process that cannot load the agent
            # at all stops the eval before any case runs: ``AgentProcesses.wait_ready``)
            self._load_failed(f"--agent '{self.pool.setup.agent}': loading it failed: {reason}",
                              alone)  # fmt: skip
        elif len(tasks) == 1:
            [task] = tasks
            duration = (time.monotonic() - task.t0) * 1000
            started = task.started or datetime.now(UTC)
            self._finish(task, error_run(task.job, reason, started=started, duration_ms=duration))
        else:
            self.alone.extendleft(_Task(self._key(), t.job, t.attempts, alone=True) for t in tasks)

    def _load_failed(self, message: str, alone: bool) -> None:
        """A process started for more cases could not load the agent: the next case is an
        ERROR saying so (so that an agent failing that way ends the eval, case by case)."""
        waiting = self.alone if alone else self.todo
        if waiting:
            task = waiting.popleft()
            self._finish(task, error_run(task.job, message, started=datetime.now(UTC)))

    def _past_deadline(self) -> None:
        """Kill each process with a case past its timeout and grace; the cases in it past their
        timeout are ERRORs, the others run again."""
        limit = self.options.timeout_s
        if limit is None:
            return
        now = time.monotonic()
        for p in self._processes():
            if not any(
                now >= t.t0 + (job_timeout(limit, t.job) or limit) + TIMEOUT_GRACE_S
                for t in p.running.values()
            ):
                continue
            tasks, ahead = self._retire(p)
            for task in reversed(ahead):  # not started, as far as the eval can tell
                self._run_again(task)
            for task in tasks:
                own = job_timeout(limit, task.job) or limit
                if now - task.t0 >= own:
                    reason = f"timed out after {own:g}s"
                    started = task.started or datetime.now(UTC)
                    duration = (now - task.t0) * 1000
                    self._finish(task, error_run(task.job, reason, started=started,
                                                 duration_ms=duration))  # fmt: skip
                else:  # not its fault
                    self._run_again(task)

    def _run_again(self, task: _Task) -> None:
        """``task``'s case runs again next (its attempt was cut short, not counted)."""
        again = _Task(self._key(), task.job, task.attempts, task.alone)
        (self.alone if task.alone else self.todo).appendleft(again)

    def _retire(self, process: AgentProcess) -> tuple[list[_Task], list[_Task]]:
        """Drop ``process`` (killed) and take its cases: those running, those sent ahead."""
        running, ahead = list(process.running.values()), list(process.queued.values())
        process.running.clear()
        process.queued.clear()
        self._drop(process)
        return running, ahead

    def _drop(self, process: AgentProcess) -> None:
        if process is self.solo:
            self.solo = None
        elif process in self.live:
            self.live.remove(process)
        self.pool.retire(process)
