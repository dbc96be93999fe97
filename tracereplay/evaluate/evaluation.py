"""One eval run from start to end: load the suite, run its cases, store the results as they come.

The store is held only for moments (the DuckDB file is shared by many processes): once to load
the suite, its cases and their source runs and to add the ``eval_runs`` row; then once per batch
of results (every ~second) while the cases run; then once at the end. A Ctrl-C keeps every
result handed over so far and marks the eval run ``interrupted``.
"""

from __future__ import annotations

import signal
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tracereplay.checks import get_check_kind, load_check_modules
from tracereplay.environ import env_set
from tracereplay.errors import BadParameterError, TraceReplayError
from tracereplay.evaluate.gates import GateReport
from tracereplay.evaluate.git_info import GitState, git_state
from tracereplay.evaluate.recorded.columnar import (
    CaseReports,
    ScoredCases,
    case_check_overrides,
    load_recorded_cases,
)
from tracereplay.evaluate.recorded.scoring import score_recorded
from tracereplay.evaluate.results_store import (
    CaseResultRows,
    get_eval_run,
    insert_eval_run,
    insert_scored,
    load_case_runs,
    update_eval_run,
)
from tracereplay.evaluate.settings import EvalSettings, command_argv, with_suite_defaults
from tracereplay.evaluate.sharing import shard_cases
from tracereplay.evaluate.sources import source_service
from tracereplay.gcpause import gc_paused
from tracereplay.ingest import on_open
from tracereplay.models import EvalCase, EvalSuite, Run, Status
from tracereplay.models.fast import build
from tracereplay.models.parameters import (
    missing_parameters,
    missing_parameters_reason,
    suite_required_parameters,
)
from tracereplay.replay.answering.llm import (
    RecordedCall,
    load_llm_recordings,
)
from tracereplay.replay.workers.agent_process import AgentProcesses
from tracereplay.replay.workers.protocol import AgentSetup, CaseInputs, ReplayPlan
from tracereplay.scoring.conversation import conversation_attempt
from tracereplay.scoring.outcomes import CaseReport, CaseRun, EvalRunRecord
from tracereplay.scoring.runner import Job, RunnerReport, expand_jobs, run_jobs
from tracereplay.scoring.verdicts import (
    EvalSummary,
    error_result,
    merge_repeats,
    resolve_checks,
    summarize,
    summarize_outcomes,
)
from tracereplay.store.abandoned import process_marker
from tracereplay.store.db import Store
from tracereplay.store.eval_runs import suite_and_mode
from tracereplay.store.open import open_store
from tracereplay.store.paths import DB_ENV
from tracereplay.store.runs import load_result_encodings, load_runs, load_sub_runs
from tracereplay.store.suites import get_cases, get_suite, list_cases, suite_has_turns

#: results are written at least this often (seconds) while cases run
FLUSH_SECONDS = 5.0
FLUSH_RESULTS = 10000


class EmptySelectionError(TraceReplayError):
    """The suite (or the --tag / --case selection) has no case to run."""


@dataclass
class EvalOutcome:
    """An eval run's record, its per-case reports (in ``seq`` order) and how the run ended."""

    record: EvalRunRecord
    suite: EvalSuite
    reports: Sequence[CaseReport]  # a list, or ``CaseReports`` (built on access)
    runner: RunnerReport
    selected: int
    #: one-line notes about the replayed agent (a framework version its adapter was not
    #: tested with), for the summary
    agent_notes: tuple[str, ...] = ()
    #: ``--fail-under`` / ``--max-regressions`` (and the p-values of ``--repeat``), when
    #: asked: they decide the exit code instead of "every case passed"
    gates: GateReport | None = None

    def not_passed(self) -> list[CaseReport]:
        """The reports of the cases that did not pass (without building the others)."""
        if isinstance(self.reports, CaseReports):
            return self.reports.not_passed()
        return [r for r in self.reports if r.result.status is not Status.PASSED]

    def needing_attention(self) -> list[CaseReport]:
        """What a summary should show: the cases that did not pass and, in replay mode, every
        case (a passing replay may still report argument drift or unused recordings)."""
        if self.record.mode == "replay":
            return list(self.reports)
        return self.not_passed()

    @property
    def exit_code(self) -> int:
        """0 when every selected case ran and passed, else 1; with a gate, 1 only when it
        fails (pass rate below ``--fail-under``, more regressions than ``--max-regressions``)."""
        if self.gates is not None and (
            self.gates.fail_under is not None or self.gates.max_regressions is not None
        ):
            return 1 if self.gates.failed else 0
        ok = not self.not_passed()
        return 0 if ok and len(self.reports) == self.selected else 1


class ProgressHooks:
    """Hooks the CLI uses to show progress (all called in the calling thread)."""

    def start(self, total: int) -> None: ...

    def advance(self, run: CaseRun) -> None: ...

    def advance_many(self, count: int, not_passed: int) -> None:
        """``count`` cases finished at once, ``not_passed`` of them did not pass (recorded
        mode scores columnar: no ``CaseRun`` per case)."""

    def stop(self) -> None: ...


def select_cases(
    cases: Sequence[EvalCase], tags: Sequence[str], case_ids: Sequence[str]
) -> list[EvalCase]:
    """Cases having any of ``tags`` (if given) and named by ``case_ids`` prefixes (if given)."""
    chosen = list(cases)
    if case_ids:
        wanted: set[str] = set()
        for ident in case_ids:
            text = ident.strip().lower()
            hits = [c.id for c in cases if c.id.startswith(text)] if text else []
            if not hits:
                raise BadParameterError(f"--case '{ident}' matches no case of this suite")
            if len(hits) > 1:
                raise BadParameterError(
                    f"--case '{ident}' is ambiguous: it starts {len(hits)} case ids"
                )
            wanted.add(hits[0])
        chosen = [c for c in chosen if c.id in wanted]
    if tags:
        tag_set = set(tags)
        chosen = [c for c in chosen if tag_set.intersection(c.tags)]
    return chosen


@contextmanager
def _sigint_deferred() -> Iterator[None]:
    """Hold a Ctrl-C until the block ends (a write is never cut in half); main thread only."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if caught:
        raise KeyboardInterrupt


class _ResultWriter:
    """Buffers case results and writes them in batches (and the eval run row at the end).

    The last of the ``expected`` results is written by the final flush with the eval run's
    row, in one transaction: not first in a batch of its own (a 10,000-case suite filled one
    batch exactly and opened the store twice at its end)."""

    def __init__(
        self,
        db: Path,
        record: EvalRunRecord,
        suite: EvalSuite,
        *,
        shared: bool = False,
        expected: int | None = None,
    ) -> None:
        self.db = db
        self.expected = expected
        self.received = 0
        #: the eval run is shared with other processes: its final counts are summed from the
        #: store (everything every process wrote into it), not from this process's results
        self.shared = shared
        self.record = record
        self.suite = suite
        self.pending = CaseResultRows(record.eval_run_id, suite.id)
        self.kinds: dict[str, dict[str, str]] = {}
        self._by_specs: dict[int, dict[str, str]] = {}
        self.last_flush = time.monotonic()

    def add(self, run: CaseRun, case: EvalCase) -> None:
        kinds = self.kinds.get(run.case_id)
        if kinds is None:
            specs = resolve_checks(case, self.suite.checks)
            kinds = self._by_specs.get(id(specs))
            if kinds is None:
                kinds = self._by_specs[id(specs)] = {s.label: s.kind for s in specs}
            self.kinds[run.case_id] = kinds
        self.pending.add(run, kinds)
        self.received += 1
        if self.received == self.expected:
            return  # the final flush follows
        due = time.monotonic() - self.last_flush >= FLUSH_SECONDS
        if due or len(self.pending) >= FLUSH_RESULTS:
            self.flush()

    def flush(self, final: EvalRunRecord | None = None) -> None:
        with _sigint_deferred():
            if self.pending or final is not None:
                # no drain here: the replay runs' spans wait in the spool like any agent's, for
                # the next command that reads (every one drains first)
                with open_store(self.db, drain=False) as store, store.transaction():
                    self.pending.write(store)
                    if final is not None:
                        if self.shared:
                            final = shared_final_record(store, final)
                        update_eval_run(store, final)
            self.last_flush = time.monotonic()


def _store_env(db: Path) -> AbstractContextManager[None]:
    """``$TRACEREPLAY_DB`` = the eval's store while it runs: an agent that calls
    ``tracereplay.configure()`` itself (at import or later) records its replays there too."""
    return env_set(DB_ENV, str(db))


def run_evaluation(settings: EvalSettings, progress: ProgressHooks | None = None) -> EvalOutcome:
    """Run an eval as ``settings`` say; store and return its results. Never leaves the eval run
    ``running``: it ends ``completed``, ``stopped`` (--fail-fast) or ``interrupted`` (Ctrl-C)."""
    on_open.install()  # its open_store drains the spool: the source runs agents just wrote
    with _store_env(settings.db) if settings.agent else nullcontext():
        return _run_evaluation(settings, progress)


def _run_evaluation(settings: EvalSettings, progress: ProgressHooks | None) -> EvalOutcome:
    # loading, scoring and reporting allocate many small acyclic objects that the cyclic GC
    # would only rescan, again and again as they accumulate: it is paused for the
    # whole run, unless the agent's own code runs in this process (--in-process)
    if settings.agent and not settings.in_process:
        setup = AgentSetup(settings.agent, settings.db, settings.check_modules, settings.agent_call)
        with AgentProcesses(setup, settings.runner.concurrency) as processes, gc_paused():
            return _evaluate(settings, progress, processes)
    with gc_paused() if not settings.agent else nullcontext():
        return _evaluate(settings, progress, None)


def _evaluate(
    settings: EvalSettings, progress: ProgressHooks | None, processes: AgentProcesses | None
) -> EvalOutcome:
    progress = progress or ProgressHooks()
    if settings.check_modules:
        load_check_modules(settings.check_modules)
    replay = settings.replays
    in_process = settings.agent is not None and processes is None
    agent = None
    if settings.agent and in_process:  # the agent's process is this one: its side is imported
        from tracereplay.replay.workers.agent_child import load_replayed_agent

        agent = load_replayed_agent(settings.agent, settings.db, settings.agent_call)

    git = _git_state_soon()
    with open_store(settings.db) as store:
        suite = get_suite(store, settings.suite)
        if settings.suite_defaults:
            settings = with_suite_defaults(settings, suite)
        if not replay and _columnar(settings, store, suite):
            return _run_columnar(settings, store, suite, progress, git)
        cases = select_cases(list_cases(store, suite.id), settings.tags, settings.case_ids)
        if settings.shard is not None:
            cases = shard_cases(cases, *settings.shard)
        if not cases:
            raise _nothing_to_evaluate(settings, suite)
        sources = load_runs(store, source_run_ids(cases))
        sub_runs = load_sub_runs(store, sources.values()) if replay else {}
        encodings = (
            load_result_encodings(
                store, [*sources.values(), *(r for runs in sub_runs.values() for r in runs)]
            )
            if replay
            else {}
        )
        # --llm recorded: the LLM calls (with their messages) each replay is answered from
        llm_calls = (
            load_llm_recordings(store, sources.values(), sub_runs)
            if replay and settings.llm == "recorded"
            else {}
        )
        record = _new_record(settings, suite, git())
        # an agent that cannot be loaded stops the eval before it is recorded; the store is not
        # held while the agent loads (one already loaded is recorded now, in this session)
        recorded = processes is None or processes.wait_ready(block=False)
        if recorded:
            record = open_eval_run(store, record)
    if not recorded:
        assert processes is not None
        processes.wait_ready()
        with open_store(settings.db, drain=False) as store:
            record = open_eval_run(store, record)

    options = settings.runner
    writer = _ResultWriter(
        settings.db,
        record,
        suite,
        shared=settings.eval_run is not None,
        expected=len(cases) * options.repeat,
    )
    by_id = {c.id: c for c in cases}
    runs: list[CaseRun] = []
    report = RunnerReport()

    def on_result(run: CaseRun) -> None:
        runs.append(run)
        progress.advance(run)
        writer.add(run, by_id[run.case_id])

    required = suite_required_parameters(suite)
    runnable: list[EvalCase] = []
    not_run: list[CaseRun] = []
    for case in cases:
        missing = missing_parameters(case, required) if required else []
        if missing:
            not_run.extend(
                _not_run(case, rep, missing_parameters_reason(missing))
                for rep in range(options.repeat)
            )
        else:
            runnable.append(case)

    attempt: Callable[[Job], CaseRun] | None = None
    if replay:
        plan = ReplayPlan(
            suite=suite,
            eval_run_id=record.eval_run_id,
            tool_match=settings.tool_match,
            live_tools=settings.live_tools,
            timeout_s=options.timeout_s,
            llm=settings.llm,
            llm_match=settings.llm_match,
            llm_until=settings.llm_until,
            history=settings.history,
            service_name=source_service(sources.values()),
        )
        inputs = _case_inputs(sources, sub_runs, encodings, llm_calls)
        if settings.agent_cmd is not None:
            attempt = _command_attempts(settings, plan, sources, sub_runs, llm_calls)
        elif processes is not None:
            processes.start(plan, inputs)  # run by processes.run, from this thread
        else:
            from tracereplay.replay.workers.agent_child import in_process_attempts, trace_replays

            assert agent is not None
            trace_replays(settings.db, plan.service_name)
            attempt = in_process_attempts(agent, plan, inputs)
    else:
        attempt = conversation_attempt(_recorded_attempt(suite, sources), suite.checks)

    progress.start(len(cases) * options.repeat)
    try:
        for run in not_run:
            on_result(run)
        stop_now = options.fail_fast and bool(not_run)
        if not stop_now:
            # an agent, an LLM judge or a custom check may wait or hang: run those attempts
            # concurrently, each in a thread the timeout can abandon (agent processes end a
            # case past its timeout themselves); built-in checks alone are CPU-bound, threads
            # would only contend
            waits = replay or _checks_may_wait(runnable, suite)
            run_options = options if waits else replace(options, concurrency=1)
            if settings.agent_cmd is not None:  # the command's own timeout ends it (and its group)
                run_options = replace(run_options, timeout_s=None)
            jobs = expand_jobs(runnable, options.repeat)
            if processes is not None:  # from this thread: each case is a message, no thread
                report = processes.run(jobs, options, on_result)
            else:
                assert attempt is not None
                report = run_jobs(jobs, attempt, run_options, on_result, isolate=waits)
        else:
            report = RunnerReport(stopped=True)
        report.finished += len(not_run)
    except KeyboardInterrupt:
        report.interrupted = True
    finally:
        progress.stop()
    report.not_run = len(cases) * options.repeat - len(runs)

    if in_process:
        from tracereplay.replay.frameworks.instrumentors import uninstrument_installed
        from tracereplay.sdk import flush

        uninstrument_installed()  # the instrumentors the replays switched on, in this process
        flush()  # the replay runs' spans reach the spool before the store is opened again
    reports = _case_reports(cases, runs)
    summary = summarize([r.result for r in reports])
    status = "interrupted" if report.interrupted else "stopped" if report.stopped else "completed"
    final = finished_record(record, summary, status, report.not_run)
    try:
        writer.flush(final)
    except KeyboardInterrupt:
        report.interrupted = True
        final = final.model_copy(update={"status": "interrupted"})
        writer.flush(final)
    notes: tuple[str, ...] = ()
    if processes is not None:
        notes = processes.notes()
    elif agent is not None:
        from tracereplay.replay.workers.agent_child import agent_notes

        notes = agent_notes(agent)
    return EvalOutcome(final, suite, reports, report, len(cases), agent_notes=notes)


def _case_inputs(
    sources: Mapping[str, Run],
    sub_runs: Mapping[str, Sequence[Run]],
    encodings: Mapping[str, Sequence[str | None]],
    llm_calls: Mapping[str, Sequence[RecordedCall]],
) -> Callable[[Job], CaseInputs]:
    """What an agent process needs of the recordings for one job (not the whole suite's):
    its source run's, and a multi-turn case's every turn's."""

    def one(run_id: str | None) -> CaseInputs:
        source = sources.get(run_id) if run_id else None
        if source is None:
            return CaseInputs()
        subs = tuple(sub_runs.get(source.run_id, ()))
        return CaseInputs(
            source=source,
            sub_runs=subs,
            encodings={
                r.run_id: encodings[r.run_id] for r in (source, *subs) if r.run_id in encodings
            },
            llm_calls=tuple(llm_calls.get(source.run_id, ())),
        )

    def inputs(job: Job) -> CaseInputs:
        case = job.case
        if not case.turns:
            return one(case.source_run_id)
        first, *later = (one(t.source_run_id) for t in case.turns)
        return replace(first, turns=tuple(later))

    return inputs


def source_run_ids(cases: Sequence[EvalCase]) -> list[str]:
    """The runs ``cases`` are answered from: each case's source run, and each turn's."""
    ids = [c.source_run_id for c in cases if c.source_run_id]
    ids += [t.source_run_id for c in cases for t in c.turns if t.source_run_id]
    return list(dict.fromkeys(ids))


def _command_attempts(
    settings: EvalSettings,
    plan: ReplayPlan,
    sources: Mapping[str, Run],
    sub_runs: Mapping[str, Sequence[Run]],
    llm_calls: Mapping[str, Sequence[RecordedCall]],
) -> Callable[[Job], CaseRun]:
    """``--agent-cmd``: each attempt runs the command (``replay/command/``), in the runner's
    threads (the command is a process of its own: no agent process is needed)."""
    from tracereplay.replay.command.attempt import CommandReplayer

    assert settings.agent_cmd is not None
    replayer = CommandReplayer(
        argv=command_argv(settings.agent_cmd),
        suite=plan.suite,
        eval_run_id=plan.eval_run_id,
        db=settings.db,
        source_runs=sources,
        sub_runs=sub_runs,
        timeout_s=plan.timeout_s,
        llm=plan.llm,
        llm_match=plan.llm_match,
        llm_until=plan.llm_until,
        llm_calls=llm_calls,
        service_name=plan.service_name or "",
    )
    return conversation_attempt(replayer.attempt, plan.suite.checks, plan.history)


def _nothing_to_evaluate(settings: EvalSettings, suite: EvalSuite) -> EmptySelectionError:
    what = (
        "no case matches the --tag / --case selection"
        if (settings.tags or settings.case_ids)
        else "it has no cases (promote runs into it first)"
    )
    return EmptySelectionError(f"nothing to evaluate in suite '{suite.name}': {what}")


def _git_state_soon() -> Callable[[], GitState | None]:
    """``git_state()`` run in a thread (two git commands: they overlap loading the suite)."""
    box: list[GitState | None] = []
    thread = threading.Thread(target=lambda: box.append(git_state()), daemon=True)
    thread.start()

    def result() -> GitState | None:
        thread.join()
        return box[0] if box else None

    return result


def _new_record(settings: EvalSettings, suite: EvalSuite, git: GitState | None) -> EvalRunRecord:
    """The ``eval_runs`` row of a run that starts now (status ``running``)."""
    return EvalRunRecord(
        eval_run_id=settings.eval_run or str(uuid.uuid4()),
        suite_id=suite.id,
        suite_name=suite.name,
        mode=settings.mode,  # type: ignore[arg-type]
        agent=settings.agent or settings.agent_cmd,
        label=settings.label,
        started_at=datetime.now(UTC),
        git_commit=git.commit if git else None,
        git_dirty=git.dirty if git else None,
        options={**settings.options(), "process": process_marker()},
    )


def finished_record(
    record: EvalRunRecord, summary: EvalSummary, status: str, not_run: int
) -> EvalRunRecord:
    """The eval run's row once it ended: ``status`` and the counts of ``summary``."""
    return record.model_copy(
        update={
            "finished_at": datetime.now(UTC),
            "status": status,
            "total_cases": summary.total,
            "passed": summary.passed,
            "failed": summary.failed,
            "errored": summary.errored,
            "pass_rate": summary.pass_rate if summary.total else None,
            "aggregate_score": summary.aggregate_score,
            "options": {**record.options, "not_run": not_run},
        }
    )


def open_eval_run(store: Store, record: EvalRunRecord) -> EvalRunRecord:
    """Add ``record``'s row, or join the stored eval run of the same id (a shard, an xdist
    worker): the stored row is kept (its start, git state, options), marked ``running`` again.
    Called with the store held, so two processes that open the same id add one row between
    them (on a server store, under the eval run's lock: CI jobs on other machines). An id
    that names another suite's or mode's eval run is refused."""
    with store.transaction():
        store.lock([f"eval_run:{record.eval_run_id}"])
        return _open_eval_run(store, record)


def _open_eval_run(store: Store, record: EvalRunRecord) -> EvalRunRecord:
    stored = suite_and_mode(store, record.eval_run_id)
    if stored is None:
        insert_eval_run(store, record)
        return record
    suite_id, mode = stored
    if suite_id != record.suite_id or mode != record.mode:
        raise BadParameterError(
            f"eval run '{record.eval_run_id}' is a {mode} eval run of another suite or mode;"
            " give a new --eval-run id"
        )
    joined = get_eval_run(store, record.eval_run_id).model_copy(
        update={"status": "running", "finished_at": None}
    )
    update_eval_run(store, joined)
    return joined


def shared_final_record(store: Store, final: EvalRunRecord) -> EvalRunRecord:
    """``final`` with the counts of every case result stored for its eval run (all the
    processes that wrote into it), repetitions of a case folded as in one run. Under the eval
    run's lock: of shards finishing at once, the last to count sees every other's results."""
    store.lock([f"eval_run:{final.eval_run_id}"])
    runs = load_case_runs(store, final.eval_run_id, with_checks=False)
    by_case: dict[str, list[Any]] = {}
    for run in runs:
        by_case.setdefault(run.case_id, []).append(run.result)
    summary = summarize(merge_repeats(results) for results in by_case.values())
    return finished_record(final, summary, final.status, final.options.get("not_run", 0))


def _final_record(
    record: EvalRunRecord, chunks: Sequence[ScoredCases], selected: int, interrupted: bool = False
) -> EvalRunRecord:
    """The eval run's row once ``chunks`` hold all its results."""
    summary = summarize_outcomes(
        pair for chunk in chunks for pair in zip(chunk.status, chunk.score)
    )
    status = "interrupted" if interrupted else "completed"
    return finished_record(record, summary, status, selected - summary.total)


def _columnar(settings: EvalSettings, store: Store, suite: EvalSuite) -> bool:
    """Whether recorded mode can score this run columnar (``recorded_batch``): every case once,
    no retries, no fail-fast, no selection, no required parameters, and only built-in checks
    that do not wait (custom checks and the LLM judge need the runner's threads and timeout)."""
    o = settings.runner
    if o.repeat != 1 or o.retries or o.fail_fast or settings.tags or settings.case_ids:
        return False
    if settings.shard is not None:
        return False
    if settings.eval_run:  # a shared eval run is summed from the store, case by case
        return False
    if suite_required_parameters(suite) or suite_has_turns(store, suite.id):
        return False
    specs = [*suite.checks, *(s for c in case_check_overrides(store, suite.id) for s in c)]
    for kind in {s.kind for s in specs}:
        entry = get_check_kind(kind)
        if kind in WAITING_CHECKS or (entry is not None and not entry.builtin):
            return False
    return True


def _run_columnar(
    settings: EvalSettings,
    store: Store,
    suite: EvalSuite,
    progress: ProgressHooks,
    git: Callable[[], GitState | None],
) -> EvalOutcome:
    """Recorded mode, columnar, in the store the caller holds (scoring is CPU-bound and short:
    the store is not released between batches). Results are written every ``FLUSH_RESULTS``
    cases; Ctrl-C keeps what was written and marks the run ``interrupted``."""
    cases = load_recorded_cases(store, suite.id)
    n = len(cases)
    if not n:
        raise _nothing_to_evaluate(settings, suite)
    record = _new_record(settings, suite, git())
    written: list[ScoredCases] = []  # chunks whose results are committed
    runner = RunnerReport()
    final: EvalRunRecord | None = None
    progress.start(n)
    try:
        # each commit writes its changes into the database file (a checkpoint) rather than to
        # the write-ahead log, which closing the store would then copy there: the results are
        # written once instead of twice. One DuckDB thread: inserting a few thousand rows,
        # more threads cost more than they bring (and the other core is the scorer's).
        with store.settings(checkpoint_threshold="0KB", threads=1):
            for start in range(0, n, FLUSH_RESULTS):
                chunk = ScoredCases(
                    store, cases, start, min(n, start + FLUSH_RESULTS), suite.checks
                )
                last = start + len(chunk) == n
                # the last results and the eval run's final row go in one commit
                ending = _final_record(record, [*written, chunk], n) if last else None
                with _sigint_deferred(), store.transaction():
                    if not written:  # the eval run's row comes with its first results
                        insert_eval_run(store, record)
                    insert_scored(store, record.eval_run_id, suite.id, chunk)
                    if ending is not None:
                        update_eval_run(store, ending)
                written.append(chunk)
                final = ending
                progress.advance_many(len(chunk), sum(s is not Status.PASSED for s in chunk.status))
    except KeyboardInterrupt:
        runner.interrupted = final is None
    finally:
        progress.stop()
    runner.finished = sum(len(c) for c in written)
    runner.not_run = n - runner.finished
    if final is None:  # interrupted: what was written so far
        final = _final_record(record, written, n, interrupted=True)
        with _sigint_deferred():
            (update_eval_run if written else insert_eval_run)(store, final)
    db = settings.db

    def load_cases(ids: list[str]) -> list[EvalCase]:
        with open_store(db, drain=False) as again:
            return get_cases(again, ids)

    return EvalOutcome(final, suite, CaseReports(written, load_cases), runner, n)


#: built-in checks that wait on the network (worth running cases concurrently in recorded mode)
WAITING_CHECKS = frozenset({"llmJudge"})


def _checks_may_wait(cases: Sequence[EvalCase], suite: EvalSuite) -> bool:
    """Whether scoring may wait on I/O: an LLM judge, or a custom check (it may call anything)."""
    kinds = {spec.kind for case in cases for spec in resolve_checks(case, suite.checks)}
    for kind in kinds:
        entry = get_check_kind(kind)
        if kind in WAITING_CHECKS or (entry is not None and not entry.builtin):
            return True
    return False


def _not_run(case: EvalCase, repetition: int, reason: str) -> CaseRun:
    now = datetime.now(UTC)
    return CaseRun(
        case_id=case.id,
        seq=case.seq,
        repetition=repetition,
        result=error_result(case.id, reason),
        source_run_id=case.source_run_id,
        started_at=now,
        finished_at=now,
    )


def _recorded_attempt(suite: EvalSuite, sources: dict[str, Run]) -> Callable[[Job], CaseRun]:
    """Recorded mode: score the case against its source run's recorded result."""

    def attempt(job: Job) -> CaseRun:
        case = job.case
        started = datetime.now(UTC)
        run = sources.get(case.source_run_id) if case.source_run_id else None
        result = score_recorded(case, suite.checks, run)
        return build(
            CaseRun,
            {
                "case_id": case.id,
                "seq": case.seq,
                "repetition": job.repetition,
                "attempts": 1,
                "result": result,
                "source_run_id": case.source_run_id,
                "response": run.result.response if run is not None else None,
                "tool_calls": run.result.tool_calls if run is not None else [],
                "replay": None,
                "started_at": started,
                "finished_at": datetime.now(UTC),
                "turn": None,
                "turns": [],
            },
        )

    return attempt


def _case_reports(cases: Sequence[EvalCase], runs: Sequence[CaseRun]) -> list[CaseReport]:
    """Per case (in ``seq`` order) the result over its finished repetitions."""
    grouped: dict[str, list[CaseRun]] = {}
    for run in runs:
        grouped.setdefault(run.case_id, []).append(run)
    reports = []
    for case in sorted(cases, key=lambda c: c.seq):
        reps = sorted(grouped.get(case.id, []), key=lambda r: r.repetition)
        if reps:
            result = reps[0].result if len(reps) == 1 else merge_repeats([r.result for r in reps])
            reports.append(build(CaseReport, {"case": case, "result": result, "runs": reps}))
    return reports
