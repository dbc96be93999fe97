"""What runs in an agent process: the agent loaded once, then the attempts the eval sends.

The eval's side (``agent_process``: starting the processes, sending them cases) imports none of
this: the agent loader, the SDK and the replay code are the processes' to import (the fork
server has them preloaded), not the eval's, so the eval does not wait for those imports
before its first case. ``--in-process`` imports it into the eval instead.
"""

from __future__ import annotations

import collections
import os
import queue
import threading
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from tracereplay.checks import load_check_modules
from tracereplay.checks.registry import load_builtins
from tracereplay.errors import TraceReplayError, one_line
from tracereplay.forkserver import started_child
from tracereplay.replay.agent_loader import AgentCallable, load_agent
from tracereplay.replay.answering.attempt import Replayer
from tracereplay.replay.workers.protocol import AgentSetup, CaseInputs, Ready, ReplayPlan, Task
from tracereplay.scoring.conversation import conversation_attempt
from tracereplay.scoring.outcomes import CaseRun
from tracereplay.scoring.runner import (
    AttemptFn,
    Job,
    error_run,
    exits_contained,
    guarded_attempt,
)
from tracereplay.sdk import configure, current_setup, flush
from tracereplay.sdk.exporter import SpoolSpanExporter

# the built-in checks every case is scored with: imported with this module, so the fork server
# (which preloads it) has them, not each agent process on its first case
load_builtins()


def child_main(conn: Connection, setup: AgentSetup, env: dict[str, str], parent: int) -> None:
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
        replayer_for, ready = _load(setup)
    except BaseException as exc:  # noqa: BLE001 - reported to the eval, which raises it
        message = str(exc) if isinstance(exc, TraceReplayError) else _loading_failed(setup, exc)
        conn.send(("failed", message))
        return
    conn.send(("ready", ready))  # whether it takes one case at a time, notes about it
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


def _load(setup: AgentSetup) -> tuple[Any, Ready]:
    """Load the agent and checks; returns ``(plan, job, inputs) -> attempt function``, and the
    ``Ready`` message (whether the agent takes one case at a time:
    ``FrameworkAgent.one_case_at_a_time``; the notes about it: ``agent_notes``)."""
    if setup.check_modules:
        load_check_modules(setup.check_modules)
    agent = load_replayed_agent(setup.agent, setup.db, setup.agent_call)
    ready = Ready(bool(getattr(agent, "one_case_at_a_time", False)), agent_notes(agent))
    return (lambda plan, job, inputs: case_attempt(agent, plan, inputs)), ready


def agent_notes(agent: AgentCallable) -> tuple[str, ...]:
    """One line per framework the agent runs on whose installed version its adapter was not
    tested with (``FrameworkAgent.version_note``)."""
    notes = (type(adapter).version_note() for adapter in agent.adapters)
    return tuple(dict.fromkeys(n for n in notes if n))


def case_replayer(agent: AgentCallable, plan: ReplayPlan, inputs: CaseInputs) -> Replayer:
    """The ``Replayer`` of one case: ``plan``'s settings, answering from ``inputs`` (every
    turn's, for a multi-turn case)."""
    turns = [i for i in inputs.every_turn() if i.source is not None]
    return Replayer(
        agent=agent,
        suite=plan.suite,
        eval_run_id=plan.eval_run_id,
        source_runs={i.source.run_id: i.source for i in turns},  # type: ignore[union-attr]
        result_encodings={k: v for i in turns for k, v in i.encodings.items()},
        sub_runs={i.source.run_id: i.sub_runs for i in turns},  # type: ignore[union-attr]
        tool_match=plan.tool_match,
        live_tools=plan.live_tools,
        timeout_s=plan.timeout_s,
        llm=plan.llm,
        llm_match=plan.llm_match,
        llm_until=plan.llm_until,
        llm_calls={i.source.run_id: i.llm_calls for i in turns},  # type: ignore[union-attr]
    )


def case_attempt(agent: AgentCallable, plan: ReplayPlan, inputs: CaseInputs) -> AttemptFn:
    """The attempt function of one case: its replay, turn by turn for a multi-turn case."""
    attempt = case_replayer(agent, plan, inputs).attempt
    return conversation_attempt(attempt, plan.suite.checks, plan.history)


def in_process_attempts(
    agent: AgentCallable, plan: ReplayPlan, inputs_for: Callable[[Job], CaseInputs]
) -> Callable[[Job], CaseRun]:
    """``--in-process``: the attempt function that replays each case in this process."""
    return lambda job: case_attempt(agent, plan, inputs_for(job))(job)


def load_replayed_agent(spec: str, db: Path, call: str | None = None) -> AgentCallable:
    """Import the agent (its replays are traced by ``trace_replays``, once the plan says how);
    ``call``: ``--agent-call``."""
    return load_agent(spec, call)


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
    process stops (``_sync_spool``): an ``fsync`` per case costs more than a fast agent's
    case. Written is what a killed process needs
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
