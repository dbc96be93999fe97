"""A command's replay as one trace: what it sent and what the server answered, under one
wrapper agent span, as ``answering/attempt.py``'s ``agent_run`` wraps an in-process agent.

The command's spans keep their ids but move into the wrapper's trace (its exporter may have
sent several traces: a loop whose instrumentation traces each LLM call alone), their roots
under the wrapper span; every span carries the replay marks (run kind, eval run, case), as
``replay/capture.py`` stamps an in-process replay's. Where the command sent spans of an agent
run of its own (the Vercel AI SDK's ``ai.generateText``) the wrapper steps aside
(``gen_ai.operation.name`` ``tracereplay.replay``) and that run is the replay run; where it sent
no LLM call, the calls the server answered (``served_calls``) are the run's; where it did,
each of its LLM spans (in order) is marked with what answered the server's call of that place.

``spool(db, trace)`` stores the trace as OTLP/JSON in the store's spool, like every replay's.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import orjson

from tracereplay import semconv
from tracereplay.convert.detect import AGENT, LLM, detect
from tracereplay.otlp.json_encode import encode_logs_json, encode_traces_json
from tracereplay.replay.command.served_calls import ServedCalls
from tracereplay.sdk import attributes as A
from tracereplay.sdk.messages import text_part
from tracereplay.spans import STATUS_ERROR, LogRecord, Span
from tracereplay.store.paths import spool_dir
from tracereplay.store.spool import KIND_LOGS_JSON, KIND_TRACES_JSON, SpoolWriter

#: ``gen_ai.operation.name`` of the wrapper when the command's own agent span is the run
WRAPPER_OPERATION = "tracereplay.replay"


@dataclass
class CommandTrace:
    """The replay's spans (the wrapper first) and what they hold."""

    spans: list[Span] = field(default_factory=list)
    trace_id: str = ""
    root_span_id: str = ""
    #: the command sent an agent span of its own: its run is the replay run
    inner_agent: bool = False
    #: the command sent spans of its LLM calls (else the server's answered calls stand in)
    sent_llm_calls: bool = False
    #: the command's log records, moved with their spans
    logs: list[LogRecord] = field(default_factory=list)


def command_trace(
    received: Sequence[Span],
    logs: Sequence[LogRecord],
    served: ServedCalls,
    *,
    agent_name: str,
    query: str,
    answer: str | None,
    error: str | None,
    marks: Mapping[str, Any],
    start_ns: int,
    service_name: str = "",
) -> CommandTrace:
    """The replay trace of one command run. ``served``: the calls the model server answered it;
    ``answer``: its standard output (None: it failed, ``error`` says how). The spans tracereplay
    makes (the wrapper, the served calls) are of ``service_name``, the source runs' service."""
    trace_id, root_id = secrets.token_hex(16), secrets.token_hex(8)
    resource: dict[str, Any] = {"service.name": service_name} if service_name else {}
    ids = {s.span_id for s in received}
    moved = [
        replace(
            s,
            trace_id=trace_id,
            parent_span_id=s.parent_span_id if s.parent_span_id in ids else root_id,
            attributes={**s.attributes, **marks},
        )
        for s in received
    ]
    traces = {s.trace_id for s in received}
    moved_logs = [replace(r, trace_id=trace_id) if r.trace_id in traces else r for r in logs]
    roles = [detect(s)[0] for s in moved]
    inner = AGENT in roles
    sent_llm = LLM in roles
    if sent_llm:  # each LLM span says what answered it, as the in-process replay's do
        llm_spans = sorted(
            (i for i, role in enumerate(roles) if role == LLM), key=lambda i: moved[i].start_ns
        )
        for i, source in zip(llm_spans, served.sources()):
            moved[i].attributes.setdefault(semconv.LLM_SOURCE, source)
    extra = [] if sent_llm else served.spans(trace_id, root_id, service_name)
    extra = [replace(s, attributes={**s.attributes, **marks}, resource=resource) for s in extra]
    attrs: dict[str, Any] = {
        A.OPERATION_NAME: WRAPPER_OPERATION if inner else A.OP_INVOKE_AGENT,
        A.AGENT_NAME: agent_name,
        A.INPUT_MESSAGES: orjson.dumps([{"role": "user", "parts": [text_part(query)]}]).decode(),
        **marks,
    }
    if answer is not None and not inner:
        message = {"role": "assistant", "parts": [text_part(answer)], "finish_reason": "stop"}
        attrs[A.OUTPUT_MESSAGES] = orjson.dumps([message]).decode()
    end_ns = max([time.time_ns(), *(s.end_ns for s in (*moved, *extra))])
    wrapper = Span(
        trace_id=trace_id,
        span_id=root_id,
        parent_span_id="",
        name=f"{A.OP_INVOKE_AGENT} {agent_name}",
        kind=1,  # INTERNAL
        start_ns=min([start_ns, *(s.start_ns for s in (*moved, *extra))]),
        end_ns=end_ns,
        status_code=STATUS_ERROR if error is not None and not inner else 0,
        status_message=(error or "") if not inner else "",
        attributes=attrs,
        service_name=service_name,
        scope_name="tracereplay",
        resource=resource,
    )
    return CommandTrace([wrapper, *moved, *extra], trace_id, root_id, inner, sent_llm, moved_logs)


def spool(db: Path, trace: CommandTrace) -> None:
    """The trace (its spans, and the command's log records: GenAI events of an older
    instrumentation join their spans by id) into the store's spool, drained into the store by
    the next command."""
    records = [(KIND_TRACES_JSON, encode_traces_json(trace.spans))]
    if trace.logs:
        records.append((KIND_LOGS_JSON, encode_logs_json(trace.logs)))
    writer = SpoolWriter(spool_dir(db))
    try:
        writer.append_many(records)
    finally:
        writer.close()
