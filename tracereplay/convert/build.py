"""Assemble ``Run`` records from the run plans of one trace."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from typing import Any

from tracereplay.convert import extract
from tracereplay.convert.detect import LLM
from tracereplay.convert.info import AgentInfo, LlmInfo, ToolInfo
from tracereplay.convert.messages import last_text
from tracereplay.convert.outcome import run_status, span_error
from tracereplay.convert.records import construct
from tracereplay.convert.tools import LlmRound, SpanCall, tool_calls
from tracereplay.convert.tree import Node, RunPlan
from tracereplay.convert.values import as_name, as_text, decoded, utc
from tracereplay.models.run import AgentResult, Document, LlmCall, Run, ToolCallRecord
from tracereplay.spans import LogRecord, Span

NAMESPACE = uuid.UUID("6f1d8c3e-54a2-5b7e-9c1a-7472616365a1")
"""Namespace of run ids: ``uuid5(NAMESPACE, f"{trace_id}:{root_span_id}")``."""

CONTEXT_KEY = "tracereplay.run.context"
PARAMETERS_KEY = "tracereplay.run.parameters"
KIND_KEY = "tracereplay.run.kind"
EVAL_RUN_KEY = "tracereplay.eval_run_id"
CASE_KEY = "tracereplay.case_id"

Logs = dict[str, list[LogRecord]]


_NAMESPACE_BYTES = NAMESPACE.bytes


def run_id_for(trace_id: str, root_span_id: str) -> str:
    """The stable id of the run headed by ``root_span_id`` in ``trace_id``:
    ``str(uuid.uuid5(NAMESPACE, f"{trace_id}:{root_span_id}"))``, computed without the UUID
    object."""
    name = f"{trace_id}:{root_span_id}".encode()
    digest = bytearray(hashlib.sha1(_NAMESPACE_BYTES + name).digest()[:16])
    digest[6] = (digest[6] & 0x0F) | 0x50  # version 5
    digest[8] = (digest[8] & 0x3F) | 0x80  # RFC 4122 variant
    h = digest.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _llm_info(node: Node, plan: RunPlan, logs: Logs) -> LlmInfo:
    info = extract.llm_info(node.span, node.convention, logs.get(node.span.span_id, ()))
    for inner in plan.inner_llm.get(node.span.span_id, ()):
        if (
            info.input_tokens is None
            or info.output_tokens is None
            or not info.model
            or not info.provider
            or not info.finish_reason
            or not info.input_messages
            or not info.output_messages
        ):
            info.fill_from(
                extract.llm_info(inner.span, inner.convention, logs.get(inner.span.span_id, ()))
            )
    return info


def _attr(root: Span, key: str) -> Any:
    value = root.attributes.get(key)
    return root.resource.get(key) if value is None else value


def _documents(value: Any) -> list[Document]:
    value = decoded(value)
    if isinstance(value, (str, dict)):
        value = [value]
    if not isinstance(value, list):
        return []
    docs = []
    for item in value:
        if isinstance(item, dict):
            name = as_name(item.get("name")) or "context"
            docs.append(construct(Document, name=name, content=as_text(item.get("content"))))
        elif isinstance(item, str):
            docs.append(construct(Document, name="context", content=item))
    return docs


def _parameters(value: Any) -> dict[str, Any]:
    value = decoded(value)
    return value if isinstance(value, dict) else {}


def _optional_id(value: Any) -> str | None:
    return as_name(value) or None


def build_run(plan: RunPlan, logs: Logs, built: dict[int, Run]) -> Run:
    """One run from its plan; ``built`` holds the runs of its sub-agents (built first)."""
    root_node = plan.root
    assert root_node is not None
    root = root_node.span
    trace_id = root.trace_id

    # LLM calls, in start order: round k is the k-th
    llm_nodes = sorted(plan.llm, key=lambda n: (n.span.start_ns, n.span.span_id))
    rounds: list[LlmRound] = []
    llm_calls: list[LlmCall] = []
    models: list[str] = []
    input_tokens = output_tokens = 0
    has_usage = False
    for index, node in enumerate(llm_nodes, start=1):
        span = node.span
        info = _llm_info(node, plan, logs)
        rounds.append(LlmRound(index, span.start_ns, span.end_ns, info))
        if info.model and info.model not in models:
            models.append(info.model)
        if info.input_tokens is not None:
            input_tokens += info.input_tokens
            has_usage = True
        if info.output_tokens is not None:
            output_tokens += info.output_tokens
            has_usage = True
        llm_calls.append(
            construct(
                LlmCall,
                round=index,
                span_id=span.span_id,
                model=info.model,
                provider=info.provider,
                input_tokens=info.input_tokens,
                output_tokens=info.output_tokens,
                duration_ms=span.duration_ms,
                finish_reason=info.finish_reason,
                started_at=utc(span.start_ns),
                input_messages=info.input_messages,
                output_messages=info.output_messages,
            )
        )

    # what the root itself says (an LLM span heading a run has nothing more to say)
    if root_node.role == LLM:
        agent = AgentInfo(name=as_name(root.attributes.get("gen_ai.agent.name")) or root.name)
    else:
        agent = extract.agent_info(root, root_node.convention)
    if not has_usage:
        input_tokens = agent.input_tokens or 0
        output_tokens = agent.output_tokens or 0

    # tool calls: tool spans, sub-agents called as tools, or rebuilt from the messages
    span_calls = []
    for node in plan.tools:
        span = node.span
        span_calls.append(
            SpanCall(
                span.start_ns,
                span.span_id,
                extract.tool_info(span, node.convention),
                span.duration_ms,
                span_error(span),
            )
        )
    for sub in plan.sub_agents:
        sub_run = built.get(id(sub))
        if sub_run is None or sub.wrapped or sub.root is None:
            continue
        span = sub.root.span
        info = ToolInfo(name=sub_run.agent_name, result=sub_run.result.response)
        span_calls.append(
            SpanCall(
                span.start_ns,
                span.span_id,
                info,
                sub_run.duration_ms,
                sub_run.error,
                {"input": sub_run.query} if sub_run.query else {},
            )
        )
    calls: list[ToolCallRecord] = tool_calls(rounds, span_calls, rebuild=not plan.tools)

    # query and response: the root's own input/output, else the LLM messages
    query = agent.query
    if not query and rounds:
        query = last_text(rounds[0].info.input_messages, "user") or None
    response = agent.response
    if not response:
        for r in reversed(rounds):
            response = last_text(r.info.output_messages) or None
            if response:
                break

    # status: the root's error; a run headed by an LLM span fails with its last call
    error = span_error(root)
    if root_node.role == LLM and llm_nodes:
        error = span_error(llm_nodes[-1].span)
    status = run_status(root, error)

    start_ns, end_ns = root.start_ns, root.end_ns
    if plan.group_tops:  # the trace-level run may span several top spans
        for node in (*llm_nodes, *plan.tools):
            start_ns = min(start_ns, node.span.start_ns)
            end_ns = max(end_ns, node.span.end_ns)
    parent = plan.run_parent()
    kind = _attr(root, KIND_KEY)
    return construct(
        Run,
        run_id=run_id_for(trace_id, root.span_id),
        trace_id=trace_id,
        root_span_id=root.span_id,
        parent_run_id=(
            run_id_for(trace_id, parent.root.span.span_id)
            if parent is not None and parent.root is not None
            else None
        ),
        agent_name=agent.name,
        service_name=root.service_name,
        kind="replay" if kind == "replay" else "live",
        convention=_convention(root_node, llm_nodes),
        query=query or agent.raw_input or "",
        context=_documents(root.attributes.get(CONTEXT_KEY)),
        parameters=_parameters(root.attributes.get(PARAMETERS_KEY)),
        models=models,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        started_at=utc(start_ns),
        duration_ms=max(0, end_ns - start_ns) / 1e6,
        error=error,
        eval_run_id=_optional_id(_attr(root, EVAL_RUN_KEY)),
        case_id=_optional_id(_attr(root, CASE_KEY)),
        result=construct(
            AgentResult,
            response=response or agent.raw_output or "",
            tool_calls=calls,
            total_rounds=len(rounds),
            total_llm_calls=len(rounds),
            status=status,
        ),
        llm_calls=llm_calls,
    )


def _convention(root: Node, llm_nodes: list[Node]) -> str:
    if root.convention and root.role != LLM:
        return root.convention
    for node in llm_nodes:
        if node.convention:
            return node.convention
    return root.convention


def build_runs(plans: Sequence[RunPlan], logs: Logs) -> list[Run]:
    """Runs for ``plans`` (sub-agents built before the runs that call them), in plan order."""
    depth: dict[int, int] = {}
    for plan in plans:
        d, p = 0, plan.parent
        while p is not None:
            d, p = d + 1, p.parent
        depth[id(plan)] = d
    built: dict[int, Run] = {}
    for plan in sorted(plans, key=lambda p: -depth[id(p)]):
        built[id(plan)] = build_run(plan, logs, built)
    return [built[id(plan)] for plan in plans]
