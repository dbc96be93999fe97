"""One attempt of one case replayed by an agent command (``eval --agent-cmd``).

A loopback model server (``answering/llm/server.py``) is started for the attempt: with
``--llm recorded`` it answers the command's LLM calls from the case's recording (the base-URL
variables of the usual SDKs point at it: ``server.base_url_env``), and it is always the
command's OTLP/HTTP endpoint (``OTEL_EXPORTER_OTLP_ENDPOINT`` and friends, protocol
``http/protobuf``). The command runs once (``process``); what it sent and what the server
answered become the replay trace (``trace``), converted as ingest will convert it, stored in
the spool, and scored like an in-process replay (``answering/attempt.py``'s verdict helpers).

Its tools run as the agent runs them (tracereplay cannot reach into another process): every
result the run shows (its tool spans, else the tool results its next LLM request sent back) is
compared with the recorded one, as ``--live-tools`` with ``--llm recorded`` does in-process.

The verdict rule (``replay/raised.py``): the command timing out, or not starting, is an ERROR
(nothing was judged); an LLM call the recording could not answer is an ERROR; a command that
exits non-zero where its source run succeeded is the agent behaving differently: FAILED, the
reason its exit status and the end of its standard error (the message, not the traceback); a
source run that failed too is scored as the failed run it is.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from tracereplay.checks.subject import CheckSubject
from tracereplay.convert import convert_trace
from tracereplay.models import (
    AgentResult,
    EvalCase,
    EvalSuite,
    EvaluationResult,
    Run,
    ToolCallRecord,
)
from tracereplay.replay.answering.attempt import (
    merge_results,
    pick_replay_run,
    with_replay_verdict,
    with_tool_results,
)
from tracereplay.replay.answering.llm import LlmMatch, LlmMode, RecordedCall, llm_error_reason
from tracereplay.replay.answering.llm.server import LlmServer, ServedCase
from tracereplay.replay.command.process import Finished, run_command
from tracereplay.replay.command.received import Received
from tracereplay.replay.command.served_calls import ServedCalls
from tracereplay.replay.command.trace import CommandTrace, command_trace, spool
from tracereplay.scoring.outcomes import CaseRun, ReplayReport
from tracereplay.scoring.runner import Job
from tracereplay.scoring.verdicts import error_result, score_case
from tracereplay.sdk import attributes as A


def otlp_env(url: str) -> dict[str, str]:
    """The variables that point an OpenTelemetry SDK's OTLP/HTTP exporter at ``url``."""
    url = url.rstrip("/")
    return {
        "OTEL_EXPORTER_OTLP_ENDPOINT": url,
        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": f"{url}/v1/traces",
        "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": f"{url}/v1/logs",
        # a per-signal protocol of the environment (grpc) would win over the generic one
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf",
        "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL": "http/protobuf",
    }


#: the variable of each API's base URL the usual SDKs read (``server.base_url_env``'s)
_BASE_URLS = {
    "chat": "OPENAI_BASE_URL",
    "responses": "OPENAI_BASE_URL",
    "anthropic": "ANTHROPIC_BASE_URL",
    "gemini": "GOOGLE_GEMINI_BASE_URL",
    "cohere": "CO_API_URL",
}


def upstream_of(environ: Mapping[str, str]) -> dict[str, str]:
    """Where the calls past an ``--llm-until`` fork go: the base URLs the command's environment
    had before the eval pointed them at the server (else each API's own)."""
    return {api: environ[name] for api, name in _BASE_URLS.items() if environ.get(name)}


@dataclass
class CommandReplayer:
    """Everything a command's attempt needs; ``attempt(job)`` is the runner's attempt function."""

    argv: Sequence[str]
    suite: EvalSuite
    eval_run_id: str
    db: Path
    source_runs: Mapping[str, Run]
    sub_runs: Mapping[str, Sequence[Run]] = field(default_factory=dict)
    timeout_s: float | None = None
    llm: LlmMode = "live"
    llm_match: LlmMatch = "order"
    llm_until: int | None = None
    llm_calls: Mapping[str, Sequence[RecordedCall]] = field(default_factory=dict)
    service_name: str = ""
    agent_name: str = ""

    def __post_init__(self) -> None:
        if not self.agent_name:
            self.agent_name = self.suite.agent_name or os.path.basename(self.argv[0])

    def attempt(self, job: Job) -> CaseRun:
        """Run the command for one case and score the run it made (never raises)."""
        case = job.case
        started = datetime.now(UTC)
        source = self.source_runs.get(case.source_run_id) if case.source_run_id else None
        received, served = Received(), ServedCalls()
        server = LlmServer(
            match=self.llm_match,
            until=self.llm_until,
            upstream=upstream_of(os.environ),
            telemetry=received.handle,
            on_answer=served,
        )
        start_ns = time.time_ns()
        with server:
            llm = None
            if self.llm == "recorded":
                calls = self.llm_calls.get(source.run_id, ()) if source is not None else ()
                served_case = ServedCase(
                    case.id, case.seq, case.query, calls, has_recording=source is not None
                )
                llm = server.serve(served_case)
            finished = run_command(self.argv, case.query, self._env(server), self.timeout_s)
        spans, logs = received.taken()
        marks = {A.RUN_KIND: "replay", A.EVAL_RUN_ID: self.eval_run_id, A.CASE_ID: case.id}
        trace = command_trace(
            spans,
            logs,
            served,
            agent_name=self.agent_name,
            query=case.query,
            answer=finished.answer if finished.ok else None,
            error=None if finished.ok else _failure(finished, self.timeout_s),
            marks=marks,
            start_ns=start_ns,
            service_name=self.service_name,
        )
        spool(self.db, trace)
        replay_run = _replay_run(trace, source)
        recorded = _recorded_tool_calls(source, self.sub_runs)
        report = ReplayReport(has_recording=source is not None)
        if case.history:  # a command gets the question alone: said, as for any such agent
            report = report.model_copy(update={"history": "not taken"})
        if llm is not None:
            report = report.model_copy(update={"llm": llm.report()})
        if replay_run is not None and source is not None:
            live = replay_run.result.tool_calls
            report = with_tool_results(report, recorded, live, after=self.llm_until)
            report = report.model_copy(update={"tools_live": len(live)})
        evaluation = self._judge(case, finished, report, replay_run, source, recorded)
        return CaseRun(
            case_id=case.id,
            seq=case.seq,
            repetition=job.repetition,
            result=evaluation,
            source_run_id=case.source_run_id,
            response=finished.answer if finished.ok else None,
            tool_calls=list(replay_run.result.tool_calls) if replay_run is not None else [],
            replay=report,
            started_at=started,
            finished_at=datetime.now(UTC),
        )

    def _env(self, server: LlmServer) -> dict[str, str]:
        """The command's environment: this process's, its exporter pointed at the server (no
        metrics unless it asks), and with ``--llm recorded`` its LLM clients too. The API keys
        the environment has are kept (the calls past an ``--llm-until`` fork are sent upstream
        with them); placeholders stand in for the missing ones."""
        env = dict(os.environ)
        env.setdefault("OTEL_METRICS_EXPORTER", "none")
        env.update(otlp_env(server.url))
        if self.llm == "recorded":
            for name, value in server.env().items():
                if name.endswith("_KEY"):
                    env.setdefault(name, value)
                else:
                    env[name] = value
        return env

    def _judge(
        self,
        case: EvalCase,
        finished: Finished,
        report: ReplayReport,
        replay_run: Run | None,
        source: Run | None,
        recorded: Sequence[ToolCallRecord],
    ) -> EvaluationResult:
        """The case's result by the one verdict rule (see the module's docstring)."""
        duration_ms = finished.duration_ms
        run_id = replay_run.run_id if replay_run is not None else None
        reason: str | None = None
        raised: str | None = None
        result: AgentResult | None = None
        if finished.timed_out or finished.start_error:  # nothing to judge
            reason = _failure(finished, self.timeout_s)
        elif not finished.ok:
            failed = AgentResult(response="", status="failed")
            if replay_run is not None:
                failed = replay_run.result.model_copy(update={"status": "failed"})
            if source is None:
                reason = _failure(finished, self.timeout_s)
            elif source.result.status == "failed":
                result = failed  # ended in failure as its source run did: scored as failed
            else:
                result, raised = failed, _failure(finished, self.timeout_s)
        else:
            answer = AgentResult(response=finished.answer)
            result = (
                answer if replay_run is None else merge_results(replay_run.result, answer, False)
            )
        llm_reason = llm_error_reason(report.llm)
        if llm_reason is not None:  # a call the recording could not answer explains the rest
            result, reason = None, llm_reason
        if result is None:
            return error_result(
                case.id, reason or "no result", duration_ms=duration_ms, run_id=run_id
            )
        subject = CheckSubject(
            case=case,
            result=result,
            run=replay_run,
            duration_ms=duration_ms,
            recorded_tool_calls=list(recorded) if source is not None else None,
        )
        evaluation = score_case(
            case, self.suite.checks, subject, duration_ms=duration_ms, run_id=run_id
        )
        return with_replay_verdict(evaluation, report, raised=raised)


def _failure(finished: Finished, timeout_s: float | None) -> str:
    """Why the command failed, in one line."""
    if finished.timed_out:
        return f"the agent command timed out after {timeout_s or 0:g}s"
    if finished.start_error:
        return f"the agent command could not start: {finished.start_error}"
    tail = finished.stderr_tail()
    status = f"the agent command exited with status {finished.returncode}"
    return f"{status}: {tail}" if tail else status


def _replay_run(trace: CommandTrace, source: Run | None) -> Run | None:
    """The run the case is about: the wrapper's, or the command's own agent run."""
    runs = convert_trace(trace.spans, trace.logs)
    if trace.inner_agent:
        own = [r for r in runs if r.root_span_id != trace.root_span_id]
        return pick_replay_run(own, source)
    return next((r for r in runs if r.root_span_id == trace.root_span_id), None)


def _recorded_tool_calls(
    source: Run | None, sub_runs: Mapping[str, Sequence[Run]]
) -> list[ToolCallRecord]:
    """The recorded tool calls a command's are compared with: the source run's, then those of
    the runs nested under it."""
    if source is None:
        return []
    runs = (source, *sub_runs.get(source.run_id, ()))
    return [c for r in runs for c in r.result.tool_calls]
