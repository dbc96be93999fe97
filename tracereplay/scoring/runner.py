"""Running cases: concurrency, per-attempt timeouts, retries on ERROR, fail-fast, Ctrl-C.

``run_jobs`` runs one attempt function over (case, repetition) jobs on ``concurrency`` worker
threads and hands each finished ``CaseRun`` to ``on_result`` *in the calling thread* (so storing
and progress need no locking). With ``isolate`` every attempt runs in a thread of its own that
is abandoned when it outlives the timeout: a hung agent call cannot be killed, but the case
becomes an ERROR "timed out after Ns" and the run moves on. An agent that calls ``sys.exit`` or
``os._exit`` ends its attempt, not the eval: the case is an ERROR saying so. Retries repeat an attempt whose
result is an ERROR (never a FAILED one). Ctrl-C in the calling thread stops the run: the results
handed over so far are what it keeps.
"""

from __future__ import annotations

import contextlib
import math
import os
import queue
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from tracereplay.errors import BadParameterError
from tracereplay.models import EvalCase, EvaluationResult, Status
from tracereplay.scoring.limits import MAX_CONCURRENCY, MAX_REPEAT, MAX_RETRIES
from tracereplay.scoring.outcomes import CaseRun


@dataclass(frozen=True)
class RunnerOptions:
    """How cases are run (the ``tracereplay eval`` options of the same names)."""

    concurrency: int = 4
    timeout_s: float | None = 60.0
    retries: int = 0
    fail_fast: bool = False
    repeat: int = 1

    def __post_init__(self) -> None:
        if not 1 <= self.concurrency <= MAX_CONCURRENCY:
            raise BadParameterError(
                f"--concurrency must be 1 to {MAX_CONCURRENCY}, not {self.concurrency}"
            )
        if self.timeout_s is not None and not 0 < self.timeout_s < math.inf:
            raise BadParameterError(f"--timeout must be positive, not {self.timeout_s:g}")
        if not 0 <= self.retries <= MAX_RETRIES:
            raise BadParameterError(f"--retries must be 0 to {MAX_RETRIES}, not {self.retries}")
        if not 1 <= self.repeat <= MAX_REPEAT:
            raise BadParameterError(f"--repeat must be 1 to {MAX_REPEAT}, not {self.repeat}")


@dataclass(frozen=True)
class Job:
    """One repetition of one case."""

    case: EvalCase
    repetition: int = 0


def job_timeout(timeout_s: float | None, job: Job) -> float | None:
    """A job's time limit: ``--timeout`` is per turn, so a multi-turn case (``turns``) gets it
    once for each of its turns."""
    if timeout_s is None:
        return None
    return timeout_s * max(1, len(job.case.turns))


#: runs one attempt of a job; returns its result (an ERROR result for anything that went wrong)
AttemptFn = Callable[[Job], CaseRun]


@dataclass
class RunnerReport:
    """How the run ended: how many jobs finished, and whether it stopped early."""

    finished: int = 0
    not_run: int = 0
    stopped: bool = False  # --fail-fast saw a case not pass
    interrupted: bool = False  # Ctrl-C
    abandoned: list[Job] = field(default_factory=list)  # still running when the run ended


def expand_jobs(cases: Sequence[EvalCase], repeat: int) -> list[Job]:
    """Every case ``repeat`` times, repetitions of a case next to each other."""
    return [Job(case, r) for case in cases for r in range(repeat)]


def error_run(job: Job, reason: str, *, started: datetime, duration_ms: float = 0.0) -> CaseRun:
    """A ``CaseRun`` for an attempt that could not produce a result."""
    return CaseRun(
        case_id=job.case.id,
        seq=job.case.seq,
        repetition=job.repetition,
        result=EvaluationResult(
            case_id=job.case.id, status=Status.ERROR, reason=reason, duration_ms=duration_ms
        ),
        source_run_id=job.case.source_run_id,
        started_at=started,
        finished_at=datetime.now(UTC),
    )


def _now() -> datetime:
    return datetime.now(UTC)


class AgentExited(BaseException):
    """Raised in place of ``os._exit`` while cases run: an agent ends its attempt, not the eval."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


@contextlib.contextmanager
def exits_contained() -> Iterator[None]:
    """``os._exit`` in this process raises ``AgentExited`` for the duration (a forked child's
    ``os._exit`` still exits: multiprocessing ends its children with it)."""
    real_exit = os._exit
    pid = os.getpid()

    def contained(code: int) -> None:
        if os.getpid() != pid:
            real_exit(code)
        raise AgentExited(code)

    os._exit = contained  # type: ignore[assignment]
    try:
        yield
    finally:
        os._exit = real_exit


def exit_reason(exc: BaseException) -> str | None:
    """Why an attempt ended the way only a process should end (``sys.exit``, ``os._exit``),
    or ``None`` for any other exception."""
    if isinstance(exc, AgentExited):
        return f"the agent called os._exit({exc.code})"
    if isinstance(exc, SystemExit):
        return (
            f"the agent called sys.exit({exc.code!r})"
            if exc.code is not None
            else ("the agent called sys.exit()")
        )
    return None


class _Attempts:
    """Runs a job's attempts (timeout, retries) and returns its final ``CaseRun``."""

    def __init__(self, attempt: AttemptFn, options: RunnerOptions, isolate: bool) -> None:
        self.attempt = attempt
        self.options = options
        self.isolate = isolate

    def run(self, job: Job) -> CaseRun:
        tries = self.options.retries + 1
        attempts = 1
        result = self._once(job)
        while result.status is Status.ERROR and attempts < tries:
            attempts += 1
            result = self._once(job)
        return result.model_copy(update={"attempts": attempts}) if attempts > 1 else result

    def _once(self, job: Job) -> CaseRun:
        started = _now()
        t0 = time.perf_counter()
        if not self.isolate:
            return self._guarded(job, started, t0)
        box: list[CaseRun] = []
        thread = threading.Thread(
            target=lambda: box.append(self._guarded(job, started, t0)),
            name=f"tracereplay-case-{job.case.seq}",
            daemon=True,
        )
        thread.start()
        limit = job_timeout(self.options.timeout_s, job)
        thread.join(limit)
        if box:
            return box[0]
        # still running: abandon the thread (it cannot be killed); the case is an ERROR
        timeout = limit or 0.0
        return error_run(
            job,
            f"timed out after {timeout:g}s",
            started=started,
            duration_ms=(time.perf_counter() - t0) * 1000,
        )

    def _guarded(self, job: Job, started: datetime, t0: float) -> CaseRun:
        return guarded_attempt(self.attempt, job, started, t0)


def guarded_attempt(
    attempt: AttemptFn, job: Job, started: datetime | None = None, t0: float | None = None
) -> CaseRun:
    """``attempt(job)``, with an agent that tried to end the process (``sys.exit``,
    ``os._exit`` under ``exits_contained``) or a bug in the attempt function an ERROR result."""
    started = started or _now()
    t0 = time.perf_counter() if t0 is None else t0
    try:
        return attempt(job)
    except (SystemExit, AgentExited) as exc:  # the agent tried to end the process
        return error_run(
            job,
            exit_reason(exc) or "the agent exited",
            started=started,
            duration_ms=(time.perf_counter() - t0) * 1000,
        )
    except Exception as exc:  # a bug in an attempt function: still a result
        return error_run(
            job,
            f"evaluation failed: {type(exc).__name__}: {' '.join(str(exc).split())}",
            started=started,
            duration_ms=(time.perf_counter() - t0) * 1000,
        )


def run_jobs(
    jobs: Sequence[Job],
    attempt: AttemptFn,
    options: RunnerOptions,
    on_result: Callable[[CaseRun], None],
    *,
    isolate: bool = True,
    should_stop: Callable[[CaseRun], bool] | None = None,
) -> RunnerReport:
    """Run ``jobs``; call ``on_result`` for each finished one, in this thread.

    ``isolate``: run every attempt in its own thread so the timeout is enforced (replay mode).
    ``should_stop``: with ``--fail-fast``, whether a result stops the run (default: any result
    that did not pass).
    """
    with exits_contained():
        return _run_jobs(jobs, attempt, options, on_result, isolate, should_stop)


def _run_jobs(
    jobs: Sequence[Job],
    attempt: AttemptFn,
    options: RunnerOptions,
    on_result: Callable[[CaseRun], None],
    isolate: bool,
    should_stop: Callable[[CaseRun], bool] | None,
) -> RunnerReport:
    attempts = _Attempts(attempt, options, isolate)
    stop_on = should_stop or (lambda r: r.status is not Status.PASSED)
    report = RunnerReport()
    if options.concurrency == 1 and not isolate:
        return _run_inline(jobs, attempts, options, on_result, stop_on, report)

    todo: queue.SimpleQueue[Job] = queue.SimpleQueue()
    for job in jobs:
        todo.put(job)
    done: queue.SimpleQueue[CaseRun] = queue.SimpleQueue()
    no_new = threading.Event()  # set: workers take no further job
    running: dict[int, Job] = {}
    lock = threading.Lock()

    def worker() -> None:
        while not no_new.is_set():
            try:
                job = todo.get_nowait()
            except queue.Empty:
                return
            with lock:
                running[id(job)] = job
            result = attempts.run(job)
            with lock:
                running.pop(id(job), None)
            if options.fail_fast and stop_on(result):
                no_new.set()  # before this worker (or another) takes the next job
            done.put(result)

    workers = [
        threading.Thread(target=worker, name=f"tracereplay-worker-{i}", daemon=True)
        for i in range(min(options.concurrency, max(1, len(jobs))))
    ]
    for w in workers:
        w.start()

    def hand_over(result: CaseRun) -> None:
        report.finished += 1
        on_result(result)
        if options.fail_fast and stop_on(result) and not report.stopped:
            report.stopped = True
            no_new.set()

    try:
        while report.finished < len(jobs):
            try:
                result = done.get(timeout=0.05)
            except queue.Empty:
                if not any(w.is_alive() for w in workers) and done.empty():
                    break  # stopped early, or nothing left that could finish
                continue
            hand_over(result)
    except KeyboardInterrupt:
        report.interrupted = True
        no_new.set()
    with lock:
        report.abandoned = list(running.values())
    report.not_run = len(jobs) - report.finished
    return report


def _run_inline(
    jobs: Sequence[Job],
    attempts: _Attempts,
    options: RunnerOptions,
    on_result: Callable[[CaseRun], None],
    stop_on: Callable[[CaseRun], bool],
    report: RunnerReport,
) -> RunnerReport:
    """One job after the other in this thread (no timeout thread needed: nothing can hang)."""
    try:
        for job in jobs:
            result = attempts.run(job)
            report.finished += 1
            on_result(result)
            if options.fail_fast and stop_on(result):
                report.stopped = True
                break
    except KeyboardInterrupt:
        report.interrupted = True
    report.not_run = len(jobs) - report.finished
    return report
