"""Replay mode: one attempt of one case = call the agent inside a tracereplay agent run, with its
``@tracereplay.tool`` calls answered from the source run, then score the run it made.

The agent run is the SDK's ``agent_run`` carrying ``tracereplay.run.kind = replay``,
``tracereplay.eval_run_id`` and ``tracereplay.case_id``; its spans go to the store like any run
(the spool) and are also captured in-process, converted, and scored right away. When the agent
opens its own agent run (``@tracereplay.agent_run`` or ``with agent_run(...)``) that run is the
replay run, marked the same way: the wrapper then steps aside (it is no agent span any more),
so one replay gives one run.

A framework's own agent object (``tracereplay.replay.frameworks``) runs the same way, inside
that wrapper: its adapter intercepts the framework's tool executions for the attempt, and its
spans go to the same provider. Every span of the replay's trace is stamped with the replay
marks as it starts (``TraceCapture``), so the framework's agent run, the one matching the case's
source run, is stored as the replay run and is the run scored.

No framework adapter (a plain loop, a framework no adapter knows): the tool functions are
answered by name wherever the agent's code holds them (``tracereplay.replay.
tool_functions``), and the tool results its LLM requests carry are counted for the airtight
check. A function whose code holds agents an adapter accepts has their adapters intercept.
Spans the agent sends to a tracer provider of its own are handed over
(``tracereplay.replay.agent_telemetry``).

Airtight: no tool runs for real unless ``--live-tools``; one that did makes the case an ERROR
(``tracereplay.replay.answering.airtight``). Framework attempts run on one shared event loop
(``tracereplay.replay.framework_loop``), with the replay's tracer provider as OpenTelemetry's
global one (``tracereplay.replay.global_provider``).

Offline (``--llm recorded``): the agent's LLM requests are answered from the source run's
recorded LLM calls too (``tracereplay.replay.answering.llm``), in the attempt's context; the
calls the recording could not answer make the case an ERROR, and prompt drift goes into the
case's ``ReplayReport.llm``.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from opentelemetry.sdk.trace import TracerProvider

from tracereplay.checks.subject import CheckSubject
from tracereplay.checks.tool_results import (
    first_change,
    pair_calls,
    result_diff,
    result_text,
    results_similarity,
)
from tracereplay.convert import convert_trace
from tracereplay.convert.detect import AGENT, detect
from tracereplay.models import (
    AgentResult,
    EvalCase,
    EvalSuite,
    EvaluationResult,
    Run,
    ScoreResult,
    Status,
    ToolCallRecord,
)
from tracereplay.models.fast import build
from tracereplay.replay.agent_loader import (
    AgentCallable,
    AgentResultError,
    to_agent_result,
)
from tracereplay.replay.agent_telemetry import forward_replays
from tracereplay.replay.answering.airtight import ran_live
from tracereplay.replay.answering.llm import (
    LlmMatch,
    LlmMode,
    RecordedCall,
    RecordedLlm,
    answering,
    keeping_calls,
    live_llm,
    llm_error_reason,
    watching_tool_results,
)
from tracereplay.replay.answering.recorded_tools import (
    NoRecordingError,
    RecordedTools,
    ToolMatch,
    render_call,
    replay_error_reason,
)
from tracereplay.replay.capture import TraceCapture, capture_for, to_spans
from tracereplay.replay.framework_loop import AttemptTimedOut, framework_loop, with_timeout
from tracereplay.replay.frameworks.base import count_answers
from tracereplay.replay.frameworks.instrumentors import instrument_installed
from tracereplay.replay.global_provider import global_provider
from tracereplay.replay.raised import (
    environment_failure,
    replays_a_recorded_failure,
    tracereplays_own,
    unreachable,
)
from tracereplay.scoring.outcomes import CaseRun, ReplayReport, ToolResultDrift
from tracereplay.scoring.runner import Job
from tracereplay.scoring.verdicts import error_result, result_from_scores, score_case
from tracereplay.sdk import agent_run, current_setup, run_attributes, tool_interceptor
from tracereplay.sdk import attributes as A
from tracereplay.sdk.agent_run import AgentRunHandle
from tracereplay.spans import Span as TrSpan

#: ``gen_ai.operation.name`` of the wrapper span when the agent opened its own agent run
WRAPPER_OPERATION = "tracereplay.replay"
#: the label of the check result that fails a case whose tool calls the recording cannot answer
REPLAY_CHECK = "replay"


@dataclass
class _AgentCall:
    """What one call of the agent gave: its value or exception, and the spans it left."""

    value: Any = None
    failure: BaseException | None = None
    trace_id: int = 0
    root_span_id: str = ""
    ended: list[TrSpan] = field(default_factory=list)  # spans ended by the time it returned
    inner_agent: bool = False  # it opened an agent run of its own
    spans: list[TrSpan] = field(default_factory=list)  # every span of the replay's trace
    framework_answers: int = 0  # tool executions a framework adapter answered
    #: a plain loop's replay: the tool results its LLM requests carried, per tool
    sent_results: Counter[str] | None = None


@dataclass
class Replayer:
    """Everything a replay attempt needs; ``attempt(job)`` is the runner's attempt function."""

    agent: AgentCallable
    suite: EvalSuite
    eval_run_id: str
    source_runs: Mapping[str, Run]
    result_encodings: Mapping[str, Sequence[str | None]] = field(default_factory=dict)
    #: runs nested under each source run (sub-agents, handoff targets): answered from too
    sub_runs: Mapping[str, Sequence[Run]] = field(default_factory=dict)
    tool_match: ToolMatch = "strict"
    live_tools: bool = False
    timeout_s: float | None = None
    agent_name: str = ""
    #: ``--llm``: "live" calls the agent's model; "recorded" answers it from ``llm_calls``
    llm: LlmMode = "live"
    llm_match: LlmMatch = "order"
    #: the recorded LLM calls each source run's replay is answered from (``--llm recorded``)
    llm_calls: Mapping[str, Sequence[RecordedCall]] = field(default_factory=dict)
    #: ``--llm-until N``: a fork: the first N LLM calls answered from the recording, the rest live
    llm_until: int | None = None

    def __post_init__(self) -> None:
        self._capture: TraceCapture | None = None
        self._provider: TracerProvider | None = None
        setup = current_setup()
        if setup is not None and isinstance(setup.tracer_provider, TracerProvider):
            self._provider = setup.tracer_provider
            self._capture = capture_for(setup.tracer_provider)
        if not self.agent_name:
            self.agent_name = self.suite.agent_name or self.agent.name

    # ------------------------------------------------------------------ one attempt
    def attempt(self, job: Job) -> CaseRun:
        """Replay one case once and score it (never raises; problems are ERROR results)."""
        case = job.case
        started = datetime.now(UTC)
        source = self.source_runs.get(case.source_run_id) if case.source_run_id else None
        calls, encodings = self._recorded_calls(source)
        tools = RecordedTools(
            calls,
            self.tool_match,
            live_tools=self.live_tools,
            has_recording=source is not None,
            encodings=encodings,
            required=len(source.result.tool_calls) if source is not None else 0,
            run_all_live=self.live_tools and self.llm == "recorded",
        )
        llm = self._recorded_llm(source)
        if llm is not None and llm.until is not None:
            tools.live_gate = llm.forked  # no tool runs live before the fork
        t0 = time.perf_counter()
        call = self._run_agent(case, tools, llm)
        duration_ms = (time.perf_counter() - t0) * 1000
        report = tools.report()
        if llm is not None:
            report = report.model_copy(update={"llm": llm.report()})
        if case.history:
            given = "given" if self.agent.takes_history else "not taken"
            report = report.model_copy(update={"history": given})
        replay_run = self._converted_run(call, source)
        if tools.run_all_live and replay_run is not None:
            fork = llm.until if llm is not None else None
            report = with_tool_results(report, calls, replay_run.result.tool_calls, after=fork)
        run_id = replay_run.run_id if replay_run is not None else None
        source_failed = source is not None and source.result.status == "failed"
        result, reason = self._result(call.value, call.failure, report, replay_run, source_failed)
        if not self.live_tools and not report.missing:
            adapters = self.agent.adapters
            live = ran_live(
                call.spans,
                replay_run,
                tools.seen_tools(),
                call.sent_results,
                tool_spans=bool(adapters) and all(a.records_tool_spans for a in adapters),
                frameworks_own=self.agent.tools.frameworks_own
                if not adapters and self.agent.tools is not None
                else None,
            )
            if live is not None:
                result, reason = None, f"tool {live} ran live during replay (no --live-tools)"
        llm_reason = llm_error_reason(report.llm)
        if llm_reason is not None:  # an LLM call the recording could not answer explains the rest
            result, reason = None, llm_reason
        if result is None:
            evaluation = error_result(
                case.id, reason or "no result", duration_ms=duration_ms, run_id=run_id
            )
        else:
            subject = CheckSubject(
                case=case,
                result=result,
                run=_said_once(replay_run, report),
                duration_ms=duration_ms,
                recorded_tool_calls=list(calls) if source is not None else None,
            )
            # checks may call a model for real (an LLM judge), even in an offline replay
            with live_llm() if llm is not None else contextlib.nullcontext():
                evaluation = score_case(
                    case, self.suite.checks, subject, duration_ms=duration_ms, run_id=run_id
                )
            evaluation = with_replay_verdict(evaluation, report, raised=reason)
        return CaseRun(
            case_id=case.id,
            seq=case.seq,
            repetition=job.repetition,
            result=evaluation,
            source_run_id=case.source_run_id,
            response=result.response if result is not None else None,
            tool_calls=list(result.tool_calls) if result is not None else [],
            replay=report,
            started_at=started,
            finished_at=datetime.now(UTC),
        )

    def _recorded_calls(self, source: Run | None) -> tuple[list[Any], list[str | None]]:
        """The tool calls a replay is answered from: the source run's, then those of the runs
        nested under it (a handoff target's tools are recorded on its own run)."""
        if source is None:
            return [], []
        calls: list[Any] = []
        encodings: list[str | None] = []
        for run in (source, *self.sub_runs.get(source.run_id, ())):
            own = list(run.result.tool_calls)
            known = list(self.result_encodings.get(run.run_id) or [])
            calls.extend(own)
            encodings.extend(known + [None] * (len(own) - len(known)))
        return calls, encodings

    def _recorded_llm(self, source: Run | None) -> RecordedLlm | None:
        """``--llm recorded``: the case's LLM, answering from the source run's LLM calls."""
        if self.llm != "recorded":
            return None
        return RecordedLlm(
            self.llm_calls.get(source.run_id, ()) if source is not None else (),
            self.llm_match,
            has_recording=source is not None,
            live_tools=self.live_tools,
            until=self.llm_until,
        )

    def _run_agent(
        self, case: EvalCase, tools: RecordedTools, llm: RecordedLlm | None = None
    ) -> _AgentCall:
        """Call the agent inside a replay agent run, its tools answered by ``tools`` (and its
        LLM requests by ``llm`` when the replay is offline)."""
        marks = {A.RUN_KIND: "replay", A.EVAL_RUN_ID: self.eval_run_id, A.CASE_ID: case.id}
        call = _AgentCall()
        adapters = self.agent.adapters
        with contextlib.ExitStack() as stack:
            stack.enter_context(run_attributes(marks))
            stack.enter_context(tool_interceptor(tools))
            if llm is not None:
                stack.enter_context(answering(llm))
            stack.enter_context(keeping_calls())
            answers = stack.enter_context(count_answers())
            if self._provider is not None and self._capture is not None:
                # the agent's own tracer providers hand over the replay's spans, and
                # frameworks tracing through the global provider reach this one
                forward_replays(self._provider, self._capture)
                stack.enter_context(global_provider(self._provider))
                for adapter in adapters:
                    stack.enter_context(adapter.instrument(self._provider))
                if not adapters:  # the framework's own spans, as its recording has them
                    instrument_installed(self._provider)
            for adapter in adapters:
                stack.enter_context(adapter.intercept(tools))
            sent = None
            if not adapters and self.agent.tools is not None:
                # no framework adapter: the tool functions answered wherever the agent's code
                # holds them, and the tool results its LLM requests carry counted (what
                # escaped them ran live)
                stack.enter_context(self.agent.tools.answering({c.tool_name for c in tools.calls}))
                sent = stack.enter_context(watching_tool_results())
            run = stack.enter_context(
                agent_run(
                    self.agent_name,
                    case.query,
                    context=[d.to_dict() for d in case.context] or None,
                    parameters=case.parameters or None,
                )
            )
            call.trace_id = int(run.trace_id, 16)
            call.root_span_id = run.span_id
            if self._capture is not None:
                self._capture.watch(call.trace_id, marks)
            try:
                call.value = self._call(case.query, case)
            except Exception as exc:
                call.failure = exc
            call.framework_answers = answers.count
            if sent is not None:
                call.sent_results = sent.counts()
            if self._capture is not None:
                call.ended = to_spans(self._capture.take(call.trace_id, keep_watching=True))
            call.inner_agent = any(detect(s)[0] == AGENT for s in call.ended)
            if call.inner_agent:  # the agent's own run is the replay run: step aside
                run.set_attribute(A.OPERATION_NAME, WRAPPER_OPERATION)
            elif call.failure is None:
                _record_response(run, call.value)
            else:
                run.set_error(_describe(call.failure), type(call.failure).__name__)
        return call

    def _call(self, query: str, case: EvalCase) -> Any:
        documents, params, history = case.context, case.parameters or {}, case.history
        if self.agent.shared_loop and self.agent.is_async:
            # a framework's clients (HTTP pools, locks) bind to the event loop they first ran
            # on: every attempt runs on one loop, in this attempt's context
            return framework_loop().run(
                self.agent.call_async(query, documents, params, history), self.timeout_s
            )
        if not self.agent.is_async:
            return self.agent.call_sync(query, documents, params, history)
        coro = self.agent.call_async(query, documents, params, history)
        if self.timeout_s is None:
            return asyncio.run(coro)
        return asyncio.run(with_timeout(coro, self.timeout_s))

    # ------------------------------------------------------------------ the run it made
    def _converted_run(self, call: _AgentCall, source: Run | None = None) -> Run | None:
        """The run the replay made, converted from its spans as ingestion will convert them:
        the wrapper's run, or, when the agent opened agent runs of its own, the one matching
        the case's source run (same agent name, outermost first)."""
        if self._capture is None:
            return None
        spans = call.ended + to_spans(self._capture.take(call.trace_id))
        call.spans = spans
        runs = convert_trace(spans)
        if call.inner_agent:
            own = [r for r in runs if r.root_span_id != call.root_span_id]
            return pick_replay_run(own, source)
        return next((r for r in runs if r.root_span_id == call.root_span_id), None)

    def _result(
        self,
        value: Any,
        failure: BaseException | None,
        report: ReplayReport,
        replay_run: Run | None,
        source_failed: bool = False,
    ) -> tuple[AgentResult | None, str | None]:
        """The result to score and ``None``; ``None`` and the reason the case is an ERROR; or
        the result and the reason it FAILED (the agent raised where its source run did not).

        A call the recording cannot answer is the agent doing something else than recorded (a
        changed or extra tool call): the replay is scored as it went, ended by the exception
        the unanswered call raised when the agent let it through, and ``with_replay_verdict``
        fails it. Without a recording at all (a hand-written case) nothing could be judged, and
        an exception is the agent's behaviour only against a source run that did not end in it
        (``tracereplay.replay.raised`` tells it from the environment's)."""
        missing = replay_error_reason(report)
        if missing is not None and not report.has_recording:
            return None, missing
        if failure is not None:
            if isinstance(failure, AttemptTimedOut):
                return None, str(failure)
            failed = AgentResult(response="", status="failed")
            if replay_run is not None:
                failed = replay_run.result.model_copy(update={"status": "failed"})
            if (
                missing is not None
                or source_failed
                or replays_a_recorded_failure(failure)
                or isinstance(failure, NoRecordingError)
            ):
                # the run ended in an exception as the recorded run did (or as a recorded tool
                # failure makes it): scored as a failed run, FAILED on its status, the verdict
                # recorded mode gives it
                return failed, None
            reason = f"the agent raised {type(failure).__name__}: {_describe(failure)}"
            live = self.llm == "live" or self.llm_until is not None
            if (
                report.has_recording
                and not tracereplays_own(failure)
                and not environment_failure(failure, live)
            ):
                # the agent (its code or its framework) raised where its source run did not:
                # it behaved differently, FAILED for that reason (``with_replay_verdict``)
                return failed, reason
            if self.llm == "live" and unreachable(failure):
                reason += (
                    " (the agent could not reach its LLM: replay it offline with --llm recorded,"
                    " or check the model's endpoint and the network)"
                )
            return None, reason
        try:
            returned = to_agent_result(value)
        except AgentResultError as exc:
            return None, str(exc)
        if replay_run is None:
            return returned, None
        return merge_results(replay_run.result, returned, isinstance(value, AgentResult)), None


def with_tool_results(
    report: ReplayReport,
    recorded: Sequence[ToolCallRecord],
    live: Sequence[ToolCallRecord],
    after: int | None = None,
) -> ReplayReport:
    """The report with the tool-result drift of a replay whose tools ran for real (each result
    against the recorded call it stands for, compared as JSON), and the first LLM call the
    recording then no longer answers: the first whose messages drifted after a result did.
    ``after`` (a fork at LLM call N): the calls of rounds 1..N were answered from the
    recording, not run: paired with the rest (so a later call meets the right recording) but
    neither compared nor counted."""
    drift: list[ToolResultDrift] = []
    compared = 0
    for call, index in zip(live, pair_calls(recorded, live)):
        if after is not None and call.round <= after:
            continue
        compared += 1
        now = result_text(call)
        was = result_text(recorded[index]) if index is not None else None
        if was is not None and results_similarity(was, now, "json") == 1.0:
            continue
        drift.append(
            ToolResultDrift(
                tool=call.tool_name,
                arguments=dict(call.arguments),
                round=call.round,
                recorded_position=index,
                recorded_result=was,
                live_result=now,
                diff=result_diff(was, now) if was is not None else "",
            )
        )
    diverged = None
    if drift and report.llm is not None:
        first = min(d.round for d in drift)
        diverged = next(
            (
                d.round
                for d in report.llm.drift
                if "messages" in d.fields and not d.live and d.round > first
            ),
            None,
        )
    return report.model_copy(
        update={
            "tool_results_compared": compared,
            "tool_result_drift": drift,
            "diverged_at": diverged,
        }
    )


def _said_once(run: Run | None, report: ReplayReport) -> Run | None:
    """The replay run as the checks see it: when it ended in the exception an unanswered tool
    call raised, its error names the exception only, since the ``replay`` check gives the
    whole reason (the ``status`` check would repeat it)."""
    name = NoRecordingError.__name__
    if run is None or not report.missing or not (run.error or "").startswith(name):
        return run
    return run.model_copy(update={"error": f"{name}: a tool call had no recording (see replay)"})


def tool_results_reason(report: ReplayReport) -> str | None:
    """Why a replay whose tools ran for real (``--live-tools`` against recorded decisions)
    FAILED: a tool gave another result than recorded, so the agent met another world than its
    source run and what follows is not comparable with it (None when every result matched)."""
    drift = report.tool_result_drift
    if not drift:
        return None
    first = drift[0]
    call = render_call(first.tool, first.arguments, 100)
    if first.recorded_result is None:
        text = f"tool result changed: {call} has no recorded call to compare with"
    else:
        change = first_change(first.diff, first.recorded_result, first.live_result)
        text = f"tool result changed: {call}: {change}"
    if len(drift) > 1:
        text += f" (and {len(drift) - 1} more changed result(s))"
    if report.diverged_at is not None:
        text += f"; not comparable with the recording from LLM call {report.diverged_at}"
    return text


def with_replay_verdict(
    evaluation: EvaluationResult, report: ReplayReport, raised: str | None = None
) -> EvaluationResult:
    """The case's result with a ``replay`` check FAILED first when some tool call had no
    recording to answer it (the agent called a tool other than recorded, or with other
    arguments), or when the agent raised where its source run did not (``raised``: the agent
    raised ...), or when a tool run for real gave another result than recorded
    (``tool_results_reason``): the case fails on it whatever the agent made of the missing
    answer, and every other check has judged what the replay did."""
    reason = replay_error_reason(report)
    details: dict[str, Any] = {"unanswered": [c.to_dict() for c in report.missing]}
    if reason is None and raised is not None:
        reason, details = raised, {"raised": raised}
    if reason is None:
        reason = tool_results_reason(report)
        details = {"tool_result_drift": [d.to_dict() for d in report.tool_result_drift]}
    if reason is None:
        return evaluation
    failed = build(
        ScoreResult,
        {
            "check": REPLAY_CHECK,
            "status": Status.FAILED,
            "passed": False,
            "score": 0.0,
            "explanation": reason,
            "details": details,
        },
    )
    return result_from_scores(
        evaluation.case_id,
        [failed, *evaluation.checks],
        duration_ms=evaluation.duration_ms,
        run_id=evaluation.run_id,
    )


def merge_results(recorded: AgentResult, returned: AgentResult, full: bool) -> AgentResult:
    """What is scored: the replay run as its spans recorded it (tool calls, rounds, LLM calls),
    with the response the agent returned; an ``AgentResult`` it returned (``full``) also gives
    the status, and whatever the spans did not see (tool calls of uninstrumented tools)."""
    update: dict[str, Any] = {"response": returned.response}
    if full:
        if returned.status != "success" or recorded.status == "success":
            update["status"] = returned.status
        if not recorded.tool_calls and returned.tool_calls:
            update["tool_calls"] = returned.tool_calls
        update["total_rounds"] = recorded.total_rounds or returned.total_rounds
        update["total_llm_calls"] = recorded.total_llm_calls or returned.total_llm_calls
    return recorded.model_copy(update=update)


def pick_replay_run(runs: Sequence[Run], source: Run | None) -> Run | None:
    """Of the runs a replay's own agent spans made, the one the case is about: the outermost
    run with the source run's agent name, else the first top-level run."""
    if not runs:
        return None
    by_id = {r.run_id: r for r in runs}

    def depth(run: Run) -> int:
        n, seen = 0, set()
        while run.parent_run_id in by_id and run.run_id not in seen:
            seen.add(run.run_id)
            run = by_id[run.parent_run_id]
            n += 1
        return n

    ordered = sorted(
        runs, key=lambda r: (depth(r), r.started_at or datetime.min.replace(tzinfo=UTC))
    )
    if source is not None and source.agent_name:
        same = [r for r in ordered if r.agent_name == source.agent_name]
        if same:
            return same[0]
    return ordered[0]


def _describe(exc: BaseException) -> str:
    if isinstance(exc, NoRecordingError):
        return str(exc)
    text = " ".join(str(exc).split())
    return text or type(exc).__name__


def _record_response(run: AgentRunHandle, value: Any) -> None:
    """The wrapper run's response and status from what the agent returned."""
    if isinstance(value, AgentResult):
        run.set_response(value.response)
        if value.status == "max_rounds_exceeded":
            run.mark_max_rounds_exceeded()
        elif value.status == "failed":
            run.set_error("the agent returned status 'failed'", "AgentFailed")
    elif value is not None:
        run.set_response(value)
