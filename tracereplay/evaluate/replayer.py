"""Replay mode: one attempt of one case = call the agent inside a tracereplay agent run, with its
``@tracereplay.tool`` calls answered from the source run, then score the run it made.

The agent run is the SDK's ``agent_run`` carrying ``tracereplay.run.kind = replay``,
``tracereplay.eval_run_id`` and ``tracereplay.case_id``; its spans go to the store like any run
(the spool) and are also captured in-process, converted, and scored right away. When the agent
opens its own agent run (``@tracereplay.agent_run`` or ``with agent_run(...)``) that run is the
replay run, marked the same way: the wrapper then steps aside (it is no agent span any more),
so one replay gives one run.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from opentelemetry.sdk.trace import TracerProvider

from tracereplay.convert import convert_trace
from tracereplay.convert.detect import AGENT, detect
from tracereplay.evaluate.agent_loader import AgentCallable, AgentResultError, to_agent_result
from tracereplay.evaluate.capture import TraceCapture, capture_for, to_spans
from tracereplay.evaluate.outcomes import CaseRun, ReplayReport
from tracereplay.evaluate.replay import (
    NoRecordingError,
    RecordedTools,
    ToolMatch,
    replay_error_reason,
)
from tracereplay.evaluate.runner import Job
from tracereplay.evaluate.scoring import error_result, score_case
from tracereplay.evaluate.subject import CheckSubject
from tracereplay.models import AgentResult, EvalCase, EvalSuite, Run
from tracereplay.sdk import agent_run, current_setup, run_attributes, tool_interceptor
from tracereplay.sdk import attributes as A
from tracereplay.sdk.agent_run import AgentRunHandle
from tracereplay.spans import Span as TrSpan

#: ``gen_ai.operation.name`` of the wrapper span when the agent opened its own agent run
WRAPPER_OPERATION = "tracereplay.replay"


@dataclass
class _AgentCall:
    """What one call of the agent gave: its value or exception, and the spans it left."""

    value: Any = None
    failure: BaseException | None = None
    trace_id: int = 0
    root_span_id: str = ""
    ended: list[TrSpan] = field(default_factory=list)  # spans ended by the time it returned
    inner_agent: bool = False  # it opened an agent run of its own


@dataclass
class Replayer:
    """Everything a replay attempt needs; ``attempt(job)`` is the runner's attempt function."""

    agent: AgentCallable
    suite: EvalSuite
    eval_run_id: str
    source_runs: Mapping[str, Run]
    result_encodings: Mapping[str, Sequence[str | None]] = field(default_factory=dict)
    tool_match: ToolMatch = "strict"
    live_tools: bool = False
    timeout_s: float | None = None
    agent_name: str = ""

    def __post_init__(self) -> None:
        self._capture: TraceCapture | None = None
        setup = current_setup()
        if setup is not None and isinstance(setup.tracer_provider, TracerProvider):
            self._capture = capture_for(setup.tracer_provider)
        if not self.agent_name:
            self.agent_name = self.suite.agent_name or self.agent.name

    # ------------------------------------------------------------------ one attempt
    def attempt(self, job: Job) -> CaseRun:
        """Replay one case once and score it (never raises; problems are ERROR results)."""
        case = job.case
        started = datetime.now(timezone.utc)
        source = self.source_runs.get(case.source_run_id) if case.source_run_id else None
        tools = RecordedTools(
            source.result.tool_calls if source is not None else [],
            self.tool_match,
            live_tools=self.live_tools,
            has_recording=source is not None,
            encodings=self.result_encodings.get(source.run_id) if source is not None else None,
        )
        t0 = time.perf_counter()
        call = self._run_agent(case, tools)
        duration_ms = (time.perf_counter() - t0) * 1000
        report = tools.report()
        replay_run = self._converted_run(call)
        run_id = replay_run.run_id if replay_run is not None else None
        result, reason = self._result(call.value, call.failure, report, replay_run)
        if result is None:
            evaluation = error_result(
                case.id, reason or "no result", duration_ms=duration_ms, run_id=run_id
            )
        else:
            subject = CheckSubject(
                case=case, result=result, run=replay_run, duration_ms=duration_ms
            )
            evaluation = score_case(
                case, self.suite.checks, subject, duration_ms=duration_ms, run_id=run_id
            )
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
            finished_at=datetime.now(timezone.utc),
        )

    def _run_agent(self, case: EvalCase, tools: RecordedTools) -> _AgentCall:
        """Call the agent inside a replay agent run, its tools answered by ``tools``."""
        marks = {A.RUN_KIND: "replay", A.EVAL_RUN_ID: self.eval_run_id, A.CASE_ID: case.id}
        call = _AgentCall()
        with (
            run_attributes(marks),
            tool_interceptor(tools),
            agent_run(
                self.agent_name,
                case.query,
                context=[d.to_dict() for d in case.context] or None,
                parameters=case.parameters or None,
            ) as run,
        ):
            call.trace_id = int(run.trace_id, 16)
            call.root_span_id = run.span_id
            if self._capture is not None:
                self._capture.watch(call.trace_id)
            try:
                call.value = self._call(case.query, case)
            except Exception as exc:
                call.failure = exc
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
        documents, params = case.context, case.parameters or {}
        if not self.agent.is_async:
            return self.agent.call_sync(query, documents, params)
        coro = self.agent.call_async(query, documents, params)
        if self.timeout_s is None:
            return asyncio.run(coro)
        return asyncio.run(_with_timeout(coro, self.timeout_s))

    # ------------------------------------------------------------------ the run it made
    def _converted_run(self, call: _AgentCall) -> Run | None:
        """The run the replay made, converted from its spans as ingestion will convert them."""
        if self._capture is None:
            return None
        spans = call.ended + to_spans(self._capture.take(call.trace_id))
        runs = convert_trace(spans)
        if call.inner_agent:
            top = [
                r for r in runs if r.parent_run_id is None and r.root_span_id != call.root_span_id
            ]
            return top[0] if top else None
        return next((r for r in runs if r.root_span_id == call.root_span_id), None)

    def _result(
        self,
        value: Any,
        failure: BaseException | None,
        report: ReplayReport,
        replay_run: Run | None,
    ) -> tuple[AgentResult | None, str | None]:
        """The result to score, or the reason the case is an ERROR."""
        missing = replay_error_reason(report)
        if missing is not None:
            return None, missing
        if failure is not None:
            if isinstance(failure, AttemptTimedOut):
                return None, str(failure)
            return None, f"the agent raised {type(failure).__name__}: {_describe(failure)}"
        try:
            returned = to_agent_result(value)
        except AgentResultError as exc:
            return None, str(exc)
        if replay_run is None:
            return returned, None
        return merge_results(replay_run.result, returned, isinstance(value, AgentResult)), None


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


class AttemptTimedOut(Exception):
    """An async agent did not finish within the timeout (it was cancelled)."""


async def _with_timeout(coro: Any, timeout_s: float) -> Any:
    loop = asyncio.get_running_loop()
    start = loop.time()
    try:
        return await asyncio.wait_for(coro, timeout_s)
    except asyncio.TimeoutError:
        if loop.time() - start < timeout_s:
            raise  # the agent's own TimeoutError, not ours
        raise AttemptTimedOut(f"timed out after {timeout_s:g}s") from None


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
